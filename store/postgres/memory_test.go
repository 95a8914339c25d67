package postgres_test

import (
	"context"
	"testing"

	"github.com/neobot/neobot/core/memory"
	"github.com/neobot/neobot/store/postgres"
	"github.com/neobot/neobot/store/postgres/pgtest"
)

// TestWriteMemoriesLater: write-backs commit in the order they were
// queued (the last write of a record wins), a WriteMemories after them
// wins over them, and Close commits what is still queued.
func TestWriteMemoriesLater(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Database(t)
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := func(id, text string) memory.Record { return memory.Record{ID: id, Kind: memory.KindFact, Text: text} }
	later := func(put []memory.Record, del ...string) {
		t.Helper()
		if err := db.WriteMemoriesLater(put, del); err != nil {
			t.Fatal(err)
		}
	}
	later([]memory.Record{rec("m1", "one"), rec("m2", "two")})
	later([]memory.Record{rec("m1", "one again")}, "m2")
	later([]memory.Record{rec("m3", "three")}, "m1")
	later([]memory.Record{rec("m1", "one last"), rec("m4", "four")}, "m4")
	later(nil, "m3")
	if err := db.WriteMemories(ctx, []memory.Record{rec("m4", "four, remembered")}, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.WriteMemoriesLater([]memory.Record{{Text: "no ID"}}, nil); err == nil {
		t.Error("WriteMemoriesLater(a record without an ID) = nil, want an error at once")
	}
	later([]memory.Record{rec("m5", "five")})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	again := openURL(t, url, postgres.Options{})
	got := map[string]string{}
	err = again.ScanMemories(ctx, func(r memory.Record) error {
		got[r.ID] = r.Text
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"m1": "one last", "m4": "four, remembered", "m5": "five"}
	if len(got) != len(want) {
		t.Errorf("memories = %q, want %q", got, want)
	}
	for id, text := range want {
		if got[id] != text {
			t.Errorf("memory %s = %q, want %q (all: %q)", id, got[id], text, got)
		}
	}
}
