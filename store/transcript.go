package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"encoding/json"

	"github.com/neobot/neobot/core"
	bolt "go.etcd.io/bbolt"
)

// A thread's bucket, threads/<thread key>, holds:
//
//	e/<seq>  live transcript entries
//	a/<seq>  entries moved out by compaction (the archive)
//	s        the consolidated summary (JSON)
//	t        last activity, unix nanoseconds (for retention)
//
// Entry values are 8 bytes of unix nanoseconds followed by the entry's data.
var (
	keyEntries = []byte("e")
	keyArchive = []byte("a")
	keySummary = []byte("s")
	keyActive  = []byte("t")
)

// ErrCompactRange reports a summary that does not fit the transcript: it
// covers entries that were never appended, or goes back before the
// current summary.
var ErrCompactRange = errors.New("store: summary range does not fit the transcript")

// AppendEntries appends data as new entries of thread t, numbered after the
// last one, and returns the last sequence number assigned. The entries are
// on disk when it returns.
func (db *DB) AppendEntries(ctx context.Context, t core.Thread, data ...[]byte) (uint64, error) {
	if err := t.Validate(); err != nil {
		return 0, fmt.Errorf("store: append: %w", err)
	}
	if len(data) == 0 {
		return 0, fmt.Errorf("store: append to %s: no entries", t.Key())
	}
	at := db.now()
	var last uint64
	err := db.write(ctx, func(tx *bolt.Tx) error {
		tb, err := threadBucket(tx, t)
		if err != nil {
			return err
		}
		entries, err := tb.CreateBucketIfNotExists(keyEntries)
		if err != nil {
			return err
		}
		for _, d := range data {
			seq, err := entries.NextSequence()
			if err != nil {
				return err
			}
			if err := entries.Put(u64(seq), encodeEntry(at, d)); err != nil {
				return err
			}
			last = seq
		}
		return tb.Put(keyActive, i64(at.UnixNano()))
	})
	if err != nil {
		return 0, fmt.Errorf("store: append to %s: %w", t.Key(), err)
	}
	return last, nil
}

// LoadTranscript returns thread t's summary and its live entries (Seq >
// summary.UpTo) in order. A thread never written to has a zero summary and
// no entries.
func (db *DB) LoadTranscript(ctx context.Context, t core.Thread) (core.Summary, []core.Entry, error) {
	var (
		sum     core.Summary
		entries []core.Entry
	)
	err := db.read(ctx, func(tx *bolt.Tx) error {
		tb := tx.Bucket(bucketThreads).Bucket([]byte(t.Key()))
		if tb == nil {
			return nil
		}
		if v := tb.Get(keySummary); v != nil {
			if err := json.Unmarshal(v, &sum); err != nil {
				return fmt.Errorf("decode summary: %w", err)
			}
		}
		var err error
		entries, err = readEntries(tb.Bucket(keyEntries))
		return err
	})
	if err != nil {
		return core.Summary{}, nil, fmt.Errorf("store: load %s: %w", t.Key(), err)
	}
	return sum, entries, nil
}

