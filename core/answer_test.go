package core_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
)

// TestGatesAnswer: every click, on every platform, comes to the same
// decision and the same sentence.
func TestGatesAnswer(t *testing.T) {
	tests := []struct {
		name        string
		selfApprove bool
		user        string
		idx         int
		before      func(g *core.Gates, token string, clk *coretest.Clock)
		wantState   core.GateState
		wantRedraw  bool
		refusal     string // substring, "" for a click that decided
	}{
		{name: "approver approves", user: "U-admin", idx: 0, wantState: core.GateApproved, wantRedraw: true},
		{name: "approver denies", user: "U-admin", idx: 1, wantState: core.GateDenied, wantRedraw: true},
		{name: "requester without self-approval", user: "U1", idx: 0, wantState: core.GatePending, refusal: "only a configured approver"},
		{name: "requester with self-approval", selfApprove: true, user: "U1", idx: 0, wantState: core.GateApproved, wantRedraw: true},
		{name: "stranger with self-approval", selfApprove: true, user: "U-mallory", idx: 0, wantState: core.GatePending, refusal: "only <@U1> or a configured approver"},
		{name: "no such option", user: "U-admin", idx: 7, wantState: core.GatePending, refusal: "isn't one of this request's options"},
		{name: "double click", user: "U-admin", idx: 0, wantState: core.GateApproved, wantRedraw: true, refusal: "already answered",
			before: func(g *core.Gates, token string, _ *coretest.Clock) {
				_, _ = g.Answer(context.Background(), token, 0, "U-admin", nil)
			}},
		{name: "expired", user: "U-admin", idx: 0, wantState: core.GateExpired, wantRedraw: true, refusal: "expired",
			before: func(_ *core.Gates, _ string, clk *coretest.Clock) { clk.Advance(time.Hour) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := coretest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
			store := coretest.NewGateStore()
			gates := core.NewGates(core.GatesOptions{Store: store, SelfApprove: tt.selfApprove, TTL: 30 * time.Minute, Clock: clk})
			g, _, err := gates.Open(t.Context(), gateReq("n1"), []string{"U-admin"})
			if err != nil {
				t.Fatal(err)
			}
			if tt.before != nil {
				tt.before(gates, g.Token, clk)
			}
			c, err := gates.Answer(t.Context(), g.Token, tt.idx, tt.user, nil)
			if err != nil {
				t.Fatalf("Answer = %v", err)
			}
			stored, _ := store.LoadGate(t.Context(), g.Token)
			if stored.State != tt.wantState || c.Redraw != tt.wantRedraw {
				t.Errorf("after the click: stored %s, redraw %v; want %s, %v", stored.State, c.Redraw, tt.wantState, tt.wantRedraw)
			}
			if c.Redraw && c.Gate.State != stored.State {
				t.Errorf("the message would be redrawn as %s, but the gate is %s", c.Gate.State, stored.State)
			}
			if (tt.refusal == "") != (c.Refusal == "") || !strings.Contains(c.Refusal, tt.refusal) {
				t.Errorf("refusal %q, want one saying %q", c.Refusal, tt.refusal)
			}
		})
	}
	t.Run("unknown token", func(t *testing.T) {
		gates := core.NewGates(core.GatesOptions{Store: coretest.NewGateStore()})
		c, err := gates.Answer(t.Context(), "forged", 0, "U-admin", nil)
		if err != nil || !c.Redraw || c.Gate.State != core.GateExpired || !strings.Contains(c.Refusal, "no longer pending") {
			t.Errorf("Answer(forged) = %+v, %v; want the message redrawn as expired and a sentence", c, err)
		}
	})
}

// stoppingUI is a GateUI whose platform connection is stopping.
type stoppingUI struct {
	posted chan core.Gate
}

func (u stoppingUI) PostGate(_ context.Context, g core.Gate) (string, error) {
	u.posted <- g
	return "C1:1", nil
}
func (stoppingUI) ShowGate(context.Context, core.Gate) {}
func (stoppingUI) Stopping() bool                      { return true }

// TestApproverStoppingKeepsGatePending: a turn cancelled while the
// platform is stopping leaves its gate pending for after the restart,
// whatever the cancellation's own cause.
func TestApproverStoppingKeepsGatePending(t *testing.T) {
	store := coretest.NewGateStore()
	gates := core.NewGates(core.GatesOptions{Store: store})
	ui := stoppingUI{posted: make(chan core.Gate, 1)}
	ask := gates.Approver(gateThread, "U1", []string{"U-admin"}, ui)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := ask(ctx, gateReq("n1"))
		done <- err
	}()
	g := <-ui.posted
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("ask = %v, want it cancelled", err)
	}
	if stored, _ := store.LoadGate(t.Context(), g.Token); stored.State != core.GatePending {
		t.Errorf("gate %s after a cancel while stopping, want pending", stored.State)
	}
}

// TestAskIdlesWhileWaiting: a turn waiting on a person gives up its slot
// for the wait and takes it back once the person has answered.
func TestAskIdlesWhileWaiting(t *testing.T) {
	store := coretest.NewGateStore()
	gates := core.NewGates(core.GatesOptions{Store: store})
	ui := stoppingUI{posted: make(chan core.Gate, 1)}
	var events []string
	idled := make(chan struct{})
	ctx := core.WithIdler(t.Context(), func() func(context.Context) {
		events = append(events, "idle")
		close(idled)
		return func(context.Context) { events = append(events, "resume") }
	})
	done := make(chan error, 1)
	go func() {
		_, err := gates.Ask(ctx, gateReq("n1"), []string{"U-admin"}, ui)
		done <- err
	}()
	g := <-ui.posted
	<-idled
	if _, err := gates.Answer(t.Context(), g.Token, 0, "U-admin", nil); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Ask = %v", err)
	}
	if strings.Join(events, ",") != "idle,resume" {
		t.Errorf("slot events = %v, want idle then resume", events)
	}
}
