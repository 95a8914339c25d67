package memory

import (
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
