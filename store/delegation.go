package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/neobot/neobot/core"
	bolt "go.etcd.io/bbolt"
)

// Delegations live in delegations/<thread key>\x00<call ID>. A finished
// delegation is kept (marked finished) until retention drops it, so a turn
// resumed after its tool result was lost still finds the intent instead of
// submitting it again.

type delegationRecord struct {
	Delegation core.Delegation `json:"delegation"`
	Finished   time.Time       `json:"finished,omitzero"`
}

// SaveDelegation records a delegation in flight, keyed by its thread and
// call ID. Saving the same key again overwrites it and clears any finish.
func (db *DB) SaveDelegation(ctx context.Context, d core.Delegation) error {
	if err := d.Thread.Validate(); err != nil {
		return fmt.Errorf("store: save delegation: %w", err)
	}
	if d.CallID == "" {
		return fmt.Errorf("store: save delegation in %s: empty call ID", d.Thread.Key())
	}
	raw, err := json.Marshal(delegationRecord{Delegation: d})
	if err != nil {
		return fmt.Errorf("store: save delegation: %w", err)
	}
	err = db.write(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketDelegations).Put(delegationKey(d.Thread, d.CallID), raw)
	})
	if err != nil {
		return fmt.Errorf("store: save delegation %s in %s: %w", d.CallID, d.Thread.Key(), err)
	}
	return nil
}

// DelegationFor returns the delegation recorded for (t, callID), finished
// or not, or core.ErrNotFound.
func (db *DB) DelegationFor(ctx context.Context, t core.Thread, callID string) (core.Delegation, error) {
	var rec delegationRecord
	err := db.read(ctx, func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketDelegations).Get(delegationKey(t, callID))
		if v == nil {
			return core.ErrNotFound
		}
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("decode delegation: %w", err)
		}
		return nil
	})
	if err != nil {
		return core.Delegation{}, fmt.Errorf("store: delegation %s in %s: %w", callID, t.Key(), err)
	}
	return rec.Delegation, nil
}

// FinishDelegation marks the delegation for (t, callID) finished: it leaves
// the in-flight list. Finishing twice is fine; an unknown key is
// core.ErrNotFound.
func (db *DB) FinishDelegation(ctx context.Context, t core.Thread, callID string) error {
	now := db.now()
	err := db.write(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketDelegations)
		key := delegationKey(t, callID)
		v := b.Get(key)
		if v == nil {
			return core.ErrNotFound
		}
		var rec delegationRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("decode delegation: %w", err)
		}
		if !rec.Finished.IsZero() {
			return nil
		}
		rec.Finished = now
		raw, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		return b.Put(key, raw)
	})
	if err != nil {
		return fmt.Errorf("store: finish delegation %s in %s: %w", callID, t.Key(), err)
	}
	return nil
}

// Delegations returns every delegation in flight (not finished), oldest
// first.
func (db *DB) Delegations(ctx context.Context) ([]core.Delegation, error) {
	var out []core.Delegation
	err := db.read(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketDelegations).ForEach(func(_, v []byte) error {
			var rec delegationRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("decode delegation: %w", err)
			}
			if rec.Finished.IsZero() {
				out = append(out, rec.Delegation)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("store: delegations: %w", err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out, nil
}

func delegationKey(t core.Thread, callID string) []byte {
	return []byte(t.Key() + "\x00" + callID)
}

func delegationPrefix(t core.Thread) []byte { return []byte(t.Key() + "\x00") }
