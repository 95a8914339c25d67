package agent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// fakeBudget is a Budget that runs out once the model has been called
// after calls times; err, when set, is what counting fails with.
type fakeBudget struct {
	srv   *llmtest.Server
	after int
	err   error
	quiet bool // with err, no sentence

	mu    sync.Mutex
	asked int
}

func (b *fakeBudget) Exhausted(ctx context.Context, in core.Inbound) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.asked++
	if b.err != nil && b.quiet {
		return "", b.err
	}
	if b.err != nil {
		return "I can't tell how much of this channel's daily token budget is left just now.", b.err
	}
	if len(b.srv.Requests()) >= b.after {
		return "I've used today's token budget for this channel (5210 of 5000 tokens), so I stopped before finishing.", nil
	}
	return "", nil
}

// TestBudgetRunsOutMidTurn: a turn whose model keeps asking for tools
// stops at the daily budget before the model call past it, not at the
// end of the turn: the user is told why, and what the turn did, a spend
// with its outcome; the transcript holds every call's result and the
// stopping answer, so the turn is answered and never runs again.
func TestBudgetRunsOutMidTurn(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after int   // the budget is used up after this many model calls
		err   error // counting fails
		quiet bool  // and the budget says nothing
		want  string
		calls int // model calls made
	}{
		{name: "after the second call", after: 2, want: "token budget for this channel (5210 of 5000 tokens)", calls: 2},
		{name: "after the third call", after: 3, want: "token budget for this channel (5210 of 5000 tokens)", calls: 3},
		{name: "cannot be counted", after: 99, err: errors.New("disk gone"), want: "I can't tell how much of this channel's daily token budget is left", calls: 1},
		{name: "cannot be counted, nothing said", after: 99, err: errors.New("disk gone"), quiet: true, want: "I can't tell how much of the daily token budget here is left", calls: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &fakeBudget{after: tc.after, err: tc.err, quiet: tc.quiet}
			h := newHarness(t, func(o *Options) { o.Budget = b })
			b.srv = h.srv
			h.tools.fn = func(ctx context.Context, name string, args map[string]any) (string, bool, error) {
				if name == core.CoreExecute {
					return "Paid 5 USDC to 0xabc (tx 0x123).", false, nil
				}
				return "read", false, nil
			}
			h.srv.Enqueue(
				llmtest.Calls(call("c1", "core_execute", `{"task":"pay 5"}`)),
				llmtest.Calls(call("c2", "fs__read_file", `{"n":2}`)),
				llmtest.Calls(call("c3", "fs__read_file", `{"n":3}`)),
				llmtest.Calls(call("c4", "fs__read_file", `{"n":4}`)),
				llmtest.Text("all done"),
			)
			if err := h.run(t, inbound("E1", "pay and read")); err != nil {
				t.Fatalf("Run = %v", err)
			}
			if got := len(h.srv.Requests()); got != tc.calls {
				t.Errorf("model calls = %d, want %d: none after the budget ran out", got, tc.calls)
			}
			says := h.rec.Says()
			if len(says) != 1 || !strings.Contains(says[0], tc.want) || !strings.Contains(says[0], "core_execute: done (Paid 5 USDC to 0xabc (tx 0x123).)") {
				t.Fatalf("Says = %q, want one answer containing %q and the spend's outcome", says, tc.want)
			}
			if strings.Contains(says[0], "all done") {
				t.Errorf("Says = %q, want the turn stopped before the model's answer", says)
			}
			// Every call has its result, and the stopping answer is the
			// turn's final one, marked partial.
			recs := h.tr.records(testThread)
			answered := map[string]bool{}
			var asked []string
			for _, r := range recs {
				if r.Msg == nil {
					continue
				}
				for _, c := range r.Msg.ToolCalls {
					asked = append(asked, c.ID)
				}
				if r.Msg.Role == llm.RoleTool {
					answered[r.Msg.ToolCallID] = true
				}
			}
			for _, id := range asked {
				if !answered[id] {
					t.Errorf("tool call %s has no result in the transcript", id)
				}
			}
			if len(asked) != tc.calls {
				t.Errorf("tool calls in the transcript = %v, want %d", asked, tc.calls)
			}
			last := recs[len(recs)-1]
			if !last.Final || !last.Partial || last.EventID != "E1" || last.Msg.Content != says[0] {
				t.Errorf("last record = %+v, want the answer said, final and partial for E1", last)
			}
			// The turn is answered: running it again spends nothing.
			spends := 0
			for _, c := range h.tools.recorded() {
				if c.Name == core.CoreExecute {
					spends++
				}
			}
			if err := h.run(t, inbound("E1", "pay and read")); !errors.Is(err, core.ErrAnswered) || spends != 1 || len(h.srv.Requests()) != tc.calls {
				t.Errorf("run again = %v, %d spends, %d model calls; want ErrAnswered, one spend, no new call", err, spends, len(h.srv.Requests()))
			}
		})
	}
}

// TestBudgetNotAskedBeforeFirstCall: the first model call of a turn is
// checked before the turn runs (usage.Meter.Guard), so the agent asks
// only before the calls after it.
func TestBudgetNotAskedBeforeFirstCall(t *testing.T) {
	b := &fakeBudget{after: 99}
	h := newHarness(t, func(o *Options) { o.Budget = b })
	b.srv = h.srv
	h.srv.Enqueue(llmtest.Calls(call("c1", "fs__read_file", `{}`)), llmtest.Text("done"))
	if err := h.run(t, inbound("E1", "read")); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if b.asked != 1 {
		t.Errorf("budget asked %d times for two model calls, want once (before the second)", b.asked)
	}
	if says := h.rec.Says(); len(says) != 1 || says[0] != "done" {
		t.Errorf("Says = %q, want the answer", says)
	}
}
