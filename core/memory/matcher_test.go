package memory

import (
	"fmt"
	"testing"
)

// TestMatcherAgreesWithVisible checks the integer scope check used by
// searches against Scope.Visible, the rule as written, over every
// combination of record scope and reader.
func TestMatcherAgreesWithVisible(t *testing.T) {
	users, channels := []string{"", "alice", "bob"}, []string{"", "general", "D1"}
	var scopes []Scope
	var readers []Reader
	for _, u := range users {
		for _, c := range channels {
			for _, dm := range []bool{false, true} {
				scopes = append(scopes, Scope{Platform: "slack", Workspace: "TA", User: u, Channel: c, DM: dm})
				readers = append(readers, Reader{Platform: "slack", Workspace: "TA", User: u, Channel: c, DM: dm})
			}
		}
	}
	readers = append(readers, Reader{Platform: "slack", Workspace: "TA", User: "carol", Channel: "random"})
	ix := newIndex()
	for i, s := range scopes {
		ix.put(Record{ID: string(rune('a' + i)), Scope: s, Kind: KindFact, Text: "x"})
	}
	sp := ix.spaces[spaceKey{"slack", "TA"}]
	for _, r := range readers {
		for owner := range 2 {
			m := matcher{mask: kindMask(nil), reader: &r, owner: owner == 1}
			m.resolve(sp)
			for id := range sp.docs {
				s := sp.docs[id].rec.Scope
				want := s.Visible(r) && (owner == 0 || (s.User != "" && s.User == r.User))
				if got := m.ok(sp, int32(id)); got != want {
					t.Errorf("matcher(%+v, owner %d).ok(%+v) = %v, want %v", r, owner, s, got, want)
				}
			}
		}
	}
}

// TestIndexCompaction removes most of a space's records, which rebuilds
// it, and checks that searches and lookups still find the survivors.
func TestIndexCompaction(t *testing.T) {
	ix := newIndex()
	scope := Scope{Platform: "slack", Workspace: "TA"}
	for i := range 3000 {
		ix.put(Record{ID: fmt.Sprintf("r%d", i), Scope: scope, Kind: KindFact, Text: fmt.Sprintf("common item%d", i)})
	}
	for i := range 3000 {
		if i%10 != 0 {
			ix.remove(fmt.Sprintf("r%d", i))
		}
	}
	sp := ix.spaces[spaceKey{"slack", "TA"}]
	if len(sp.docs) >= 3000 {
		t.Fatalf("space holds %d documents after removing 2700 of 3000, want it compacted", len(sp.docs))
	}
	r := Reader{Platform: "slack", Workspace: "TA"}
	for _, i := range []int{0, 10, 2990} {
		hs := sp.search(queryTerms(fmt.Sprintf("item%d", i), 2), matcher{mask: kindMask(nil), reader: &r}, 5)
		if len(hs) != 1 || sp.docs[hs[0].ref.doc].rec.ID != fmt.Sprintf("r%d", i) {
			t.Errorf("search(item%d) after compaction = %v, want r%d", i, hs, i)
		}
		if _, ok := ix.get(fmt.Sprintf("r%d", i)); !ok {
			t.Errorf("get(r%d) after compaction = missing", i)
		}
	}
	if hs := sp.search(queryTerms("common", 2), matcher{mask: kindMask(nil), reader: &r}, 500); len(hs) != 300 {
		t.Errorf("search(common) = %d hits, want the 300 survivors", len(hs))
	}
}
