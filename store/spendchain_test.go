package store

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/neobot/neobot/core"
)

// TestUpgradeChainsSpends: a schema-2 file, whose spend ledger has no
// chain, is chained once when opened: one entry per call, oldest first,
// each holding the call as it was; the chain verifies, and the calls
// written after the upgrade continue it.
func TestUpgradeChainsSpends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v2.db")
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	th := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1.1"}
	b, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The layout schema 2 wrote: spends/<id> and spend_days, no chain.
	err = b.Update(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if string(name) == string(bucketSpendChain) || string(name) == string(bucketSpendHeads) {
				continue
			}
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketMeta).Put(keySchema, u64(2)); err != nil {
			return err
		}
		for i, id := range []string{"xb/1", "xa/1", "xa/2"} { // xb is the newest
			intent, _, _ := strings.Cut(id, "/")
			s := core.Spend{ID: id, IntentID: intent, Thread: th, Day: "2026-03-01", State: core.SpendCompleted,
				Created: at.Add(time.Duration(2-min(i, 1)*2) * time.Minute), Args: json.RawMessage(`{"amount":5}`)}
			raw, _ := json.Marshal(s)
			if err := tx.Bucket(bucketSpends).Put([]byte(id), raw); err != nil {
				return err
			}
			if err := tx.Bucket(bucketSpendDays).Put(append(spendDayPrefix(s), id...), nil); err != nil {
				return err
			}
		}
		return nil
	})
	b.Close()
	if err != nil {
		t.Fatal(err)
	}

	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var order []string
	var check core.ChainCheck
	if err := db.SpendEntries(ctx, func(e core.LedgerEntry) error {
		check.Entry(e)
		order = append(order, e.Spend)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.SpendRecords(ctx, func(id string, rec []byte) error { check.Record(id, rec); return nil }); err != nil {
		t.Fatal(err)
	}
	if n, err := check.Done(); err != nil || n != 3 || fmt.Sprint(order) != "[xa/1 xa/2 xb/1]" {
		t.Errorf("chain after the upgrade = %v, %d entries, %v; want xa/1 xa/2 xb/1, verifying", order, n, err)
	}
	got, err := db.SpendsSince(ctx, at.Add(-time.Hour))
	if err != nil || len(got) != 3 || got[0].Seq != 1 || got[2].Receipt() == "" {
		t.Errorf("spends after the upgrade = %+v, %v; want their entries' seq and hash", got, err)
	}
	up, err := db.UpdateSpend(ctx, "xb/1", func(s *core.Spend, _ []core.Spend) error { s.Reason = "checked"; return nil })
	if err != nil || up.Seq != 4 {
		t.Errorf("an update after the upgrade = seq %d, %v; want entry 4", up.Seq, err)
	}
}
