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

// The spend ledger is kept for good: it is the team's record of what
// moved money. spend_chain/<seq, 8 bytes big-endian> is its hash chain,
// one entry per write of a call (core.LedgerEntry), appended in the write
// transaction, which bbolt runs one at a time: that is the order every
// reader sees. spends/<id> is each call's current record, the same bytes
// as its last entry's, and spend_heads/<id> that entry's seq (8 bytes)
// and hash. spend_days indexes the calls by
// <workspace>\x00<day>\x00<id>, so a day limit reads one day of one
// workspace. calls/<key> holds the calls log: when an approved call with
// a side effect began and ended.

// PlanSpends stores the intent's planned calls unless it has some, and
// returns the intent's calls as stored, in order.
func (db *DB) PlanSpends(ctx context.Context, intentID string, calls []core.Spend) ([]core.Spend, error) {
	var out []core.Spend
	run := db.write
	if len(calls) == 0 {
		run = db.read // a look-up: nothing to write, no commit to wait for
	}
	err := run(ctx, func(tx *bolt.Tx) error {
		existing, err := intentSpends(tx, intentID)
		if err != nil || len(existing) > 0 {
			out = existing
			return err
		}
		if err := core.CheckPlan(intentID, calls); err != nil {
			return err
		}
		out = make([]core.Spend, len(calls))
		for i, s := range calls {
			if out[i], err = appendSpend(tx, s); err != nil {
				return err
			}
		}
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
		s = withHead(tx, s)
		if out, fnErr = s.Edit(day, fn); fnErr != nil {
			return nil
		}
		raw, err := out.Record()
		switch {
		case err != nil:
			return err
		case bytes.Equal(raw, v):
			out = s // unchanged: nothing to record
			return nil
		}
		out, err = appendSpend(tx, out)
		return err
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
		out = nil
		return tx.Bucket(bucketSpends).ForEach(func(k, v []byte) error {
			var s core.Spend
			if err := json.Unmarshal(v, &s); err != nil {
				return fmt.Errorf("decode spend %s: %w", k, err)
			}
			if !s.Created.Before(since) {
				out = append(out, withHead(tx, s))
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
	// Task is the MCP task the call became, if it did.
	Task string `json:"task,omitempty"`
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

// SetCallTask records that the call with key became task, beginning its
// entry by run when it had none.
func (db *DB) SetCallTask(ctx context.Context, key, run, task string) error {
	err := db.write(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCalls)
		rec := callRecord{Begun: db.now(), Run: run}
		if v := b.Get([]byte(key)); v != nil {
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("decode call: %w", err)
			}
		}
		rec.Task = task
		raw, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		return b.Put([]byte(key), raw)
	})
	if err != nil {
		return fmt.Errorf("store: record the task of call %s: %w", key, err)
	}
	return nil
}

// CallTask returns the task recorded for the call with key, "" when none.
func (db *DB) CallTask(ctx context.Context, key string) (string, error) {
	var rec callRecord
	err := db.read(ctx, func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketCalls).Get([]byte(key))
		if v == nil {
			return nil
		}
		return json.Unmarshal(v, &rec)
	})
	if err != nil {
		return "", fmt.Errorf("store: the task of call %s: %w", key, err)
	}
	return rec.Task, nil
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

func intentSpends(tx *bolt.Tx, intentID string) ([]core.Spend, error) {
	var out []core.Spend
	prefix := []byte(intentID + "/")
	c := tx.Bucket(bucketSpends).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var s core.Spend
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, fmt.Errorf("decode spend %s: %w", k, err)
		}
		out = append(out, withHead(tx, s))
	}
	slices.SortFunc(out, func(a, b core.Spend) int { return spendNumber(a.ID) - spendNumber(b.ID) })
	return out, nil
}

// chainValue is a chain entry as spend_chain stores it; its seq is the
// key.
type chainValue struct {
	Prev   string          `json:"prev"`
	Hash   string          `json:"hash"`
	Spend  string          `json:"spend"`
	State  core.SpendState `json:"state"`
	Record string          `json:"record"`
}

