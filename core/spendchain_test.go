package core

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// chainOf appends one entry per state of call x/1, then one for x/2.
func chainOf(t *testing.T) ([]LedgerEntry, map[string][]byte) {
	t.Helper()
	var (
		out     []LedgerEntry
		seq     uint64
		hash    string
		current = map[string][]byte{}
	)
	add := func(s Spend) {
		e, _, err := NextEntry(seq, hash, s)
		if err != nil {
			t.Fatal(err)
		}
		out, seq, hash = append(out, e), e.Seq, e.Hash
		current[s.ID] = []byte(e.Record)
	}
	s := Spend{ID: "x/1", IntentID: "x", Amount: "5", Currency: "USDC", Created: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	for _, st := range []SpendState{SpendPlanned, SpendAsked, SpendCalling, SpendCompleted} {
		s.State = st
		add(s)
	}
	add(Spend{ID: "x/2", IntentID: "x", State: SpendPlanned})
	return out, current
}

func checkChain(entries []LedgerEntry, current map[string][]byte) error {
	var c ChainCheck
	for _, e := range entries {
		c.Entry(e)
	}
	for id, rec := range current {
		c.Record(id, rec)
	}
	_, err := c.Done()
	return err
}

// TestChainCheck: an untouched chain verifies; each way of changing it
// is named at the first entry (or call) it touches.
func TestChainCheck(t *testing.T) {
	tests := []struct {
		name   string
		change func(es []LedgerEntry, cur map[string][]byte) []LedgerEntry
		seq    uint64
		spend  string
		word   string
	}{
		{name: "untouched", change: func(es []LedgerEntry, _ map[string][]byte) []LedgerEntry { return es }},
		{name: "one byte of a record", change: func(es []LedgerEntry, _ map[string][]byte) []LedgerEntry {
			es[1].Record = strings.Replace(es[1].Record, `"5"`, `"9"`, 1)
			return es
		}, seq: 2, spend: "x/1", word: "entry 2 (spend x/1): edited: its content no longer matches its hash"},
		{name: "a state", change: func(es []LedgerEntry, _ map[string][]byte) []LedgerEntry {
			es[2].State = SpendDenied
			return es
		}, seq: 3, word: "edited"},
		{name: "removed", change: func(es []LedgerEntry, _ map[string][]byte) []LedgerEntry {
			return append(es[:1:1], es[2:]...)
		}, seq: 2, word: "entry 2: missing: the chain goes from entry 1 to entry 3, so entry 2 was removed"},
		{name: "two removed", change: func(es []LedgerEntry, _ map[string][]byte) []LedgerEntry {
			return append(es[:1:1], es[3:]...)
		}, seq: 2, word: "entry 2: missing: the chain goes from entry 1 to entry 4, so entries 2 to 3 were removed"},
		{name: "removed and renumbered", change: func(es []LedgerEntry, _ map[string][]byte) []LedgerEntry {
			es = append(es[:1:1], es[2:]...)
			for i := range es {
				es[i].Seq = uint64(i + 1)
			}
			return es
		}, seq: 2, word: "edited"},
		{name: "the first removed", change: func(es []LedgerEntry, _ map[string][]byte) []LedgerEntry {
			for i := range es {
				es[i].Seq--
			}
			return es[1:]
		}, seq: 1, word: "edited"},
		{name: "inserted with its hash recomputed", change: func(es []LedgerEntry, _ map[string][]byte) []LedgerEntry {
			forged, _, _ := NextEntry(es[1].Seq, es[1].Hash, Spend{ID: "x/1", State: SpendCalling, Amount: "500"})
			out := append(es[:2:2], forged)
			for _, e := range es[2:] {
				e.Seq++
				e.Hash = e.Sum() // renumbered and rehashed, but still linked to the entry it followed
				out = append(out, e)
			}
			return out
		}, seq: 4, word: "does not link to entry 3"},
		{name: "replaced with its hash recomputed", change: func(es []LedgerEntry, _ map[string][]byte) []LedgerEntry {
			es[0].Record = strings.Replace(es[0].Record, `"5"`, `"9"`, 1)
			es[0].Hash = es[0].Sum()
			return es
		}, seq: 2, word: "entry 1 was replaced"},
		{name: "a current record edited", change: func(es []LedgerEntry, cur map[string][]byte) []LedgerEntry {
			cur["x/1"] = []byte(strings.Replace(string(cur["x/1"]), "completed", "failed", 1))
			return es
		}, spend: "x/1", word: "spend x/1: its current record was edited: it differs from its last chain entry, 4"},
		{name: "a current record removed", change: func(es []LedgerEntry, cur map[string][]byte) []LedgerEntry {
			delete(cur, "x/2")
			return es
		}, seq: 5, spend: "x/2", word: "removed"},
		{name: "two current records removed", change: func(es []LedgerEntry, cur map[string][]byte) []LedgerEntry {
			delete(cur, "x/1")
			delete(cur, "x/2")
			return es
		}, seq: 4, spend: "x/1", word: "removed"},
		{name: "a call inserted", change: func(es []LedgerEntry, cur map[string][]byte) []LedgerEntry {
			cur["y/1"] = []byte(`{"id":"y/1"}`)
			return es
		}, spend: "y/1", word: "inserted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			es, cur := chainOf(t)
			err := checkChain(tc.change(es, cur), cur)
			if tc.word == "" {
				if err != nil {
					t.Fatalf("untouched chain: %v", err)
				}
				return
			}
			var brk *ChainBreak
			if !errors.As(err, &brk) {
				t.Fatalf("check = %v, want a *ChainBreak", err)
			}
			if brk.Seq != tc.seq || (tc.spend != "" && brk.Spend != tc.spend) || !strings.Contains(brk.Error(), tc.word) {
				t.Errorf("check = %q (entry %d, spend %q); want entry %d, spend %q, %q", brk, brk.Seq, brk.Spend, tc.seq, tc.spend, tc.word)
			}
		})
	}
}

// TestEntrySum pins the encoding: a change to it would make every stored
// chain fail to verify.
func TestEntrySum(t *testing.T) {
	e := LedgerEntry{Seq: 1, Spend: "x/1", State: SpendPlanned, Record: `{"id":"x/1"}`}
	// printf '21:neobot-spend-ledger-1,1:1,0:,3:x/1,7:planned,12:{"id":"x/1"},' | sha256sum
	const want = "6393820b02ab7e31dde5c3d14593cab25bd2a302ecfce23f70eb2dde4f42fc88"
	if got := e.Sum(); got != want {
		t.Errorf("Sum = %s, want %s", got, want)
	}
}
