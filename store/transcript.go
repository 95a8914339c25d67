package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"encoding/json"

	"github.com/neobot/neobot/core"
	bolt "go.etcd.io/bbolt"
)

// A thread's bucket, threads/<thread key>, holds plain keys only (schema
// version 2):
//
//	"e" + <seq>  live transcript entries
//	"a" + <seq>  entries moved out by compaction (the archive)
//	"s"          the consolidated summary (JSON)
//	"t"          last activity, unix nanoseconds (for retention)
//	"n"          the title its owner gave it (the web's rename)
//
// and the bucket's sequence is the last entry number handed out. With no
// nested buckets, a small thread's bucket is stored inline in its
// parent's page instead of taking a 4 KiB page of its own: a channel where
// every mention starts a thread grows by what its turns say, not by a page
// per thread. (Version 1 kept entries in nested "e" and "a" buckets;
// Open moves them.) Entry values are 8 bytes of unix nanoseconds followed
// by the entry's data.
var (
	keyEntries = []byte("e")
	keyArchive = []byte("a")
	keySummary = []byte("s")
	keyActive  = []byte("t")
)

// entryKey is the key of entry seq under prefix (keyEntries or
// keyArchive).
func entryKey(prefix []byte, seq uint64) []byte {
	k := make([]byte, 9)
	k[0] = prefix[0]
	binary.BigEndian.PutUint64(k[1:], seq)
	return k
}

// ErrCompactRange reports a summary that does not fit the transcript: it
// covers entries that were never appended, or goes back before the
// current summary.
var ErrCompactRange = errors.New("store: summary range does not fit the transcript")

