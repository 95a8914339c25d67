// Package intaketest is the conversation hub and thread index in miniature,
// for adapter tests: the hub journals what an adapter submits, dedupes by
// event ID, and runs each message's turn the way the real hub does, with
// the platform's Prepare first.
package intaketest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
)

// Hub records submitted messages and runs a turn for each. Its zero value
// is not usable; call [NewHub].
type Hub struct {
	threads *Threads

	mu        sync.Mutex
	preparer  core.Preparer
	seen      map[string]bool
	journaled []core.Inbound
	turns     []*core.Inbound // the message as its turn saw it, by submission
	changed   chan struct{}
	respond   func(ctx context.Context, in core.Inbound)
	failNext  error
	wg        sync.WaitGroup
	ctx       context.Context // every turn's; Stop cancels it
	cancel    context.CancelFunc
}

// NewHub returns a hub that marks every accepted message's thread known
// in threads.
func NewHub(threads *Threads) *Hub {
	ctx, cancel := context.WithCancel(context.Background())
	return &Hub{threads: threads, seen: map[string]bool{}, changed: make(chan struct{}), ctx: ctx, cancel: cancel}
}

// Prepare sets the platform whose Prepare runs before each turn, as the
// real hub calls it on the attached platform.
func (h *Hub) Prepare(p core.Preparer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.preparer = p
}

// OnTurn sets what a turn does with its message (nothing by default).
func (h *Hub) OnTurn(f func(ctx context.Context, in core.Inbound)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.respond = f
}

// FailNext makes the next Submit fail with err, as a full disk would.
func (h *Hub) FailNext(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failNext = err
}

// Submit journals in and starts its turn; false means a duplicate.
func (h *Hub) Submit(ctx context.Context, in core.Inbound) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.failNext; err != nil {
		h.failNext = nil
		return false, err
	}
	if h.seen[in.EventID] {
		return false, nil
	}
	h.seen[in.EventID] = true
	h.threads.Add(in.Thread)
	h.journaled = append(h.journaled, in)
	h.turns = append(h.turns, nil)
	h.notifyLocked()
	i, prep, respond := len(h.turns)-1, h.preparer, h.respond
	h.wg.Go(func() {
		ctx := h.ctx
		if prep != nil && in.Unprepared() {
			in = prep.Prepare(ctx, in)
		}
		h.mu.Lock()
		h.turns[i] = &in
		h.notifyLocked()
		h.mu.Unlock()
		if respond != nil {
			respond(ctx, in)
		}
	})
	return true, nil
}

func (h *Hub) notifyLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// Journaled returns the messages submitted so far, as journaled.
func (h *Hub) Journaled() []core.Inbound {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.journaled)
}

// Wait returns the n-th (1-based) submitted message as its turn saw it,
// once that turn has started.
func (h *Hub) Wait(ctx context.Context, t testing.TB, n int) core.Inbound {
	t.Helper()
	for {
		h.mu.Lock()
		got, ch := len(h.journaled), h.changed
		if got >= n && h.turns[n-1] != nil {
			in := *h.turns[n-1]
			h.mu.Unlock()
			return in
		}
		h.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("hub got %d messages, want the turn of message %d", got, n)
		}
	}
}

// WaitTurns waits for every turn started so far to end; a turn still
// running 30 s later fails tb instead of hanging the test.
func (h *Hub) WaitTurns(tb testing.TB) {
	tb.Helper()
	h.wait(tb, 30*time.Second, "a turn still runs after 30 s")
}

// Stop cancels every running turn, as the real hub does at shutdown, and
// waits for them; a turn still running 10 s later fails tb instead of
// hanging the test.
func (h *Hub) Stop(tb testing.TB) {
	tb.Helper()
	h.cancel()
	h.wait(tb, 10*time.Second, "a turn still runs 10 s after it was cancelled (does its OnTurn ignore ctx?)")
}

func (h *Hub) wait(tb testing.TB, limit time.Duration, failure string) {
	tb.Helper()
	done := make(chan struct{})
	go func() {
		h.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		tb.Errorf("intaketest: %s", failure)
	}
}

// Threads is the store's thread index in miniature.
type Threads struct {
	mu    sync.Mutex
	known map[string]bool
}

// NewThreads returns an index that knows no thread.
func NewThreads() *Threads { return &Threads{known: map[string]bool{}} }

// Add marks t as a thread Neo is part of.
func (f *Threads) Add(t core.Thread) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.known[t.Key()] = true
}

// ThreadKnown reports whether t was added.
func (f *Threads) ThreadKnown(_ context.Context, t core.Thread) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.known[t.Key()], nil
}
