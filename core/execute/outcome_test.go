package execute

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
)

func TestStatusOf(t *testing.T) {
	for _, tc := range []struct {
		s    core.Spend
		want string
	}{
		{core.Spend{State: core.SpendCompleted}, "completed"},
		{core.Spend{State: core.SpendUnknown}, "unknown"},
		{core.Spend{State: core.SpendFailed}, "failed"},
		{core.Spend{State: core.SpendRefused}, "failed"},
		{core.Spend{State: core.SpendCancelled}, "cancelled"},
		{core.Spend{State: core.SpendDenied, Reason: "nobody approved it in time"}, "timeout"},
		{core.Spend{State: core.SpendDenied, DecidedBy: "UBOB", Reason: "in time, <@UBOB> denied it"}, "cancelled"},
		{core.Spend{State: core.SpendDenied, Reason: "nobody can approve spends here"}, "cancelled"},
	} {
		if got := statusOf(tc.s); got != tc.want {
			t.Errorf("statusOf(%s, %q, %q) = %s, want %s", tc.s.State, tc.s.DecidedBy, tc.s.Reason, got, tc.want)
		}
	}
}

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"abcd", 4, "abcd"},
		{"abcde", 4, "abcd… (5 bytes in all)"},
		{"abcé", 4, "abc… (5 bytes in all)"},
	} {
		if got := cut(tc.in, tc.n); got != tc.want {
			t.Errorf("cut(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// delegations records what an Executor says of its intents.
type delegations struct {
	mu              sync.Mutex
	saved, finished []string
}

func (d *delegations) SaveDelegation(_ context.Context, x core.Delegation) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.saved = append(d.saved, x.IntentID+" "+x.CallID+" "+x.Prose)
	return nil
}

func (d *delegations) FinishDelegation(_ context.Context, _ core.Thread, callID string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.finished = append(d.finished, callID)
	return nil
}

// TestPlanOfTwo: a plan's calls are asked and made in turn; the intent
// is recorded while it runs and finished after.
func TestPlanOfTwo(t *testing.T) {
	w := newWorld(t)
	d := &delegations{}
	exec, err := New(Options{Model: w.model, Tools: w.surface, Ledger: w.ledger, Skills: w.skills, Delegations: d})
	if err != nil {
		t.Fatal(err)
	}
	w.model.replies = []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
		{ID: "p1", Type: "function", Function: llm.FunctionCall{Name: "wallet__transfer", Arguments: `{"amount": 5, "currency": "USDC", "recipient": "alice"}`}},
		{ID: "p2", Type: "function", Function: llm.FunctionCall{Name: "wallet__transfer", Arguments: `{"amount": 6, "currency": "USDC", "recipient": "bob"}`}},
	}}}
	ctx := w.turn("CPAY", "E1")
	done := make(chan result, 1)
	go func() {
		out, err := exec.Run(ctx, "send 5 USDC to alice and 6 to bob")
		if err != nil {
			out = err.Error()
		}
		done <- result{out, err != nil}
	}()
	for range 2 {
		g, r, ok := w.gate(done)
		if !ok {
			t.Fatalf("a call was not asked: %+v", r)
		}
		if _, err := w.gates.Decide(context.Background(), g.Token, "UBOB", nil, Approve); err != nil {
			t.Fatal(err)
		}
	}
	r := <-done
	if r.isError || strings.Count(r.content, "completed") != 3 || len(w.sent()) != 2 {
		t.Errorf("Run = %+v, %d transfers; want both made", r, len(w.sent()))
	}
	id := IntentID(core.Inbound{Thread: core.Thread{Platform: "slack", Workspace: "T1", Channel: "CPAY", ID: "100.1"}, EventID: "E1"}, "call_1")
	if len(d.saved) != 1 || d.saved[0] != id+" call_1 send 5 USDC to alice and 6 to bob" || len(d.finished) != 1 || d.finished[0] != "call_1" {
		t.Errorf("delegations saved %q, finished %q", d.saved, d.finished)
	}
}