// AppendEntries appends data as new entries of thread t, numbered after the
// last one, and returns the last sequence number assigned. The entries are
// on disk when it returns.
func (db *DB) AppendEntries(ctx context.Context, t core.Thread, data ...[]byte) (uint64, error) {
	if err := checkAppend(t, data); err != nil {
		return 0, err
	}
	at := db.now()
	var last uint64
	err := db.write(ctx, func(tx *bolt.Tx) error {
		tb, err := threadBucket(tx, t)
		if err != nil {
			return err
		}
		last, err = putEntries(tb, tb.Sequence(), at, data)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: append to %s: %w", t.Key(), err)
	}
	return last, nil
}

// checkAppend refuses an append that cannot be stored.
func checkAppend(t core.Thread, data [][]byte) error {
	if err := t.Validate(); err != nil {
		return fmt.Errorf("store: append: %w", err)
	}
	if len(data) == 0 {
		return fmt.Errorf("store: append to %s: no entries", t.Key())
	}
	return nil
}

// putEntries stores data as the entries of tb numbered after entry after,
// moves tb's sequence past them, marks tb active at at, and returns the
// last entry's number.
func putEntries(tb *bolt.Bucket, after uint64, at time.Time, data [][]byte) (uint64, error) {
	for i, d := range data {
		if err := tb.Put(entryKey(keyEntries, after+1+uint64(i)), encodeEntry(at, d)); err != nil {
			return 0, err
		}
	}
	last := after + uint64(len(data))
	if err := tb.SetSequence(last); err != nil {
		return 0, err
	}
	return last, tb.Put(keyActive, i64(at.UnixNano()))
}

// AppendEntriesLater is AppendEntries without waiting for the disk: the
// entries commit with the store's next durable write, in order before it,
// or on their own within 50 ms. A crash before then loses them. The agent
// appends a turn's first record this way: the journal holds the message
// until its turn completes, so a lost record only means the resumed turn
// starts afresh, and the turn's next durable step pays for both.
//
// It numbers the entries at once, after those stored and those appended
// lazily before. That numbering holds only while nothing else appends to t
// meanwhile, which the conversation hub ensures (one turn per thread at a
// time); if something did, the lazy entries are refused when their commit
// comes, and the failure is logged.
func (db *DB) AppendEntriesLater(ctx context.Context, t core.Thread, data ...[]byte) (uint64, error) {
	if err := checkAppend(t, data); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	key := t.Key()
	db.numbering.Lock()
	defer db.numbering.Unlock()
	after, ok := db.numbered[key]
	if !ok {
		err := db.bolt.View(func(tx *bolt.Tx) error {
			if tb := tx.Bucket(bucketThreads).Bucket([]byte(key)); tb != nil {
				after = tb.Sequence()
			}
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("store: append to %s: %w", key, err)
		}
	}
	last := after + uint64(len(data))
	db.numbered[key] = last
	at := db.now()
	db.group.later(func(tx *bolt.Tx) error {
		tb, err := threadBucket(tx, t)
		if err != nil {
			return err
		}
		if seq := tb.Sequence(); seq != after {
			return fmt.Errorf("store: append to %s: entries %d-%d were numbered after entry %d, but entry %d was appended meanwhile; they are dropped", key, after+1, last, after, seq)
		}
		_, err = putEntries(tb, after, at, data)
		return err
	}, func(error) {
		db.numbering.Lock()
		defer db.numbering.Unlock()
		if db.numbered[key] == last { // no later lazy append numbered after it
			delete(db.numbered, key)
		}
	})
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
		entries, err = readEntries(tb, keyEntries)
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
		entries, err = readEntries(tb, keyArchive)
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
		if s.UpTo > tb.Sequence() {
			return fmt.Errorf("%w: up to %d, last entry is %d", ErrCompactRange, s.UpTo, tb.Sequence())
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
		limit := entryKey(keyEntries, s.UpTo)
		var moved [][2][]byte
		c := tb.Cursor()
		for k, v := c.Seek(keyEntries); k != nil && k[0] == keyEntries[0] && bytes.Compare(k, limit) <= 0; k, v = c.Next() {
			moved = append(moved, [2][]byte{bytes.Clone(k), bytes.Clone(v)})
		}
		for _, kv := range moved {
			archived := bytes.Clone(kv[0])
			archived[0] = keyArchive[0]
			if err := tb.Put(archived, kv[1]); err != nil {
				return err
			}
			if err := tb.Delete(kv[0]); err != nil {
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

// flattenThreads moves every thread's entries out of the nested "e" and
// "a" buckets of schema 1 into the thread's own bucket, keeping their
// numbers, and carries the entry sequence over to the thread's bucket.
func flattenThreads(tx *bolt.Tx) error {
	threads := tx.Bucket(bucketThreads)
	var keys [][]byte
	if err := threads.ForEachBucket(func(k []byte) error { keys = append(keys, bytes.Clone(k)); return nil }); err != nil {
		return err
	}
	for _, k := range keys {
		tb := threads.Bucket(k)
		for _, prefix := range [][]byte{keyEntries, keyArchive} {
			nested := tb.Bucket(prefix)
			if nested == nil {
				continue
			}
			if bytes.Equal(prefix, keyEntries) {
				if err := tb.SetSequence(nested.Sequence()); err != nil {
					return err
				}
			}
			var moved [][2][]byte
			if err := nested.ForEach(func(seq, v []byte) error {
				if len(seq) != 8 {
					return fmt.Errorf("thread %s: corrupt entry %x", k, seq)
				}
				moved = append(moved, [2][]byte{entryKey(prefix, getU64(seq)), bytes.Clone(v)})
				return nil
			}); err != nil {
				return err
			}
			if err := tb.DeleteBucket(prefix); err != nil {
				return err
			}
			for _, kv := range moved {
				if err := tb.Put(kv[0], kv[1]); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// threadBucket returns thread t's bucket, creating it.
func threadBucket(tx *bolt.Tx, t core.Thread) (*bolt.Bucket, error) {
	tb, err := tx.Bucket(bucketThreads).CreateBucketIfNotExists([]byte(t.Key()))
	if err == nil {
		tb.FillPercent = packedFill // entries are appended in order
	}
	return tb, err
}

func encodeEntry(at time.Time, data []byte) []byte {
	v := make([]byte, 8+len(data))
	copy(v, i64(at.UnixNano()))
	copy(v[8:], data)
	return v
}

// readEntries copies every entry of tb under prefix (keyEntries or
// keyArchive), in order: bbolt's bytes are valid only for the life of the
// transaction.
func readEntries(tb *bolt.Bucket, prefix []byte) ([]core.Entry, error) {
	var out []core.Entry
	c := tb.Cursor()
	for k, v := c.Seek(prefix); k != nil && k[0] == prefix[0]; k, v = c.Next() {
		if len(k) != 9 || len(v) < 8 {
			return nil, fmt.Errorf("corrupt entry %x", k)
		}
		out = append(out, core.Entry{
			Seq:  getU64(k[1:]),
			At:   time.Unix(0, getI64(v[:8])).UTC(),
			Data: bytes.Clone(v[8:]),
		})
	}
	return out, nil
}

// countEntries counts tb's keys under prefix.
func countEntries(tb *bolt.Bucket, prefix []byte) int {
	n := 0
	c := tb.Cursor()
	for k, _ := c.Seek(prefix); k != nil && k[0] == prefix[0]; k, _ = c.Next() {
		n++
	}
	return n
}

// ThreadInfo describes one stored conversation.
type ThreadInfo struct {
	Thread core.Thread `json:"thread"`
	// Active is its last activity.
	Active time.Time `json:"active"`
	// Entries and Archived count its live and archived transcript entries.
	Entries  int `json:"entries"`
	Archived int `json:"archived"`
	// Title is the name its owner gave it (SetThreadTitle), "" for none.
	Title string `json:"title,omitempty"`
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
			info := ThreadInfo{Thread: t, Active: time.Unix(0, getI64(tb.Get(keyActive))).UTC(),
				Entries: countEntries(tb, keyEntries), Archived: countEntries(tb, keyArchive), Title: string(tb.Get(keyTitle))}
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
