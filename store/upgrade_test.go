package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	bolt "go.etcd.io/bbolt"
)

// TestUpgradeFromSchema1: a file written by schema 1 (entries in nested
// buckets) opens with every entry, archived ones and the summary where
// they were, and appends continue the numbering.
func TestUpgradeFromSchema1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	th := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1.1"}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	b, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = b.Update(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketMeta).Put(keySchema, u64(1)); err != nil {
			return err
		}
		tb, err := tx.Bucket(bucketThreads).CreateBucket([]byte(th.Key()))
		if err != nil {
			return err
		}
		live, _ := tb.CreateBucket(keyEntries)
		archive, _ := tb.CreateBucket(keyArchive)
		for seq := uint64(1); seq <= 2; seq++ {
			if err := archive.Put(u64(seq), encodeEntry(at, []byte{'a', byte('0' + seq)})); err != nil {
				return err
			}
		}
		for seq := uint64(3); seq <= 5; seq++ {
			if err := live.Put(u64(seq), encodeEntry(at, []byte{'e', byte('0' + seq)})); err != nil {
				return err
			}
		}
		if err := live.SetSequence(5); err != nil {
			return err
		}
		if err := tb.Put(keySummary, []byte(`{"text":"GOAL: x","up_to":2}`)); err != nil {
			return err
		}
		return tb.Put(keyActive, i64(at.UnixNano()))
	})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()

	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	sum, live, err := db.LoadTranscript(ctx, th)
	if err != nil || sum.UpTo != 2 || len(live) != 3 || live[0].Seq != 3 || string(live[2].Data) != "e5" || !live[0].At.Equal(at) {
		t.Fatalf("after the upgrade: summary %+v, live %+v, %v", sum, live, err)
	}
	old, err := db.Archived(ctx, th)
	if err != nil || len(old) != 2 || old[1].Seq != 2 || string(old[1].Data) != "a2" {
		t.Fatalf("archive after the upgrade = %+v, %v", old, err)
	}
	if seq, err := db.AppendEntries(ctx, th, []byte("e6")); err != nil || seq != 6 {
		t.Errorf("append after the upgrade = %d, %v; want entry 6", seq, err)
	}
	if info, err := db.Threads(ctx); err != nil || len(info) != 1 || info[0].Entries != 4 || info[0].Archived != 2 {
		t.Errorf("Threads = %+v, %v; want 4 live and 2 archived", info, err)
	}
	err = db.bolt.View(func(tx *bolt.Tx) error {
		if v := getU64(tx.Bucket(bucketMeta).Get(keySchema)); v != SchemaVersion {
			t.Errorf("schema after the upgrade = %d, want %d", v, SchemaVersion)
		}
		if tb := tx.Bucket(bucketThreads).Bucket([]byte(th.Key())); tb.Bucket(keyEntries) != nil || tb.Bucket(keyArchive) != nil {
			t.Error("the nested buckets are still there")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
