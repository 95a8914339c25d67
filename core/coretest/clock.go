package coretest

import (
	"context"
	"sync"
	"time"
)

// Clock is a manual clock: its time moves only when a test calls Advance
// or Due, and timers fire then, never on their own. It serves both shapes
// of timer the code uses: channel timers ([Clock.NewTimer], what
// [core.Gates] waits on) and callbacks ([Clock.AfterFunc], what statusline
// flushes with).
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*timer
	changed chan struct{} // closed and replaced when a timer is armed
}

type timer struct {
	at   time.Time
	c    chan time.Time // NewTimer's channel, or nil
	f    func()         // AfterFunc's callback, or nil
	done bool           // fired or stopped
}

// NewClock returns a clock stopped at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t, changed: make(chan struct{})} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimer returns a channel that receives the clock's time once d has
// passed on it, and a stop function that cancels the timer and reports
// whether it did. A timer with d <= 0 has fired already.
func (c *Clock) NewTimer(d time.Duration) (<-chan time.Time, func() bool) {
	t := &timer{c: make(chan time.Time, 1)}
	return t.c, c.arm(t, d)
}

// AfterFunc calls f once d has passed on the clock, on the goroutine that
// moves the clock there; with d <= 0, at the next Advance (even by 0). stop
// cancels the call and reports whether it did.
func (c *Clock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	return c.arm(&timer{f: f}, d)
}

func (c *Clock) arm(t *timer, d time.Duration) func() bool {
	c.mu.Lock()
	t.at = c.now.Add(d)
	if t.c != nil && !t.at.After(c.now) {
		t.done = true
		t.c <- c.now
	} else {
		c.timers = append(c.timers, t)
	}
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		stopped := !t.done
		t.done = true
		return stopped
	}
}

// Advance moves the clock on by d, fires the channel timers then due and
// runs the callbacks then due, in the order they were armed.
func (c *Clock) Advance(d time.Duration) {
	for _, f := range c.Due(d) {
		f()
	}
}

// Due moves the clock on by d and fires the channel timers then due, like
// Advance, but returns the callbacks then due, marked fired, without
// running them: for a test that runs one at a moment of its choosing.
func (c *Clock) Due(d time.Duration) []func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.dueLocked()
}

func (c *Clock) dueLocked() []func() {
	var fs []func()
	live := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.done:
		case t.at.After(c.now):
			live = append(live, t)
		case t.c != nil:
			t.done = true
			t.c <- c.now // buffered: one send per timer
		default:
			t.done = true
			fs = append(fs, t.f)
		}
	}
	c.timers = live
	return fs
}

// Pending returns how many timers are armed and have neither fired nor
// been stopped.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if !t.done {
			n++
		}
	}
	return n
}

// WaitPending blocks until at least n timers are pending or ctx ends: a
// test waits for the code under test to arm its timer before it moves the
// clock past it.
func (c *Clock) WaitPending(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		ch := c.changed
		c.mu.Unlock()
		if c.Pending() >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