// appendSpend records s: a chain entry after the chain's last, and s as
// its current record. It returns s with the entry's seq and hash.
func appendSpend(tx *bolt.Tx, s core.Spend) (core.Spend, error) {
	chain := tx.Bucket(bucketSpendChain)
	chain.FillPercent = packedFill // keys only ever grow
	var (
		lastSeq uint64
		last    chainValue
	)
	if k, v := chain.Cursor().Last(); k != nil {
		if err := json.Unmarshal(v, &last); err != nil {
			return s, fmt.Errorf("decode the spend chain's last entry: %w", err)
		}
		lastSeq = getU64(k)
	}
	e, s, err := core.NextEntry(lastSeq, last.Hash, s)
	if err != nil {
		return s, err
	}
	raw, err := json.Marshal(chainValue{Prev: e.Prev, Hash: e.Hash, Spend: e.Spend, State: e.State, Record: e.Record})
	if err != nil {
		return s, fmt.Errorf("encode chain entry %d: %w", e.Seq, err)
	}
	if err := chain.Put(u64(e.Seq), raw); err != nil {
		return s, err
	}
	if err := tx.Bucket(bucketSpends).Put([]byte(s.ID), []byte(e.Record)); err != nil {
		return s, err
	}
	if err := tx.Bucket(bucketSpendHeads).Put([]byte(s.ID), append(u64(e.Seq), e.Hash...)); err != nil {
		return s, err
	}
	return s, tx.Bucket(bucketSpendDays).Put(append(spendDayPrefix(s), s.ID...), nil)
}

// withHead returns s with the seq and hash of its last chain entry.
func withHead(tx *bolt.Tx, s core.Spend) core.Spend {
	if v := tx.Bucket(bucketSpendHeads).Get([]byte(s.ID)); len(v) > 8 {
		s.Seq, s.Hash = getU64(v[:8]), string(v[8:])
	}
	return s
}

// SpendEntries calls fn with every entry of the spend chain, in order, as
// stored.
func (db *DB) SpendEntries(ctx context.Context, fn func(core.LedgerEntry) error) error {
	err := db.read(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSpendChain).ForEach(func(k, v []byte) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			var cv chainValue
			if err := json.Unmarshal(v, &cv); err != nil {
				// An entry that no longer decodes was edited: it is given
				// with what is left, and its hash will not match.
				cv = chainValue{Record: string(v)}
			}
			return fn(core.LedgerEntry{Seq: getU64(k), Prev: cv.Prev, Hash: cv.Hash, Spend: cv.Spend, State: cv.State, Record: cv.Record})
		})
	})
	if err != nil {
		return fmt.Errorf("store: spend chain: %w", err)
	}
	return nil
}

// SpendRecords calls fn with every call's current record as stored.
func (db *DB) SpendRecords(ctx context.Context, fn func(id string, record []byte) error) error {
	err := db.read(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSpends).ForEach(func(k, v []byte) error {
			return fn(string(k), v)
		})
	})
	if err != nil {
		return fmt.Errorf("store: spend records: %w", err)
	}
	return nil
}

// chainSpends is the upgrade to schema 3: the calls recorded before the
// ledger had a chain are chained once, oldest first (SortSpends), one
// entry each holding the call as it is now; their earlier states were
// not kept, so they cannot be chained.
func chainSpends(tx *bolt.Tx) (int, error) {
	var all []core.Spend
	err := tx.Bucket(bucketSpends).ForEach(func(k, v []byte) error {
		var s core.Spend
		if err := json.Unmarshal(v, &s); err != nil {
			return fmt.Errorf("decode spend %s: %w", k, err)
		}
		if tx.Bucket(bucketSpendHeads).Get(k) == nil {
			all = append(all, s)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	SortSpends(all)
	for _, s := range all {
		if _, err := appendSpend(tx, s); err != nil {
			return 0, err
		}
	}
	return len(all), nil
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
