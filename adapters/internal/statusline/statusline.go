// Package statusline keeps the status message an adapter shows in each
// thread while a turn works: one message, edited in place at most once per
// interval, the latest status held back and shown by a timer when edits
// come faster. The package owns those timers, so none outlives its Close;
// the platform calls (post, edit, delete) stay in the adapter.
package statusline

import (
	"context"
	"sync"
	"time"
)

// Clock tells the time and runs f after d. Tests pass a fake; the zero
// Options use the real clock.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d. stop cancels the
	// call and reports whether it did (false once f has started).
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// Edit shows text in the status message id.
type Edit func(ctx context.Context, id, text string) error

// Options configure Lines. T is what the adapter itself remembers about a
// thread (see [Line.Ext]).
type Options[T any] struct {
	// Interval is the least time between two edits of one thread's status
	// message.
	Interval time.Duration
	// FlushTimeout bounds an edit made by a timer, which has no caller's
	// context (default 30 s).
	FlushTimeout time.Duration
	// FlushFailed, when set, hears of an edit made by a timer that failed;
	// an edit made during Update returns its error instead.
	FlushFailed func(key string, err error)
	// Keep reports whether a thread's Ext is worth remembering once its
	// turn has answered (a platform feature found missing there).
	Keep func(T) bool
	// Clock defaults to the real one.
	Clock Clock
}

// Lines holds the status line of each thread, by key. It is safe for
// concurrent use. The zero Lines is not usable; call [New].
type Lines[T any] struct {
	opts Options[T]

	mu sync.Mutex // guards m; taken before a Line's lock, never after
	m  map[string]*Line[T]

	// closeMu orders Close's Wait against the Adds of new timers: once
	// closed is set, no timer starts.
	closeMu sync.Mutex
	closed  bool
	timers  sync.WaitGroup
}

// New returns an empty Lines.
func New[T any](opts Options[T]) *Lines[T] {
	if opts.FlushTimeout <= 0 {
		opts.FlushTimeout = 30 * time.Second
	}
	if opts.Clock == nil {
		opts.Clock = realClock{}
	}
	return &Lines[T]{opts: opts, m: map[string]*Line[T]{}}
}

// With runs fn with the line of key locked, creating the line if needed.
// The *Line is valid only during fn.
func (s *Lines[T]) With(key string, fn func(*Line[T]) error) error {
	return s.with(key, false, fn)
}

// Finish is With for a call that ends the thread's turn (an answer, a
// notice): afterwards the line is forgotten unless it still shows a status
// message, has an edit scheduled, or its Ext is worth keeping, or another
// caller is waiting for it: a status posted by a caller that took the line
// before this Finish forgot it would be lost to the thread's next answer,
// which would then leave that status message in the thread.
func (s *Lines[T]) Finish(key string, fn func(*Line[T]) error) error {
	return s.with(key, true, fn)
}

// with runs fn with the line of key locked; finish says whether the call
// ends the turn (Finish).
func (s *Lines[T]) with(key string, finish bool, fn func(*Line[T]) error) error {
	l := s.get(key)
	defer s.release(key, l, finish)
	l.mu.Lock()
	defer l.mu.Unlock()
	return fn(l)
}

// Close stops new timers and waits for the scheduled edits to be made.
// Afterwards a held-back status waits for the thread's next Update or
// Clear. Lines stays usable.
func (s *Lines[T]) Close() {
	s.closeMu.Lock()
	s.closed = true
	s.closeMu.Unlock()
	s.timers.Wait()
}

// get returns the line of key, creating it if needed, and counts the
// caller among its holders until release.
func (s *Lines[T]) get(key string) *Line[T] {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.m[key]
	if !ok {
		l = &Line[T]{s: s, key: key}
		s.m[key] = l
	}
	l.holders++
	return l
}

// release ends a holder's use of l; with finish, l is forgotten if it is
// idle and no other caller holds it. The caller must not hold l's lock.
func (s *Lines[T]) release(key string, l *Line[T], finish bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l.holders--
	if !finish || l.holders > 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	keep := s.opts.Keep != nil && s.opts.Keep(l.Ext)
	if l.id == "" && l.stop == nil && !keep {
		delete(s.m, key)
	}
}

// startTimer reserves a place for a timer, and reports false once Close
// has begun.
func (s *Lines[T]) startTimer() bool {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return false
	}
	s.timers.Add(1)
	return true
}

// Line is one thread's status line. Its methods are called only inside
// [Lines.With] or [Lines.Finish], which hold its lock.
type Line[T any] struct {
	s   *Lines[T]
	key string
	mu  sync.Mutex

	holders int // callers between get and release; guarded by Lines.mu

	id       string // the status message, "" when none
	lastEdit time.Time
	pending  string      // the latest status not shown yet
	stop     func() bool // cancels the timer that shows pending; nil when none
	gen      int         // counts timers, so a late one knows it was cancelled

	// Ext is what the adapter remembers about the thread; the line's lock
	// guards it.
	Ext T
}

// ID returns the status message's ID, "" when the thread shows none.
func (l *Line[T]) ID() string { return l.id }

// Posted records id as the thread's new status message. Posting counts as
// an edit: the next one waits out the interval.
func (l *Line[T]) Posted(id string) {
	l.id, l.lastEdit = id, l.s.opts.Clock.Now()
}

// Update shows text in the status message with edit now if the interval
// has passed since the last edit, and otherwise holds it back, replacing
// any status held back before, for a timer to show when the interval is
// up. After Close no timer starts: the status waits for the next Update.
// The line must have a status message (see [Line.Posted]).
func (l *Line[T]) Update(ctx context.Context, text string, edit Edit) error {
	wait := l.s.opts.Interval - l.s.opts.Clock.Now().Sub(l.lastEdit)
	if wait <= 0 && l.stop == nil {
		l.pending = ""
		return l.edit(ctx, edit, text)
	}
	l.pending = text // latest wins
	if l.stop == nil && l.s.startTimer() {
		l.gen++
		gen := l.gen
		l.stop = l.s.opts.Clock.AfterFunc(max(wait, 0), func() { l.flush(gen, edit) })
	}
	return nil
}

// Scheduled reports whether a timer will show a held-back status.
func (l *Line[T]) Scheduled() bool { return l.stop != nil }

// Clear cancels any held-back status and forgets the status message,
// returning its ID ("" when none) for the caller to replace or delete.
func (l *Line[T]) Clear() string {
	if l.stop != nil && l.stop() {
		l.s.timers.Done()
	}
	l.stop, l.pending = nil, ""
	id := l.id
	l.id = ""
	return id
}

func (l *Line[T]) edit(ctx context.Context, edit Edit, text string) error {
	l.lastEdit = l.s.opts.Clock.Now()
	return edit(ctx, l.id, text)
}

// flush shows the held-back status; it runs on timer gen's goroutine.
func (l *Line[T]) flush(gen int, edit Edit) {
	defer l.s.timers.Done()
	ctx, cancel := context.WithTimeout(context.Background(), l.s.opts.FlushTimeout)
	defer cancel()
	l.mu.Lock()
	defer l.mu.Unlock()
	if gen != l.gen || l.stop == nil {
		// Cleared while this timer was starting: a newer timer, if any,
		// owns the line's pending status.
		return
	}
	l.stop = nil
	if l.pending != "" && l.id != "" {
		if err := l.edit(ctx, edit, l.pending); err != nil && l.s.opts.FlushFailed != nil {
			l.s.opts.FlushFailed(l.key, err)
		}
	}
	l.pending = ""
}
