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

// TestWriteMemoriesLater: a lazy memory write is committed by the next
// durable write, and by Close; what can be refused at once is.
func TestWriteMemoriesLater(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "neobot.db")
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	scope := memory.Scope{Platform: "slack", Workspace: "TA", Channel: "C1"}
	stored := func(db *store.DB) map[string]bool {
		t.Helper()
		ids := map[string]bool{}
		if err := db.ScanMemories(ctx, func(r memory.Record) error { ids[r.ID] = true; return nil }); err != nil {
			t.Fatal(err)
		}
		return ids
	}
	if err := db.WriteMemoriesLater([]memory.Record{{ID: "m1", Scope: scope, Kind: memory.KindTurn, Text: "one"}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.WriteMemories(ctx, []memory.Record{{ID: "m2", Scope: scope, Kind: memory.KindFact, Text: "two"}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := stored(db); !got["m1"] || !got["m2"] {
		t.Fatalf("after a durable write, stored = %v; want the lazy m1 with m2", got)
	}
	if err := db.WriteMemoriesLater([]memory.Record{{ID: "m3", Scope: scope, Kind: memory.KindTurn, Text: "three"}}, []string{"m1"}); err != nil {
		t.Fatal(err)
	}
	if err := db.WriteMemoriesLater([]memory.Record{{Scope: scope, Kind: memory.KindTurn, Text: "no ID"}}, nil); err == nil {
		t.Error("WriteMemoriesLater(a record without an ID) = nil, want an error at once")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openAt(t, path, store.Options{})
	if got := stored(db); got["m1"] || !got["m2"] || !got["m3"] || len(got) != 2 {
		t.Errorf("after Close and a reopen, stored = %v; want m2 and m3", got)
	}
}
