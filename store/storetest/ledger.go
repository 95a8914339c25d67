package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
)

func testLedger(t *testing.T, b Ledger) {
	ctx := context.Background()
	d1 := core.Delegation{Thread: thread("d1"), CallID: "call_1", IntentID: "int1", Prose: "send 5 USDC to bob", Requester: "U1", Started: epoch}
	d2 := core.Delegation{Thread: thread("d1"), CallID: "call_2", IntentID: "int2", Prose: "swap", Requester: "U1", Started: epoch.Add(time.Minute)}
	d3 := core.Delegation{Thread: thread("d2"), CallID: "call_1", IntentID: "int3", Prose: "stake", Requester: "U2", Started: epoch.Add(2 * time.Minute)}
	for _, d := range []core.Delegation{d3, d1, d2} {
		if err := b.SaveDelegation(ctx, d); err != nil {
			t.Fatalf("SaveDelegation(%s) = %v", d.IntentID, err)
		}
	}
	if got, err := b.DelegationFor(ctx, d3.Thread, "call_1"); err != nil || got.IntentID != "int3" || !got.Started.Equal(d3.Started) {
		t.Errorf("DelegationFor(d2, call_1) = %+v, %v; want int3", got, err)
	}
	if _, err := b.DelegationFor(ctx, d1.Thread, "call_9"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("DelegationFor(unknown) = %v, want ErrNotFound", err)
	}
	checkIntents(t, b, "int1", "int2", "int3")

	if err := b.FinishDelegation(ctx, d1.Thread, "call_1"); err != nil {
		t.Fatalf("FinishDelegation = %v", err)
	}
	if err := b.FinishDelegation(ctx, d1.Thread, "call_1"); err != nil {
		t.Errorf("FinishDelegation twice = %v, want nil", err)
	}
	if err := b.FinishDelegation(ctx, d1.Thread, "call_9"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("FinishDelegation(unknown) = %v, want ErrNotFound", err)
	}
	checkIntents(t, b, "int2", "int3")
	// A finished delegation is still found by its key, so a resumed turn
	// polls the same intent rather than submitting again.
	if got, err := b.DelegationFor(ctx, d1.Thread, "call_1"); err != nil || got.IntentID != "int1" {
		t.Errorf("DelegationFor(finished) = %+v, %v; want int1", got, err)
	}
}

func checkIntents(t *testing.T, b Ledger, want ...string) {
	t.Helper()
	ds, err := b.Delegations(context.Background())
	if err != nil {
		t.Fatalf("Delegations = %v", err)
	}
	var got []string
	for _, d := range ds {
		got = append(got, d.IntentID)
	}
	if len(got) != len(want) {
		t.Fatalf("Delegations = %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("Delegations = %v, want %v (oldest first)", got, want)
		}
	}
}

// GateLister lists gates by creation, for the approvals export.
type GateLister interface {
	core.GateStore
	GatesSince(ctx context.Context, since time.Time) ([]core.Gate, error)
}

// testGatesSince: the gates created at or after a time come back oldest
// first, decided ones with who decided and when.
func testGatesSince(t *testing.T, b GateLister) {
	ctx := context.Background()
	for i, tok := range []string{"g3", "g1", "g2"} {
		g := core.Gate{Token: tok, Thread: thread("since"), IntentID: "x" + tok, NodeID: "1", Question: "Send?",
			Options: []core.Option{{Label: "Approve", Approves: true}}, Requester: "U1", Allowed: []string{"U2"},
			Created: epoch.Add(time.Duration(2-i) * time.Minute), Expires: epoch.Add(time.Hour), State: core.GatePending}
		if err := b.CreateGate(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.UpdateGate(ctx, "g1", func(g *core.Gate) error {
		g.State, g.DecidedBy, g.DecidedAt, g.Answer = core.GateApproved, "U2", epoch.Add(5*time.Minute), "Approve"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got, err := b.GatesSince(ctx, epoch.Add(time.Minute))
	if err != nil || len(got) != 2 || got[0].Token != "g1" || got[1].Token != "g3" {
		t.Fatalf("GatesSince = %+v, %v; want g1, g3 (g2 is older)", got, err)
	}
	if g := got[0]; g.DecidedBy != "U2" || !g.DecidedAt.Equal(epoch.Add(5*time.Minute)) || g.State != core.GateApproved {
		t.Errorf("GatesSince's g1 = %+v; want approved by U2", g)
	}
}