// Archived returns the entries of thread t that compaction moved out of the
// live transcript, in order. Full tool results stay here.
func (db *DB) Archived(ctx context.Context, t core.Thread) ([]core.Entry, error) {
	var entries []core.Entry
	err := db.read(ctx, func(tx *bolt.Tx) error {
		tb := tx.Bucket(bucketThreads).Bucket([]byte(t.Key()))
		if tb == nil {
			return nil
		}
		var err error
		entries, err = readEntries(tb.Bucket(keyArchive))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: archive of %s: %w", t.Key(), err)
	}
	return entries, nil
}

// Compact stores s as thread t's summary and moves every live entry with
// Seq <= s.UpTo to the archive, in one transaction. A summary covering
// entries never appended, or older than the current one, fails with
// ErrCompactRange and changes nothing.
func (db *DB) Compact(ctx context.Context, t core.Thread, s core.Summary) error {
	if err := t.Validate(); err != nil {
		return fmt.Errorf("store: compact: %w", err)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("store: compact %s: %w", t.Key(), err)
	}
	err = db.write(ctx, func(tx *bolt.Tx) error {
		tb, err := threadBucket(tx, t)
		if err != nil {
			return err
		}
		live, err := tb.CreateBucketIfNotExists(keyEntries)
		if err != nil {
			return err
		}
		if s.UpTo > live.Sequence() {
			return fmt.Errorf("%w: up to %d, last entry is %d", ErrCompactRange, s.UpTo, live.Sequence())
		}
		if v := tb.Get(keySummary); v != nil {
			var prev core.Summary
			if err := json.Unmarshal(v, &prev); err != nil {
				return fmt.Errorf("decode summary: %w", err)
			}
			if s.UpTo < prev.UpTo {
				return fmt.Errorf("%w: up to %d, current summary covers up to %d", ErrCompactRange, s.UpTo, prev.UpTo)
			}
		}
		archive, err := tb.CreateBucketIfNotExists(keyArchive)
		if err != nil {
			return err
		}
		limit := u64(s.UpTo)
		c := live.Cursor()
		for k, v := c.First(); k != nil && bytes.Compare(k, limit) <= 0; k, v = c.First() {
			if err := archive.Put(k, v); err != nil {
				return err
			}
			if err := c.Delete(); err != nil {
				return err
			}
		}
		if err := tb.Put(keySummary, raw); err != nil {
			return err
		}
		return tb.Put(keyActive, i64(db.now().UnixNano()))
	})
	if err != nil {
		return fmt.Errorf("store: compact %s: %w", t.Key(), err)
	}
	return nil
}

// ThreadKnown reports whether thread t has any transcript entry or
// journaled inbound message: whether the bot is part of the conversation.
func (db *DB) ThreadKnown(ctx context.Context, t core.Thread) (bool, error) {
	var known bool
	err := db.read(ctx, func(tx *bolt.Tx) error {
		known = tx.Bucket(bucketThreads).Bucket([]byte(t.Key())) != nil
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("store: thread %s: %w", t.Key(), err)
	}
	return known, nil
}

// threadBucket returns thread t's bucket, creating it.
func threadBucket(tx *bolt.Tx, t core.Thread) (*bolt.Bucket, error) {
	return tx.Bucket(bucketThreads).CreateBucketIfNotExists([]byte(t.Key()))
}

func encodeEntry(at time.Time, data []byte) []byte {
	v := make([]byte, 8+len(data))
	copy(v, i64(at.UnixNano()))
	copy(v[8:], data)
	return v
}

// readEntries copies every entry of b: bbolt's bytes are valid only for the
// life of the transaction.
func readEntries(b *bolt.Bucket) ([]core.Entry, error) {
	if b == nil {
		return nil, nil
	}
	var out []core.Entry
	err := b.ForEach(func(k, v []byte) error {
		if len(k) != 8 || len(v) < 8 {
			return fmt.Errorf("corrupt entry %x", k)
		}
		out = append(out, core.Entry{
			Seq:  getU64(k),
			At:   time.Unix(0, getI64(v[:8])).UTC(),
			Data: bytes.Clone(v[8:]),
		})
		return nil
	})
	return out, err
}

// ThreadInfo describes one stored conversation.
type ThreadInfo struct {
	Thread core.Thread `json:"thread"`
	// Active is its last activity.
	Active time.Time `json:"active"`
	// Entries and Archived count its live and archived transcript entries.
	Entries  int `json:"entries"`
	Archived int `json:"archived"`
}

// Threads lists every stored conversation, most recently active first.
func (db *DB) Threads(ctx context.Context) ([]ThreadInfo, error) {
	var out []ThreadInfo
	err := db.read(ctx, func(tx *bolt.Tx) error {
		threads := tx.Bucket(bucketThreads)
		return threads.ForEachBucket(func(k []byte) error {
			t, err := core.ParseThread(string(k))
			if err != nil {
				return nil // not a conversation this version names
			}
			tb := threads.Bucket(k)
			info := ThreadInfo{Thread: t, Active: time.Unix(0, getI64(tb.Get(keyActive))).UTC()}
			if b := tb.Bucket(keyEntries); b != nil {
				info.Entries = b.Stats().KeyN
			}
			if b := tb.Bucket(keyArchive); b != nil {
				info.Archived = b.Stats().KeyN
			}
			out = append(out, info)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("store: list threads: %w", err)
	}
	slices.SortFunc(out, func(a, b ThreadInfo) int { return b.Active.Compare(a.Active) })
	return out, nil
}
