// Package progress keeps each thread's progress board while its turn calls
// tools, the way every chat adapter does: one board per thread, made at
// the turn's first step and taken when the turn is done, guarded by a lock
// of its own, ended once, and shown at most once per interval, a change
// that comes sooner shown by one timer when the interval has passed. What
// a board holds and how it shows (Slack's task cards, Discord's progress
// message) stays in the adapter, whose board type embeds [Board].
package progress

import (
	"context"
	"sync"
	"time"

	"github.com/neobot/neobot/adapters/internal/perthread"
)

// Board is the part of a progress board every adapter keeps the same way.
// An adapter's board type embeds it; its zero value is a board nobody has
// shown yet.
type Board struct {
	mu    sync.Mutex
	ended bool
	last  time.Time   // the last show
	timer *time.Timer // a paced show waiting
}

// Lock locks the board: the adapter's fields, and the methods below, are
// used with it held.
func (b *Board) Lock() { b.mu.Lock() }

// Unlock unlocks the board.
func (b *Board) Unlock() { b.mu.Unlock() }

// End marks the board's turn ended: [Boards.Open] no longer returns it.
func (b *Board) End() { b.ended = true }

// Ended reports whether the board's turn has ended.
func (b *Board) Ended() bool { return b.ended }

// Shown records that the board was shown now: the next show waits an
// interval from here.
func (b *Board) Shown() { b.last = time.Now() }

// Stop drops a paced show that is waiting, if any.
func (b *Board) Stop() {
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
}

func (b *Board) board() *Board { return b }

// Boards holds one board per thread. B is the adapter's board type, which
// embeds Board; the map's Get, Peek and Take hand boards out unlocked.
type Boards[B any, P interface {
	*B
	board() *Board
}] struct {
	perthread.Map[B]
	// Interval is the least time between two shows of a board.
	Interval time.Duration
	// Timeout bounds a paced show, which runs after the call that asked
	// for it has returned.
	Timeout time.Duration
	// Failed is told the error of a paced show; nil drops it.
	Failed func(thread string, err error)
}

// Open returns thread key's board, made on first use, locked; nil when its
// turn has ended.
func (s *Boards[B, P]) Open(key string) *B {
	v := s.Get(key)
	b := P(v).board()
	b.mu.Lock()
	if b.ended {
		b.mu.Unlock()
		return nil
	}
	return v
}

// End takes thread key's board and returns it locked, its turn ended; nil
// when the thread has none.
func (s *Boards[B, P]) End(key string) *B {
	v := s.Take(key)
	if v == nil {
		return nil
	}
	b := P(v).board()
	b.mu.Lock()
	b.ended = true
	return v
}

// Due reports whether board v, locked, may be shown now.
func (s *Boards[B, P]) Due(v *B) bool {
	return time.Since(P(v).board().last) >= s.Interval
}

// Show shows board v of thread key, locked, at the pace: show runs now
// when an interval has passed since the last show, and Show returns its
// error; otherwise it runs once the interval has passed, with the board
// locked, under a context of Timeout, unless a show is already waiting,
// which shows the latest state then. show itself says when a waiting show
// has nothing left to do (the board was handed over, its stream closed).
func (s *Boards[B, P]) Show(ctx context.Context, key string, v *B, show func(ctx context.Context) error) error {
	b := P(v).board()
	wait := s.Interval - time.Since(b.last)
	if wait <= 0 {
		return show(ctx)
	}
	if b.timer != nil {
		return nil
	}
	b.timer = time.AfterFunc(wait, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.timer = nil
		ctx, cancel := context.WithTimeout(context.Background(), s.Timeout)
		defer cancel()
		if err := show(ctx); err != nil && s.Failed != nil {
			s.Failed(key, err)
		}
	})
	return nil
}
