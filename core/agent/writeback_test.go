package agent

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/neobot/neobot/core/llm/llmtest"
)

// TestWriteBackAfterTheTurn: the turn ends once its answer is posted,
// while memory is still being written; Close waits for the write-back.
func TestWriteBackAfterTheTurn(t *testing.T) {
	h := newHarness(t, nil)
	h.mem.hold = make(chan struct{})
	h.srv.Enqueue(llmtest.Text("hello"))
	if err := h.run(t, inbound("E1", "hi")); err != nil { // would block forever on a write-back inside the turn
		t.Fatalf("Run = %v", err)
	}
	if says := h.rec.Says(); len(says) != 1 || says[0] != "hello" {
		t.Errorf("Says = %q, want the answer before memory is written", says)
	}
	closed := make(chan struct{})
	go func() {
		h.agent.Close()
		close(closed)
	}()
	close(h.mem.hold)
	<-closed
	h.mem.mu.Lock()
	defer h.mem.mu.Unlock()
	if len(h.mem.written) != 1 {
		t.Errorf("write-backs after Close = %d, want 1", len(h.mem.written))
	}
}

// TestQuickWriteBackOnTheTurn: a write-back that returns at once runs on
// the turn, so it is done when Run returns, Close or not.
func TestQuickWriteBackOnTheTurn(t *testing.T) {
	h := newHarness(t, nil)
	h.mem.quick = true
	h.srv.Enqueue(llmtest.Text("hello"))
	if err := h.run(t, inbound("E1", "hi")); err != nil {
		t.Fatalf("Run = %v", err)
	}
	h.mem.mu.Lock()
	defer h.mem.mu.Unlock()
	if len(h.mem.written) != 1 || len(h.mem.written[0]) != 2 {
		t.Errorf("write-backs when Run returned = %v, want the turn's 2 messages", h.mem.written)
	}
}

// TestWriteBacksPastTheCapSkipped: with maxWriteBacks write-backs
// running, the next turn's is skipped, and the observer hears of it (the
// metric that shows a busy bot forgetting); the turn itself answers.
func TestWriteBacksPastTheCapSkipped(t *testing.T) {
	var (
		mu      sync.Mutex
		skipped int
	)
	h := newHarness(t, func(o *Options) {
		o.Observe = func(ev Event) {
			if ev.Kind == EventWriteBackSkipped {
				mu.Lock()
				skipped++
				mu.Unlock()
			}
		}
	})
	h.mem.hold = make(chan struct{})
	for i := range maxWriteBacks + 1 {
		h.srv.Enqueue(llmtest.Text("hello"))
		if err := h.run(t, inbound(fmt.Sprint("E", i), "hi")); err != nil {
			t.Fatalf("Run %d = %v", i, err)
		}
	}
	mu.Lock()
	got := skipped
	mu.Unlock()
	if got != 1 {
		t.Errorf("write-backs skipped = %d, want 1 (the one past %d running)", got, maxWriteBacks)
	}
	if says := h.rec.Says(); len(says) != maxWriteBacks+1 {
		t.Errorf("answers = %d, want every turn's", len(says))
	}
	close(h.mem.hold)
	h.agent.Close()
	h.mem.mu.Lock()
	defer h.mem.mu.Unlock()
	if len(h.mem.written) != maxWriteBacks {
		t.Errorf("write-backs made = %d, want %d", len(h.mem.written), maxWriteBacks)
	}
}

// TestPartialTurnTeachesNothing: a turn that ends in an honest partial is
// not written back, so what it did never becomes a pattern to repeat.
func TestPartialTurnTeachesNothing(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.StepBudget = 1 })
	h.srv.Enqueue(llmtest.Calls(call("c1", "fs__read_file", `{}`)))
	if err := h.run(t, inbound("E1", "loop")); err != nil {
		t.Fatalf("Run = %v", err)
	}
	h.agent.Close()
	if says := h.rec.Says(); len(says) != 1 || !strings.Contains(says[0], "couldn't finish") {
		t.Fatalf("Says = %q, want an honest partial", says)
	}
	h.mem.mu.Lock()
	defer h.mem.mu.Unlock()
	if len(h.mem.written) != 0 {
		t.Errorf("a partial turn was written back: %v", h.mem.written)
	}
}
