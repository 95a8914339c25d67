package rank

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

func TestTerms(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		// Words: lower-cased, stopwords dropped, plurals folded, in order.
		{"The Wallets of Bob", []string{"wallet", "bob"}},
		{"status bus glass", []string{"status", "bus", "glass"}},
		{"Größe überall", []string{"größe", "überall"}},
		// Identifiers whole and marked, after the words; their parts
		// are words too.
		{"ticket INC-4821, see (audit_log.v2)", []string{"ticket", "inc", "4821", "see", "audit", "log", "v2", "#inc-4821", "#audit_log.v2"}},
		{"owner= 0xAbC1 of vault-7", []string{"owner", "0xabc1", "vault", "7", "#0xabc1", "#vault-7"}},
		// 17 is a word, never part of 0x17ab or 170.
		{"batch 17 hash 0x17ab", []string{"batch", "17", "hash", "0x17ab", "#0x17ab"}},
		{"a-b 12 ok.", []string{"b", "12", "ok", "#a-b"}},
	} {
		if got := Terms(tc.text, nil); !slices.Equal(got, tc.want) {
			t.Errorf("Terms(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
	for name, want := range map[string]string{"Bob Smith": "#bob smith", " (ops) ": "#ops", "  ": ""} {
		if got := Identifier(name); got != want {
			t.Errorf("Identifier(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestIndex: Search and Match agree on what matches and how it scores;
// Search keeps the k best, rarer terms weighing more, and a removed or
// refused document is never returned.
func TestIndex(t *testing.T) {
	ix := NewIndex(0)
	texts := []string{
		"deploy wallet 0x9fa3 on mainnet",
		"billing invoices go out monthly",
		"the deploy went out",
		"wallet rotation for billing",
		"deploy deploy deploy",
	}
	for _, s := range texts {
		ix.Add(Terms(s, nil))
	}
	q := []Term{{"deploy", 1}, {"wallet", 1}, {"#0x9fa3", 2}}
	hits := ix.Search(q, 2, nil)
	if len(hits) != 2 || hits[0].Doc != 0 {
		t.Fatalf("Search = %v, want doc 0 first of 2", hits)
	}
	matches := ix.Match(q, 2)
	byDoc := map[int32]Match{}
	for _, m := range matches {
		byDoc[m.Doc] = m
	}
	if _, ok := byDoc[1]; len(byDoc) != 4 || ok || byDoc[0].Count != 2 || byDoc[2].Count != 1 || byDoc[3].Count != 1 {
		t.Errorf("Match = %v, want docs 0, 2, 3, 4 with their counts", matches)
	}
	for _, h := range hits {
		if m := byDoc[h.Doc]; math.Abs(m.Score-h.Score) > 1e-4*m.Score {
			t.Errorf("doc %d: Search score %v, Match score %v", h.Doc, h.Score, m.Score)
		}
	}
	ix.Remove(0)
	ix.Remove(0) // twice is once
	if ix.Live() != 4 || ix.Docs() != 5 || ix.Alive(0) {
		t.Errorf("after Remove: live %d docs %d alive(0) %v, want 4 5 false", ix.Live(), ix.Docs(), ix.Alive(0))
	}
	for _, h := range ix.Search(q, 5, func(doc int32) bool { return doc != 4 }) {
		if h.Doc == 0 || h.Doc == 4 {
			t.Errorf("Search returned doc %d, removed or refused", h.Doc)
		}
	}
	for _, m := range ix.Match(q, 2) {
		if m.Doc == 0 {
			t.Errorf("Match returned removed doc 0")
		}
	}
}

// TestSearchSkipsCommonTerms: a term in most documents of a large index
// is left out; a rarer one still finds its documents.
func TestSearchSkipsCommonTerms(t *testing.T) {
	ix := NewIndex(0)
	for i := range 3 * CommonTerm {
		ix.Add(Terms(fmt.Sprintf("asked item%d", i), nil))
	}
	if hs := ix.Search([]Term{{"asked", 1}}, 5, nil); len(hs) != 0 {
		t.Errorf("Search(asked) = %d hits, want none: the term is in every document", len(hs))
	}
	if hs := ix.Search([]Term{{"asked", 1}, {"item42", 1}}, 5, nil); len(hs) != 1 || hs[0].Doc != 42 {
		t.Errorf("Search(asked item42) = %v, want doc 42", hs)
	}
}
