// Package fakeapi is the bookkeeping the platform fakes (slacktest,
// discordtest) share: the calls a fake received, the replies scripted for
// its next calls, and a change signal that wakes tests waiting for a call
// or any other change of the fake's state.
//
// A fake keeps one lock over its whole state and hands it to [New], so a
// test waiting on a condition sees a call and its effect (a posted message,
// say) together, never one without the other.
package fakeapi

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Recorder records calls of type C and holds scripted replies of type R,
// both keyed by a call's name (a Slack method, a Discord route).
type Recorder[C, R any] struct {
	mu      *sync.Mutex
	name    func(C) string
	limited func(retryAfter time.Duration) R

	changed chan struct{} // closed and replaced on every change
	calls   []C
	scripts map[string][]R
	unkept  bool // Unrecorded: calls are not kept
}

// New returns a Recorder guarded by mu, the fake's own lock. name gives a
// call's name; limited builds the reply that rate-limits a call for
// retryAfter.
func New[C, R any](mu *sync.Mutex, name func(C) string, limited func(retryAfter time.Duration) R) *Recorder[C, R] {
	return &Recorder[C, R]{mu: mu, name: name, limited: limited, changed: make(chan struct{}), scripts: map[string][]R{}}
}

// NotifyLocked wakes every waiter; the fake's lock must be held.
func (r *Recorder[C, R]) NotifyLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// RecordLocked records c and wakes every waiter; the lock must be held.
func (r *Recorder[C, R]) RecordLocked(c C) {
	if !r.unkept {
		r.calls = append(r.calls, c)
	}
	r.NotifyLocked()
}

// UnrecordedLocked stops keeping calls, for long benchmarks whose millions
// of calls would otherwise stay in memory: Calls returns only those made
// before. The lock must be held.
func (r *Recorder[C, R]) UnrecordedLocked() { r.unkept = true }

// NextLocked takes the next reply scripted for name, if any; the lock must
// be held.
func (r *Recorder[C, R]) NextLocked(name string) (R, bool) {
	q := r.scripts[name]
	if len(q) == 0 {
		var zero R
		return zero, false
	}
	r.scripts[name] = q[1:]
	return q[0], true
}

// Script queues replies for name: its next calls answer with them, in
// order, before it answers normally again.
func (r *Recorder[C, R]) Script(name string, replies ...R) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scripts[name] = append(r.scripts[name], replies...)
}

// RateLimit makes the next n calls of name answer 429, asking the caller
// to retry after retryAfter.
func (r *Recorder[C, R]) RateLimit(name string, n int, retryAfter time.Duration) {
	for range n {
		r.Script(name, r.limited(retryAfter))
	}
}

// Calls returns the recorded calls of name, or every call when name is "".
func (r *Recorder[C, R]) Calls(name string) []C {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []C
	for _, c := range r.calls {
		if name == "" || r.name(c) == name {
			out = append(out, c)
		}
	}
	return out
}

// WaitCall waits for a call of name (any call when name is "") that
// satisfies pred (nil matches any) and returns the first such call.
func (r *Recorder[C, R]) WaitCall(ctx context.Context, name string, pred func(C) bool) (C, error) {
	var found C
	err := r.Wait(ctx, func() bool {
		for _, c := range r.calls {
			if (name == "" || r.name(c) == name) && (pred == nil || pred(c)) {
				found = c
				return true
			}
		}
		return false
	})
	if err != nil {
		return found, fmt.Errorf("wait for %s: %w", name, err)
	}
	return found, nil
}

// Wait blocks until cond, called with the lock held, is true or ctx ends.
func (r *Recorder[C, R]) Wait(ctx context.Context, cond func() bool) error {
	for {
		r.mu.Lock()
		ok := cond()
		ch := r.changed
		r.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
