package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/neobot/neobot/core"

	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// calls makes n calls of name, IDs c1…cn.
func calls(n int, name string) []llm.ToolCall {
	out := make([]llm.ToolCall, n)
	for i := range out {
		out[i] = call(fmt.Sprint("c", i+1), name, fmt.Sprintf(`{"n":%d}`, i+1))
	}
	return out
}

// TestFanOutBounded: of twelve calls in one reply, eight run, at most four
// at a time; the other four are answered "not run" and count as no tool's
// failure.
func TestFanOutBounded(t *testing.T) {
	h := newHarness(t, nil)
	var (
		mu           sync.Mutex
		active, peak int
		entered      = make(chan struct{}, 16)
		release      = make(chan struct{})
	)
	h.tools.fn = func(ctx context.Context, name string, args map[string]any) (string, bool, error) {
		mu.Lock()
		active++
		peak = max(peak, active)
		mu.Unlock()
		entered <- struct{}{}
		<-release
		mu.Lock()
		active--
		mu.Unlock()
		return "read", false, nil
	}
	h.srv.Enqueue(llmtest.Calls(calls(12, "fs__read_file")...), llmtest.Text("done"))
	done := make(chan error, 1)
	go func() { done <- h.run(t, inbound("E1", "read everything")) }()
	for range DefaultMaxParallelCalls {
		<-entered
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	if n := len(h.tools.recorded()); n != DefaultMaxCallsPerStep {
		t.Errorf("dispatched %d calls, want %d", n, DefaultMaxCallsPerStep)
	}
	if peak != DefaultMaxParallelCalls {
		t.Errorf("at most %d calls ran at once, want %d", peak, DefaultMaxParallelCalls)
	}
	tm := toolMessages(h.srv.Requests()[1])
	if len(tm) != 12 {
		t.Fatalf("%d tool results, want one per call", len(tm))
	}
	for i, m := range tm {
		notRun := strings.Contains(m.Content, "not run")
		if notRun != (i >= DefaultMaxCallsPerStep) {
			t.Errorf("result %d = %q", i+1, m.Content)
		}
	}
	if says := h.rec.Says(); len(says) != 1 || says[0] != "done" {
		t.Errorf("Says = %q, want the answer (skipped calls are not failures)", says)
	}
}

// TestSpendsRunOneAtATime: several core_execute calls in one reply run one
// after another, in the model's order, beside the other calls.
func TestSpendsRunOneAtATime(t *testing.T) {
	h := newHarness(t, nil)
	var (
		mu         sync.Mutex
		spending   int
		overlapped bool
		order      []string
	)
	h.tools.fn = func(ctx context.Context, name string, args map[string]any) (string, bool, error) {
		if name != core.CoreExecute {
			return "ok", false, nil
		}
		mu.Lock()
		spending++
		overlapped = overlapped || spending > 1
		order = append(order, fmt.Sprint(args["n"]))
		mu.Unlock()
		mu.Lock()
		spending--
		mu.Unlock()
		return "paid", false, nil
	}
	reply := append(calls(3, core.CoreExecute), call("r1", "fs__read_file", `{}`))
	h.srv.Enqueue(llmtest.Calls(reply...), llmtest.Text("done"))
	if err := h.run(t, inbound("E1", "pay three people")); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if overlapped || strings.Join(order, ",") != "1,2,3" {
		t.Errorf("spends ran in order %v (overlapping: %v), want 1,2,3 one at a time", order, overlapped)
	}
}

// TestToolPanicContained: a tool that panics fails that call in-band; the
// turn goes on to an answer.
func TestToolPanicContained(t *testing.T) {
	h := newHarness(t, nil)
	h.tools.fn = func(ctx context.Context, name string, args map[string]any) (string, bool, error) {
		if name == "fs__write_file" {
			panic("nil map")
		}
		return "ok", false, nil
	}
	h.srv.Enqueue(llmtest.Calls(call("c1", "fs__write_file", `{}`), call("c2", "fs__read_file", `{}`)), llmtest.Text("partly done"))
	if err := h.run(t, inbound("E1", "write it")); err != nil {
		t.Fatalf("Run = %v", err)
	}
	tm := toolMessages(h.srv.Requests()[1])
	if len(tm) != 2 || !strings.Contains(tm[0].Content, "crashed") || tm[1].Content != "ok" {
		t.Errorf("tool results = %+v, want the panic as an in-band error beside the other result", tm)
	}
}

// restarting is a tool server restarting: a retryable error with a
// sentence for the model.
type restarting struct{}

func (restarting) Error() string { return "tools: server restarting" }
func (restarting) InBand() string {
	return "fs__read_file is temporarily unavailable: its server is restarting."
}

// TestRetryableToolFailure: a call that fails on its way to a restarting
// server is retried with backoff; core_execute never is, and when the
// retries run out the model reads the tool's own sentence.
func TestRetryableToolFailure(t *testing.T) {
	t.Run("natural tool recovers", func(t *testing.T) {
		h := newHarness(t, nil)
		n := 0
		h.tools.fn = func(ctx context.Context, name string, args map[string]any) (string, bool, error) {
			if n++; n <= 2 {
				return "", false, restarting{}
			}
			return "contents", false, nil
		}
		h.srv.Enqueue(llmtest.Calls(call("c1", "fs__read_file", `{}`)), llmtest.Text("done"))
		if err := h.run(t, inbound("E1", "read")); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if tm := toolMessages(h.srv.Requests()[1]); len(tm) != 1 || tm[0].Content != "contents" || n != 3 {
			t.Errorf("after %d dispatches the model read %+v, want the contents after two retries", n, tm)
		}
		if len(h.sl.all()) != 2 {
			t.Errorf("backed off %v, want twice", h.sl.all())
		}
	})
	t.Run("retries run out", func(t *testing.T) {
		h := newHarness(t, nil)
		h.tools.fn = func(ctx context.Context, name string, args map[string]any) (string, bool, error) {
			return "", false, restarting{}
		}
		h.srv.Enqueue(llmtest.Calls(call("c1", "fs__read_file", `{}`)), llmtest.Text("done"))
		if err := h.run(t, inbound("E1", "read")); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if tm := toolMessages(h.srv.Requests()[1]); len(tm) != 1 || !strings.Contains(tm[0].Content, "temporarily unavailable") {
			t.Errorf("model read %+v, want the tool's own sentence", tm)
		}
	})
	t.Run("core_execute is not retried", func(t *testing.T) {
		h := newHarness(t, nil)
		h.tools.fn = func(ctx context.Context, name string, args map[string]any) (string, bool, error) {
			return "", false, errors.Join(restarting{})
		}
		h.srv.Enqueue(llmtest.Calls(call("c1", core.CoreExecute, `{"intent":"pay"}`)), llmtest.Text("done"))
		if err := h.run(t, inbound("E1", "pay")); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if n := len(h.tools.recorded()); n != 1 {
			t.Errorf("core_execute dispatched %d times, want once", n)
		}
	})
}
