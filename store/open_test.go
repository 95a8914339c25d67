package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/store"
	bolt "go.etcd.io/bbolt"
)

func TestOpenLockedFileNamesPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "held.db")
	first, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	// flock is per open file description, so a second open in this
	// process contends exactly as another process would.
	_, err = store.Open(path, store.Options{LockTimeout: 20 * time.Millisecond})
	if !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open(held file) = %v; want ErrLocked naming %s", err, path)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "future.db")
	raw, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = raw.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("meta"))
		if err != nil {
			return err
		}
		return b.Put([]byte("schema"), []byte{0, 0, 0, 0, 0, 0, 0, 99})
	})
	if err != nil {
		t.Fatal(err)
	}
	raw.Close()
	before, _ := os.ReadFile(path)

	_, err = store.Open(path, store.Options{})
	var se *store.SchemaError
	if !errors.As(err, &se) || se.Found != 99 || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open(schema 99) = %v; want *SchemaError naming the path", err)
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Errorf("Open(schema 99) modified the file")
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "neobot.db")
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	th := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1.1"}
	if _, err := db.AppendEntries(ctx, th, []byte("a"), []byte("b")); err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(ctx, th, core.Summary{Text: "s", UpTo: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.JournalInbound(ctx, core.Inbound{Thread: th, EventID: "E1", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = store.Open(path, store.Options{})
	if err != nil {
		t.Fatalf("reopen = %v", err)
	}
	defer db.Close()
	sum, entries, err := db.LoadTranscript(ctx, th)
	if err != nil || sum.Text != "s" || len(entries) != 1 || string(entries[0].Data) != "b" {
		t.Errorf("LoadTranscript after reopen = %+v, %v, %v", sum, entries, err)
	}
	if p, _ := db.PendingInbound(ctx); len(p) != 1 {
		t.Errorf("PendingInbound after reopen = %d, want 1", len(p))
	}
	if seq, _ := db.AppendEntries(ctx, th, []byte("c")); seq != 3 {
		t.Errorf("AppendEntries after reopen = %d, want 3", seq)
	}
}
