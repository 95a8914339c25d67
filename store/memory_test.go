package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/neobot/neobot/core/memory"
	"github.com/neobot/neobot/store"
)

// TestCortexRebuildsFromFile writes memory through a cortex over bbolt,
// reopens the file, and recalls through a cortex rebuilt from it.
func TestCortexRebuildsFromFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "neobot.db")
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := memory.New(ctx, memory.Options{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	scope := memory.Scope{Platform: "slack", Workspace: "TA", User: "alice", DM: true}
	if _, err := c.Remember(ctx, memory.Record{Scope: scope, Kind: memory.KindPreference, Text: "Alice signs off as A."}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Remember(ctx, memory.Record{Scope: scope, Kind: memory.KindFact, Text: "The vault address is 0xFeed01"}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err = memory.New(ctx, memory.Options{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	dm := memory.Reader{Platform: "slack", Workspace: "TA", User: "alice", DM: true}
	if hs := c.Recall(dm, "0xfeed01", 5); len(hs) != 1 || hs[0].Scope != scope {
		t.Errorf("Recall after reopen = %+v, want the vault fact with its DM scope", hs)
	}
	channel := memory.Reader{Platform: "slack", Workspace: "TA", User: "alice", Channel: "C1"}
	if hs := c.Recall(channel, "0xfeed01", 5); len(hs) != 0 {
		t.Errorf("Recall(channel) after reopen = %+v, want nothing (DM memory)", hs)
	}
}
