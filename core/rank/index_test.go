package rank

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
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

// TestSearchAgreesWithMatch: MaxScore pruning never changes the answer.
// Over corpora of skewed term frequencies, with documents removed and
// refused, Search's top k are the k best of what Match scores without
// pruning, for k from one to all.
func TestSearchAgreesWithMatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 200 {
		ix := NewIndex(0)
		docs := 50 + rng.IntN(400)
		for range docs {
			var terms []string
			for range 1 + rng.IntN(12) {
				// Term n is about n times rarer than term 0, and
				// repeated up to 4 times.
				tn := fmt.Sprintf("t%d", int(math.Floor(1/(rng.Float64()+0.02))))
				for range 1 + rng.IntN(4) {
					terms = append(terms, tn)
				}
			}
			ix.Add(terms)
		}
		for range rng.IntN(docs / 4) {
			ix.Remove(int32(rng.IntN(docs)))
		}
		var accept func(int32) bool
		if round%2 == 1 {
			accept = func(doc int32) bool { return doc%3 != 0 }
		}
		for _, k := range []int{1, 2, 3, 5, 20, docs} {
			var q []Term
			for range 1 + rng.IntN(6) {
				q = append(q, Term{fmt.Sprintf("t%d", rng.IntN(12)), float64(1 + rng.IntN(5))})
			}
			if got := ix.Search(q, 0, accept); got != nil {
				t.Fatalf("Search(k=0) = %v, want nothing", got)
			}
			var want []Match
			for _, m := range ix.Match(q, 0) {
				if accept == nil || accept(m.Doc) {
					want = append(want, m)
				}
			}
			slices.SortFunc(want, func(a, b Match) int { return cmp.Compare(b.Score, a.Score) })
			got := ix.Search(q, k, accept)
			if len(got) != min(k, len(want)) {
				t.Fatalf("round %d, k %d, query %v: Search = %d hits, want %d", round, k, q, len(got), min(k, len(want)))
			}
			scores := map[int32]float64{}
			for _, m := range want {
				scores[m.Doc] = m.Score
			}
			for i, h := range got {
				s, ok := scores[h.Doc]
				if !ok || math.Abs(s-want[i].Score) > 1e-4*want[i].Score || math.Abs(h.Score-s) > 1e-4*s {
					t.Fatalf("round %d, k %d, query %v: hit %d = doc %d scored %v (Match: %v, %v), want a score of %v",
						round, k, q, i, h.Doc, h.Score, s, ok, want[i].Score)
				}
				if i > 0 && h.Score > got[i-1].Score {
					t.Fatalf("round %d: hits out of order: %v", round, got)
				}
			}
		}
	}
}

// TestBM25 pins the formula's values.
func TestBM25(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"IDF(10, 1)", IDF(10, 1), math.Log(1 + 9.5/1.5)},
		{"IDF(4, 4)", IDF(4, 4), math.Log(1 + 0.5/4.5)},
		{"IDF floor", IDF(1, 5), 0.01},
		{"Score at average length", Score(1, 1, 5, 5), 1},
		{"Score of a long document", Score(1, 2, 10, 5), 4.4 / (2 + 1.2*(0.25+0.75*2))},
		{"Score weighted", Score(3, 1, 5, 5), 3},
		{"Bound", Bound(2), 4.4},
	} {
		if math.Abs(tc.got-tc.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	ix := NewIndex(0)
	ix.Add([]string{"a", "b"})
	ix.Add([]string{"a", "a", "c", "d"})
	score := ix.Scorer() // average length 3
	if got, want := score(1, ix.Postings("a")[1]), Score(1, 2, 4, 3); got != want {
		t.Errorf("Scorer = %v, want %v", got, want)
	}
	if got, want := ix.Weight(1, 2), 2*IDF(2, 1); got != want {
		t.Errorf("Weight = %v, want %v", got, want)
	}
	ix.Remove(1)
	if got, want := ix.Scorer()(1, ix.Postings("b")[0]), Score(1, 1, 2, 2); got != want {
		t.Errorf("Scorer after a removal = %v, want %v: the average is of live documents", got, want)
	}
}

// TestWordShapes pins where words and identifiers begin and end.
func TestWordShapes(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"AZ az 09 @[`{ /1:", []string{"az", "az", "09", "1"}},
		{"ÄÖÜ straße", []string{"äöü", "straße"}},
		{"bugs bus gas class status chess", []string{"bug", "bus", "gas", "class", "status", "chess"}},
		{"runs Apple Zed", []string{"run", "apple", "zed"}},
		{"abc", []string{"abc"}},
	} {
		if got := Words(tc.text, nil); !slices.Equal(got, tc.want) {
			t.Errorf("Words(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
	for s, want := range map[string]bool{
		"ab1": true, "a1": false, "A_B": true, "__-": false, "1.2": true, "é1x": true, "abc": false, "123": false,
		"v٢x": true, "a b1": false, "0x9": true, "Z-9": true, "a~1": false,
	} {
		if got := IsIdentifier(s); got != want {
			t.Errorf("IsIdentifier(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestCommonTermBoundaries: a term is left out only when it is in more
// than CommonTerm documents and in more than half of them.
func TestCommonTermBoundaries(t *testing.T) {
	index := func(docs int, terms map[string]int) *Index {
		ix := NewIndex(docs)
		for i := range docs {
			var ts []string
			for term, n := range terms {
				if i < n {
					ts = append(ts, term)
				}
			}
			ix.Add(append(ts, fmt.Sprintf("d%d", i)))
		}
		return ix
	}
	for _, tc := range []struct {
		docs, holding int
		kept          bool
	}{
		{1500, CommonTerm, true},                      // not more than CommonTerm
		{1500, CommonTerm + 1, false},                 // more than both
		{2 * (CommonTerm + 1), CommonTerm + 1, true},  // exactly half
		{2 * (CommonTerm + 1), CommonTerm + 2, false}, // more than half
	} {
		ix := index(tc.docs, map[string]int{"x": tc.holding})
		if got := len(ix.Search([]Term{{"x", 1}}, 1, nil)) == 1; got != tc.kept {
			t.Errorf("a term in %d of %d documents: kept %v, want %v", tc.holding, tc.docs, got, tc.kept)
		}
	}
}
