package store_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/store"
	"github.com/neobot/neobot/store/storetest"
	bolt "go.etcd.io/bbolt"
)

// backupTo takes a backup of db into a new file at path.
func backupTo(t *testing.T, db *store.DB, path string) int64 {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var size int64
	n, err := db.Backup(context.Background(), func(s int64) (io.Writer, error) { size = s; return f, nil })
	if err != nil || n != size {
		t.Fatalf("Backup = %d, %v; want %d bytes", n, err, size)
	}
	return n
}

// TestBackupWhileWritingRestores: a backup taken while eight threads keep
// appending holds, for each thread, every entry appended before it began,
// numbered without a gap; Restore puts it in place of a fresh file, and
// the restored store continues each thread after its last entry.
func TestBackupWhileWritingRestores(t *testing.T) {
	dir := t.TempDir()
	db := openAt(t, filepath.Join(dir, "live.db"), store.Options{})
	ctx := context.Background()
	const writers, before = 8, 20
	thread := func(w int) core.Thread {
		return core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: strconv.Itoa(w)}
	}
	stop := make(chan struct{})
	var ready, done sync.WaitGroup
	ready.Add(writers)
	for w := range writers {
		done.Go(func() {
			for i := 1; ; i++ {
				if _, err := db.AppendEntries(ctx, thread(w), []byte(fmt.Sprintf("w%d-%d", w, i))); err != nil {
					t.Errorf("append: %v", err)
					return
				}
				if i == before {
					ready.Done()
				}
				select {
				case <-stop:
					if i >= before {
						return
					}
				default:
				}
			}
		})
	}
	ready.Wait() // each writer has committed `before` entries and goes on
	backup := filepath.Join(dir, "backup.db")
	backupTo(t, db, backup)
	close(stop)
	done.Wait()

	c, err := store.Verify(ctx, backup, time.Second)
	if err != nil || c.Schema != store.SchemaVersion || c.Keys["threads"] == 0 {
		t.Fatalf("Verify(backup) = %+v, %v", c, err)
	}
	target := filepath.Join(t.TempDir(), "neobot.db")
	if _, kept, err := store.Restore(ctx, backup, target, time.Second); err != nil || kept != "" {
		t.Fatalf("Restore into a fresh directory = %q, %v", kept, err)
	}
	restored := openAt(t, target, store.Options{})
	for w := range writers {
		_, entries, err := restored.LoadTranscript(ctx, thread(w))
		if err != nil || len(entries) < before {
			t.Fatalf("thread %d restored with %d entries (%v), want at least %d", w, len(entries), err, before)
		}
		for i, e := range entries {
			if want := fmt.Sprintf("w%d-%d", w, i+1); string(e.Data) != want || e.Seq != uint64(i+1) {
				t.Fatalf("thread %d entry %d = %d %q, want %d %q", w, i, e.Seq, e.Data, i+1, want)
			}
		}
		seq, err := restored.AppendEntries(ctx, thread(w), []byte("after"))
		if err != nil || seq != uint64(len(entries)+1) {
			t.Errorf("append to restored thread %d = %d, %v; want %d", w, seq, err, len(entries)+1)
		}
	}
}

// TestRestoreRefuses: Restore leaves the database as it was when a
// process holds it, or when the backup is damaged, empty of neobot's
// buckets, or from a newer neobot; a restore over an idle file keeps the
// old one aside.
func TestRestoreRefuses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := openAt(t, filepath.Join(dir, "src.db"), store.Options{})
	if _, err := src.AppendEntries(ctx, core.Thread{Platform: "slack", Workspace: "T", Channel: "C", ID: "1"}, []byte("hi")); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.db")
	backupTo(t, src, good)

	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte("not a database at all, not even close to one page"), 0o600); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "foreign.db")
	future := filepath.Join(dir, "future.db")
	for path, schema := range map[string][]byte{foreign: nil, future: {0, 0, 0, 0, 0, 0, 0, 99}} {
		raw, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = raw.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucket([]byte("meta"))
			if err != nil || schema == nil {
				return err
			}
			return b.Put([]byte("schema"), schema)
		})
		raw.Close()
		if err != nil {
			t.Fatal(err)
		}
	}

	target := filepath.Join(dir, "neobot.db")
	live := openAt(t, target, store.Options{})
	if _, _, err := store.Restore(ctx, good, target, 50*time.Millisecond); !errors.Is(err, store.ErrLocked) {
		t.Errorf("Restore over a held database = %v, want ErrLocked", err)
	}
	if err := live.Close(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(target)
	tests := []struct {
		name, from string
	}{
		{"damaged", garbage},
		{"no schema", foreign},
		{"newer schema", future},
		{"missing", filepath.Join(dir, "nowhere.db")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := store.Restore(ctx, tt.from, target, 50*time.Millisecond); err == nil {
				t.Errorf("Restore(%s) = nil, want it refused", tt.name)
			}
			if after, _ := os.ReadFile(target); string(after) != string(before) {
				t.Errorf("Restore(%s) changed the database", tt.name)
			}
		})
	}
	_, kept, err := store.Restore(ctx, good, target, 50*time.Millisecond)
	if err != nil || kept == "" {
		t.Fatalf("Restore over an idle database = %q, %v", kept, err)
	}
	if old, _ := os.ReadFile(kept); string(old) != string(before) {
		t.Errorf("the replaced database was not kept as %s", kept)
	}
}

// TestRestoredStoreConforms: a store restored from a backup passes the
// conformance suite every store passes.
func TestRestoredStoreConforms(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) storetest.Backend {
		dir := t.TempDir()
		src, err := store.Open(filepath.Join(dir, "src.db"), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		backup := filepath.Join(dir, "backup.db")
		backupTo(t, src, backup)
		src.Close()
		target := filepath.Join(dir, "neobot.db")
		if _, _, err := store.Restore(context.Background(), backup, target, time.Second); err != nil {
			t.Fatal(err)
		}
		db, err := store.Open(target, store.Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	})
}
