package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/neobot/neobot/core"
	bolt "go.etcd.io/bbolt"
)

// Retention says what [DB.Sweep] drops. Zero fields take the defaults
// noted; a negative duration keeps that kind of record forever.
type Retention struct {
	// ThreadIdle drops a thread (entries, summary, archive, finished
	// delegations) with no activity for this long (default: never).
	ThreadIdle time.Duration
	// Dedupe is how long a completed message's event ID is remembered to
	// drop platform redeliveries (default 24h).
	Dedupe time.Duration
	// Decided is how long gates past their expiry, finished delegations
	// and the calls log's ended calls are kept (default 7 days).
	Decided time.Duration
}

// WithDefaults returns r with its zero fields set to the defaults.
func (r Retention) WithDefaults() Retention {
	if r.Dedupe == 0 {
		r.Dedupe = 24 * time.Hour
	}
	if r.Decided == 0 {
		r.Decided = 7 * 24 * time.Hour
	}
	return r
}

// SweepStats counts what one sweep dropped.
type SweepStats struct {
	Threads     int
	EventIDs    int
	Gates       int
	Delegations int
	// Calls counts ended calls dropped from the calls log; a call begun
	// and never ended is kept, so it is never made again.
	Calls int
	// Ratings counts ratings dropped with their idle thread: they hold
	// its question and answer.
	Ratings int
	// Files are uploads never sent, and files whose thread went.
	Files int
}

// Sweep drops what the retention settings no longer keep, as of now: idle
// threads, expired dedupe keys of completed messages, old gates and
// finished delegations. Uncompleted messages and delegations in flight are
// never dropped. It runs in one transaction.
func (db *DB) Sweep(ctx context.Context, now time.Time) (SweepStats, error) {
	if err := ctx.Err(); err != nil {
		return SweepStats{}, err
	}
	var st SweepStats
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		st = SweepStats{}
		var err error
		if st.Threads, st.Ratings, err = db.sweepThreads(tx, now); err != nil {
			return err
		}
		if st.EventIDs, err = db.sweepInbound(tx, now); err != nil {
			return err
		}
		if st.Gates, err = db.sweepGates(tx, now); err != nil {
			return err
		}
		if st.Delegations, err = db.sweepDelegations(tx, now); err != nil {
			return err
		}
		if st.Calls, err = db.sweepCalls(tx, now); err != nil {
			return err
		}
		st.Files, err = sweepFiles(tx, now)
		return err
	})
	if err != nil {
		return SweepStats{}, fmt.Errorf("store: sweep: %w", err)
	}
	if st != (SweepStats{}) {
		db.log.Info().Int("threads", st.Threads).Int("event_ids", st.EventIDs).
			Int("gates", st.Gates).Int("delegations", st.Delegations).Int("calls", st.Calls).Int("ratings", st.Ratings).Int("files", st.Files).Msg("store: swept")
	}
	return st, nil
}

// SweepEvery runs Sweep at every interval until ctx ends, then returns
// ctx's error; the caller owns the goroutine it runs in. A failed sweep is
// logged and retried at the next tick.
func (db *DB) SweepEvery(ctx context.Context, every time.Duration) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			if _, err := db.Sweep(ctx, db.now()); err != nil && ctx.Err() == nil {
				db.log.Error().Err(err).Msg("store: sweep failed")
			}
		}
	}
}

func expired(at, now time.Time, keep time.Duration) bool {
	return keep > 0 && now.Sub(at) >= keep
}

func (db *DB) sweepThreads(tx *bolt.Tx, now time.Time) (threads, ratings int, err error) {
	if db.ret.ThreadIdle <= 0 {
		return 0, 0, nil
	}
	tb := tx.Bucket(bucketThreads)
	var idle [][]byte
	err = tb.ForEachBucket(func(k []byte) error {
		active := time.Unix(0, getI64(tb.Bucket(k).Get(keyActive)))
		if expired(active, now, db.ret.ThreadIdle) {
			idle = append(idle, bytes.Clone(k))
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	dels := tx.Bucket(bucketDelegations)
	rb := tx.Bucket(bucketRatings)
	for _, k := range idle {
		if err := tb.DeleteBucket(k); err != nil {
			return 0, 0, err
		}
		t, err := core.ParseThread(string(k))
		if err != nil {
			continue
		}
		if err := deleteFinished(dels, delegationPrefix(t), func(delegationRecord) bool { return true }); err != nil {
			return 0, 0, err
		}
		prefix := []byte(t.Key() + "\x00")
		var gone [][]byte
		c := rb.Cursor()
		for rk, _ := c.Seek(prefix); rk != nil && bytes.HasPrefix(rk, prefix); rk, _ = c.Next() {
			gone = append(gone, bytes.Clone(rk))
		}
		for _, rk := range gone {
			if err := rb.Delete(rk); err != nil {
				return 0, 0, err
			}
		}
		ratings += len(gone)
	}
	return len(idle), ratings, nil
}

func (db *DB) sweepInbound(tx *bolt.Tx, now time.Time) (int, error) {
	b := tx.Bucket(bucketInbound)
	var keys [][]byte
	err := b.ForEach(func(k, v []byte) error {
		var rec inboundRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("decode inbound: %w", err)
		}
		if !rec.Completed.IsZero() && expired(rec.Journaled, now, db.ret.Dedupe) {
			keys = append(keys, bytes.Clone(k))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}

func (db *DB) sweepGates(tx *bolt.Tx, now time.Time) (int, error) {
	gates, nodes := tx.Bucket(bucketGates), tx.Bucket(bucketGateNodes)
	var old []core.Gate
	err := gates.ForEach(func(_, v []byte) error {
		var g core.Gate
		if err := json.Unmarshal(v, &g); err != nil {
			return fmt.Errorf("decode gate: %w", err)
		}
		if expired(g.Expires, now, db.ret.Decided) {
			old = append(old, g)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, g := range old {
		if err := gates.Delete([]byte(g.Token)); err != nil {
			return 0, err
		}
		nk := gateNodeKey(g)
		if string(nodes.Get(nk)) == g.Token {
			if err := nodes.Delete(nk); err != nil {
				return 0, err
			}
		}
	}
	return len(old), nil
}

func (db *DB) sweepDelegations(tx *bolt.Tx, now time.Time) (int, error) {
	n := 0
	err := deleteFinished(tx.Bucket(bucketDelegations), nil, func(r delegationRecord) bool {
		if expired(r.Finished, now, db.ret.Decided) {
			n++
			return true
		}
		return false
	})
	return n, err
}

// deleteFinished deletes the finished delegations under prefix that drop
// says to.
func deleteFinished(b *bolt.Bucket, prefix []byte, drop func(delegationRecord) bool) error {
	var keys [][]byte
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var rec delegationRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("decode delegation: %w", err)
		}
		if !rec.Finished.IsZero() && drop(rec) {
			keys = append(keys, bytes.Clone(k))
		}
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
