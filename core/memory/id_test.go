package memory

import (
	"strings"
	"testing"
	"time"
)

// TestNewIDSortsByCreation: an ID made in a later microsecond sorts after
// one made earlier (records written together sit side by side in the
// store), and IDs made in the same microsecond still differ.
func TestNewIDSortsByCreation(t *testing.T) {
	seen := map[string]bool{}
	prev := newID()
	for range 50 {
		start := time.Now().UnixMicro()
		for time.Now().UnixMicro() == start { // wait for the clock to tick, not for a time
		}
		id := newID()
		if id <= prev {
			t.Fatalf("newID() = %s after %s; want it to sort after", id, prev)
		}
		if len(id) != 23 || !strings.HasPrefix(id, "m") {
			t.Fatalf("newID() = %q; want m and 22 hex digits", id)
		}
		prev = id
	}
	for range 1000 {
		id := newID()
		if seen[id] {
			t.Fatalf("newID() returned %s twice", id)
		}
		seen[id] = true
	}
}
