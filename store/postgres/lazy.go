package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/neobot/neobot/core"
)

// lazyDelay is the longest entries appended with AppendEntriesLater wait
// for the thread's next append to carry them, before they commit on
// their own (the bbolt store's delay for its lazy writes).
const lazyDelay = 50 * time.Millisecond

// maxNumbers bounds lazyAppends.numbers: a process that reads many
// transcripts (the web's list, an admin) forgets the numbers it read
// rather than keep them all.
const maxNumbers = 4096

// lazyEntries are entries of one thread appended with AppendEntriesLater
// and not committed yet.
type lazyEntries struct {
	after int64 // the thread's last number they were numbered after
	data  [][]byte
	at    int64 // when they were appended (unix ns)
	timer *time.Timer
	// flushed is made when a write took the entries, and closed once it
	// committed them or failed; nil while they wait.
	flushed chan struct{}
}

// AppendEntriesLater is AppendEntries without waiting for the disk: the
// entries commit with the thread's next append (in the same statement,
// before its entries), before any other read or write of the thread's
// transcript here, or on their own after 50 ms, whichever comes first.
// A crash before then loses them. The agent appends a turn's user
// message this way: the journal keeps the message until its turn
// completes, so a lost record only means the resumed turn starts afresh,
// and the turn's next durable step (an append) pays for both.
//
// It numbers the entries at once, after those the thread's transcript
// held when this instance last read it (LoadTranscript) and those
// appended lazily since. That numbering holds while nothing else appends
// to the thread meanwhile, which the conversation hub ensures (one turn
// per thread, in the instance that claims it); if something did, the
// entries still go in, in order, after it, and the moved numbers are
// logged. With no number read, it appends at once, as AppendEntries.
func (db *DB) AppendEntriesLater(ctx context.Context, t core.Thread, data ...[]byte) (uint64, error) {
	if err := checkAppend(t, data); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	key := t.Key()
	db.lazyMu.Lock()
	for {
		le := db.lazy[key]
		if le == nil {
			break
		}
		if le.flushed == nil {
			le.data = append(le.data, data...)
			last := le.after + int64(len(le.data))
			db.lazyMu.Unlock()
			return uint64(last), nil
		}
		ch := le.flushed
		db.lazyMu.Unlock()
		<-ch
		db.lazyMu.Lock()
	}
	after, ok := db.numbers[key]
	if !ok {
		db.lazyMu.Unlock()
		return db.AppendEntries(ctx, t, data...)
	}
	delete(db.numbers, key)
	le := &lazyEntries{after: after, data: data, at: db.now().UnixNano()}
	le.timer = time.AfterFunc(lazyDelay, func() { db.flushLazy(key, le) })
	db.lazy[key] = le
	db.lazyMu.Unlock()
	return uint64(after) + uint64(len(data)), nil
}

// checkAppend refuses an append that cannot be stored.
func checkAppend(t core.Thread, data [][]byte) error {
	if err := t.Validate(); err != nil {
		return fmt.Errorf("postgres: append: %w", err)
	}
	if len(data) == 0 {
		return fmt.Errorf("postgres: append to %s: no entries", t.Key())
	}
	return nil
}

// takeLazy takes the thread's lazy entries for a write to commit, and
// returns them (nil when there are none). A flush already under way is
// waited for first, so the thread's entries go in order. The caller
// commits them and calls doneLazy.
func (db *DB) takeLazy(key string) *lazyEntries {
	db.lazyMu.Lock()
	defer db.lazyMu.Unlock()
	delete(db.numbers, key) // whatever is written now moves the numbers on
	for {
		le := db.lazy[key]
		if le == nil {
			return nil
		}
		if le.flushed == nil {
			le.timer.Stop()
			le.flushed = make(chan struct{})
			return le
		}
		ch := le.flushed
		db.lazyMu.Unlock()
		<-ch
		db.lazyMu.Lock()
	}
}

// doneLazy ends the write that took le.
func (db *DB) doneLazy(key string, le *lazyEntries) {
	db.lazyMu.Lock()
	defer db.lazyMu.Unlock()
	if db.lazy[key] == le {
		delete(db.lazy, key)
	}
	close(le.flushed)
}

// flushLazy commits le on its own, when no append carried it within
// lazyDelay.
func (db *DB) flushLazy(key string, le *lazyEntries) {
	db.lazyMu.Lock()
	if db.lazy[key] != le || le.flushed != nil {
		db.lazyMu.Unlock()
		return // taken by a write meanwhile
	}
	le.flushed = make(chan struct{})
	db.lazyMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	db.commitLazy(ctx, key, le)
}

// commitLazy appends le's entries alone and ends its write.
func (db *DB) commitLazy(ctx context.Context, key string, le *lazyEntries) {
	defer db.doneLazy(key, le)
	last, err := db.appendKey(ctx, key, le.at, le.data)
	if err != nil {
		db.log.Error().Err(db.diskFull(err)).Str("thread", key).Msg("postgres: a deferred transcript entry was not stored; the turn's message stays in the journal")
		return
	}
	db.checkNumbers(key, le, last, len(le.data))
}

// checkNumbers logs lazy entries that were stored under other numbers
// than AppendEntriesLater gave them: something else appended to the
// thread meanwhile.
func (db *DB) checkNumbers(key string, le *lazyEntries, last int64, n int) {
	if want := le.after + int64(n); last != want {
		db.log.Warn().Str("thread", key).Int64("last", last).Int64("numbered", want).Msg("postgres: a deferred transcript entry was numbered while something else appended to its thread")
	}
}

// settleLazy commits the thread's lazy entries now, if any: a read or a
// change of its transcript sees them.
func (db *DB) settleLazy(ctx context.Context, key string) {
	if le := db.takeLazy(key); le != nil {
		db.commitLazy(ctx, key, le)
	}
}

// flushAllLazy commits every thread's lazy entries (Close).
func (db *DB) flushAllLazy(ctx context.Context) {
	db.lazyMu.Lock()
	keys := make([]string, 0, len(db.lazy))
	for key := range db.lazy {
		keys = append(keys, key)
	}
	db.lazyMu.Unlock()
	for _, key := range keys {
		db.settleLazy(ctx, key)
	}
}

// numbered remembers the last entry number of a thread's transcript as
// LoadTranscript read it, for AppendEntriesLater.
func (db *DB) numbered(key string, last int64) {
	db.lazyMu.Lock()
	defer db.lazyMu.Unlock()
	if len(db.numbers) >= maxNumbers {
		clear(db.numbers)
	}
	db.numbers[key] = last
}
