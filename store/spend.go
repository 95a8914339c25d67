package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/neobot/neobot/core"
)

// The spend ledger lives in spends/<id>, one record per planned call,
// kept for good: it is the team's record of what moved money. spend_days
// indexes it by <workspace>\x00<day>\x00<id>, so a day limit reads one
// day of one workspace. calls/<key> holds the calls log: when an approved
// call with a side effect began and ended.

// PlanSpends stores the intent's planned calls unless it has some, and
// returns the intent's calls as stored, in order.
func (db *DB) PlanSpends(ctx context.Context, intentID string, calls []core.Spend) ([]core.Spend, error) {
	var out []core.Spend
	run := db.write
	if len(calls) == 0 {
		run = db.read // a look-up: nothing to write, no commit to wait for
	}
	err := run(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSpends)
		existing, err := intentSpends(b, intentID)
		if err != nil || len(existing) > 0 {
			out = existing
			return err
		}
		if err := core.CheckPlan(intentID, calls); err != nil {
			return err
		}
		for _, s := range calls {
			if err := putSpend(tx, s); err != nil {
				return err
			}
		}
		out = slices.Clone(calls)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: plan spends of %s: %w", intentID, err)
	}
	return out, nil
}

// UpdateSpend applies fn to the call with id, with the other calls of its
// workspace and day, and stores the result, in one transaction.
func (db *DB) UpdateSpend(ctx context.Context, id string, fn func(s *core.Spend, sameDay []core.Spend) error) (core.Spend, error) {
	var (
		out   core.Spend
		fnErr error
	)
	err := db.write(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSpends)
		v := b.Get([]byte(id))
		if v == nil {
			return core.ErrNotFound
		}
		var s core.Spend
		if err := json.Unmarshal(v, &s); err != nil {
			return fmt.Errorf("decode spend %s: %w", id, err)
		}
		var day []core.Spend
		c := tx.Bucket(bucketSpendDays).Cursor()
		prefix := spendDayPrefix(s)
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			other := string(k[len(prefix):])
			if other == id {
				continue
			}
			var o core.Spend
			if raw := b.Get([]byte(other)); raw != nil && json.Unmarshal(raw, &o) == nil {
				day = append(day, o)
			}
		}
		if out, fnErr = s.Edit(day, fn); fnErr != nil {
			return nil
		}
		return putSpend(tx, out)
	})
	switch {
	case err != nil:
		return core.Spend{}, fmt.Errorf("store: update spend %s: %w", id, err)
	case fnErr != nil:
		return out, fnErr
	}
	return out, nil
}

// SpendsSince returns the calls created at or after since, oldest first.
func (db *DB) SpendsSince(ctx context.Context, since time.Time) ([]core.Spend, error) {
	var out []core.Spend
	err := db.read(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSpends).ForEach(func(k, v []byte) error {
			var s core.Spend
			if err := json.Unmarshal(v, &s); err != nil {
				return fmt.Errorf("decode spend %s: %w", k, err)
			}
			if !s.Created.Before(since) {
				out = append(out, s)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("store: spends: %w", err)
	}
	SortSpends(out)
	return out, nil
}

// SortSpends orders calls by creation, then by intent and call number.
func SortSpends(s []core.Spend) {
	slices.SortStableFunc(s, func(a, b core.Spend) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		if c := strings.Compare(a.IntentID, b.IntentID); c != 0 {
			return c
		}
		return spendNumber(a.ID) - spendNumber(b.ID)
	})
}

// spendNumber is n of the ID "<intent>/<n>".
func spendNumber(id string) int {
	_, n, _ := strings.Cut(id, "/")
	v, _ := strconv.Atoi(n)
	return v
}

// callRecord is one entry of the calls log.
type callRecord struct {
	Begun time.Time `json:"begun"`
	Ended time.Time `json:"ended,omitzero"`
	// Run is the run of neobot that began the call.
	Run string `json:"run,omitempty"`
}

// BeginCall records key as calling, begun by run; when key was begun
// before, it returns the entry as found.
func (db *DB) BeginCall(ctx context.Context, key, run string) (core.Begun, error) {
	raw, err := json.Marshal(callRecord{Begun: db.now(), Run: run})
	if err != nil {
		return core.Begun{}, fmt.Errorf("store: begin call %s: %w", key, err)
	}
	var found core.Begun
	err = db.write(ctx, func(tx *bolt.Tx) error {
		found = core.Begun{}
		b := tx.Bucket(bucketCalls)
		if v := b.Get([]byte(key)); v != nil {
			var rec callRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("decode call: %w", err)
			}
			found.Run = rec.Run
			return nil
		}
		found = core.Begun{Fresh: true, Run: run}
		return b.Put([]byte(key), raw)
	})
	if err != nil {
		return core.Begun{}, fmt.Errorf("store: begin call %s: %w", key, err)
	}
	return found, nil
}

// DropCall removes key's entry: the call never reached its tool.
func (db *DB) DropCall(ctx context.Context, key string) error {
	err := db.write(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketCalls).Delete([]byte(key))
	})
	if err != nil {
		return fmt.Errorf("store: drop call %s: %w", key, err)
	}
	return nil
}

// EndCall records that the call with key returned; an unknown key is
// core.ErrNotFound.
func (db *DB) EndCall(ctx context.Context, key string) error {
	now := db.now()
	err := db.write(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCalls)
		v := b.Get([]byte(key))
		if v == nil {
			return core.ErrNotFound
		}
		var rec callRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("decode call: %w", err)
		}
		if !rec.Ended.IsZero() {
			return nil
		}
		rec.Ended = now
		raw, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		return b.Put([]byte(key), raw)
	})
	if err != nil {
		return fmt.Errorf("store: end call %s: %w", key, err)
	}
	return nil
}

func intentSpends(b *bolt.Bucket, intentID string) ([]core.Spend, error) {
	var out []core.Spend
	prefix := []byte(intentID + "/")
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var s core.Spend
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, fmt.Errorf("decode spend %s: %w", k, err)
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b core.Spend) int { return spendNumber(a.ID) - spendNumber(b.ID) })
	return out, nil
}

func putSpend(tx *bolt.Tx, s core.Spend) error {
	raw, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode spend %s: %w", s.ID, err)
	}
	if err := tx.Bucket(bucketSpends).Put([]byte(s.ID), raw); err != nil {
		return err
	}
	return tx.Bucket(bucketSpendDays).Put(append(spendDayPrefix(s), s.ID...), nil)
}

func spendDayPrefix(s core.Spend) []byte {
	return []byte(s.Thread.Platform + "/" + s.Thread.Workspace + "\x00" + s.Day + "\x00")
}

// sweepCalls drops the calls log's calls that ended longer ago than
// Decided; a call never ended stays, so it is never made again.
func (db *DB) sweepCalls(tx *bolt.Tx, now time.Time) (int, error) {
	keep := db.ret.WithDefaults().Decided
	b := tx.Bucket(bucketCalls)
	var old [][]byte
	err := b.ForEach(func(k, v []byte) error {
		var rec callRecord
		if json.Unmarshal(v, &rec) == nil && !rec.Ended.IsZero() && expired(rec.Ended, now, keep) {
			old = append(old, bytes.Clone(k))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, k := range old {
		if err := b.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(old), nil
}
