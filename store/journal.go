package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/neobot/neobot/core"
	bolt "go.etcd.io/bbolt"
)

// The inbound journal: inbound/<platform>\x00<event ID> holds the message,
// when it was journaled, and whether its turn completed; this record is
// also the event's dedupe key. inbound_pending/<seq> -> inbound key lists
// the uncompleted messages in journal order.

type inboundRecord struct {
	Inbound   core.Inbound `json:"inbound"`
	Journaled time.Time    `json:"journaled"`
	Pending   uint64       `json:"pending,omitempty"` // key in inbound_pending while uncompleted
	Completed time.Time    `json:"completed,omitzero"`
}

// JournalInbound records in before its turn runs. fresh is false, and
// nothing is written, when the same platform event was journaled within the
// dedupe TTL (Retention.Dedupe, default 24h), is still pending, or is on its
// way to the journal (JournalInboundLater).
func (db *DB) JournalInbound(ctx context.Context, in core.Inbound) (fresh bool, err error) {
	key, err := inboundFor(in)
	if err != nil {
		return false, err
	}
	db.journaling.Lock()
	coming := db.coming[string(key)]
	db.journaling.Unlock()
	if coming {
		return false, nil
	}
	now := db.now()
	err = db.write(ctx, func(tx *bolt.Tx) error {
		var err error
		fresh, err = db.journal(tx, in, key, now)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("store: journal %s in %s: %w", in.EventID, in.Thread.Key(), err)
	}
	return fresh, nil
}

// JournalDelay is the longest JournalInboundLater's record waits for
// another write to share its commit.
const JournalDelay = 2 * time.Millisecond

// JournalInboundLater is JournalInbound in two halves. It decides at once
// whether in is fresh, and queues the record to commit with the next
// durable write (the turn's first, typically) or on its own within
// JournalDelay; durable then receives the commit's outcome, once. The
// message may be worked on meanwhile, but not acknowledged to its
// platform: a crash before the commit loses the record, and the platform
// must deliver the message again. Until the commit, the message counts as
// journaled for duplicates.
func (db *DB) JournalInboundLater(ctx context.Context, in core.Inbound) (fresh bool, durable <-chan error, err error) {
	key, err := inboundFor(in)
	if err != nil {
		return false, nil, err
	}
	if err := ctx.Err(); err != nil {
		return false, nil, err
	}
	now := db.now()
	db.journaling.Lock()
	defer db.journaling.Unlock()
	if db.coming[string(key)] {
		return false, nil, nil
	}
	seen := false
	err = db.bolt.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketInbound).Get(key)
		if v == nil {
			return nil
		}
		var err error
		seen, err = db.seen(v, now)
		return err
	})
	if err != nil || seen {
		if err != nil {
			err = fmt.Errorf("store: journal %s in %s: %w", in.EventID, in.Thread.Key(), err)
		}
		return false, nil, err
	}
	db.coming[string(key)] = true
	done := make(chan error, 1)
	db.group.laterWithin(JournalDelay, func(tx *bolt.Tx) error {
		fresh, err := db.journal(tx, in, key, now)
		if err == nil && !fresh {
			err = errors.New("journaled meanwhile by another writer") // none should, while coming holds it
		}
		if err != nil {
			return fmt.Errorf("store: journal %s in %s: %w", in.EventID, in.Thread.Key(), err)
		}
		return nil
	}, func(err error) {
		db.journaling.Lock()
		delete(db.coming, string(key))
		db.journaling.Unlock()
		done <- db.diskFull(err)
	})
	return true, done, nil
}

// inboundFor checks in and returns its journal key.
func inboundFor(in core.Inbound) ([]byte, error) {
	if err := in.Thread.Validate(); err != nil {
		return nil, fmt.Errorf("store: journal: %w", err)
	}
	if in.EventID == "" {
		return nil, fmt.Errorf("store: journal message in %s: empty event ID", in.Thread.Key())
	}
	return inboundKey(in.Thread.Platform, in.EventID), nil
}

// seen reports whether the journal record v makes a message journaled at
// now a duplicate: it is pending, or within the dedupe TTL.
func (db *DB) seen(v []byte, now time.Time) (bool, error) {
	var prev inboundRecord
	if err := json.Unmarshal(v, &prev); err != nil {
		return false, fmt.Errorf("decode inbound: %w", err)
	}
	return prev.Completed.IsZero() || now.Sub(prev.Journaled) < db.ret.Dedupe, nil
}

// journal writes in's record under key in tx, unless it is a duplicate.
func (db *DB) journal(tx *bolt.Tx, in core.Inbound, key []byte, now time.Time) (fresh bool, err error) {
	b := tx.Bucket(bucketInbound)
	if v := b.Get(key); v != nil {
		if seen, err := db.seen(v, now); err != nil || seen {
			return false, err
		}
	}
	pending := tx.Bucket(bucketPending)
	seq, err := pending.NextSequence()
	if err != nil {
		return false, err
	}
	raw, err := json.Marshal(inboundRecord{Inbound: in, Journaled: now, Pending: seq})
	if err != nil {
		return false, err
	}
	if err := b.Put(key, raw); err != nil {
		return false, err
	}
	if err := pending.Put(u64(seq), key); err != nil {
		return false, err
	}
	tb, err := threadBucket(tx, in.Thread)
	if err != nil {
		return false, err
	}
	return true, tb.Put(keyActive, i64(now.UnixNano()))
}

// CompleteInbound marks the journaled message eventID of thread t done: it
// is no longer pending, and its dedupe key lives out its TTL. Completing
// twice is fine; an event never journaled is core.ErrNotFound.
func (db *DB) CompleteInbound(ctx context.Context, t core.Thread, eventID string) error {
	err := db.write(ctx, db.completeFn(t, eventID))
	if errors.Is(err, core.ErrNotFound) {
		return err
	}
	if err != nil {
		return fmt.Errorf("store: complete %s in %s: %w", eventID, t.Key(), err)
	}
	return nil
}

// CompleteInboundLater is CompleteInbound without waiting: the mark
// commits with the next write, or on its own within 50 ms. A crash
// before then loses it, and the message is resumed after the restart; the
// hub asks for this only for a message whose answer is stored, whose
// resumed turn finds itself answered and says nothing.
func (db *DB) CompleteInboundLater(t core.Thread, eventID string) {
	fn := db.completeFn(t, eventID)
	db.group.later(func(tx *bolt.Tx) error {
		if err := fn(tx); err != nil && !errors.Is(err, core.ErrNotFound) {
			return fmt.Errorf("store: complete %s in %s: %w", eventID, t.Key(), err)
		}
		return nil
	}, nil)
}

// completeFn marks eventID of thread t done in a transaction.
func (db *DB) completeFn(t core.Thread, eventID string) func(*bolt.Tx) error {
	key := inboundKey(t.Platform, eventID)
	return func(tx *bolt.Tx) error {
		now := db.now()
		b := tx.Bucket(bucketInbound)
		v := b.Get(key)
		if v == nil {
			return core.ErrNotFound
		}
		if raw, pending, ok := markCompleted(v, now); ok {
			if err := tx.Bucket(bucketPending).Delete(u64(pending)); err != nil {
				return err
			}
			return b.Put(key, raw)
		}
		var rec inboundRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("decode inbound: %w", err)
		}
		if !rec.Completed.IsZero() {
			return nil
		}
		if err := tx.Bucket(bucketPending).Delete(u64(rec.Pending)); err != nil {
			return err
		}
		rec.Completed, rec.Pending = now, 0
		raw, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		return b.Put(key, raw)
	}
}

// PendingInbound returns the messages journaled and never completed,
// oldest first: the turns to resume after a restart.
func (db *DB) PendingInbound(ctx context.Context) ([]core.Inbound, error) {
	var out []core.Inbound
	err := db.read(ctx, func(tx *bolt.Tx) error {
		inbound := tx.Bucket(bucketInbound)
		return tx.Bucket(bucketPending).ForEach(func(_, key []byte) error {
			v := inbound.Get(key)
			if v == nil {
				return nil
			}
			var rec inboundRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("decode inbound: %w", err)
			}
			out = append(out, rec.Inbound)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("store: pending inbound: %w", err)
	}
	return out, nil
}

// pendingField closes a pending record's encoding: its last field, before
// the closing brace, is the key in inbound_pending.
var pendingField = []byte(`,"pending":`)

// markCompleted edits a pending record's encoding into the completed one:
// the last field, pending, becomes completed. It leaves the message
// undecoded, and gives exactly what encoding the record again would (see
// TestMarkCompletedEncodesAsMarshal). ok is false for an encoding of
// another shape, such as a record already completed: the caller decodes
// it.
func markCompleted(v []byte, now time.Time) (out []byte, pending uint64, ok bool) {
	i := bytes.LastIndex(v, pendingField)
	if i < 0 || len(v) < 2 || v[len(v)-1] != '}' {
		return nil, 0, false
	}
	pending, err := strconv.ParseUint(string(v[i+len(pendingField):len(v)-1]), 10, 64)
	if err != nil || pending == 0 {
		return nil, 0, false
	}
	stamp, err := now.MarshalJSON()
	if err != nil {
		return nil, 0, false
	}
	out = make([]byte, 0, i+len(`,"completed":}`)+len(stamp))
	out = append(out, v[:i]...)
	out = append(out, `,"completed":`...)
	out = append(out, stamp...)
	return append(out, '}'), pending, true
}

func inboundKey(platform, eventID string) []byte {
	return []byte(platform + "\x00" + eventID)
}
