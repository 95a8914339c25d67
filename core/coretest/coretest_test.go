package coretest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
)

var _ core.GateStore = (*GateStore)(nil)
var _ core.Reporter = (*Recorder)(nil)

func TestGateStoreUpdate(t *testing.T) {
	ctx := context.Background()
	s := NewGateStore()
	g := core.Gate{Token: "t1", IntentID: "i1", NodeID: "n1", State: core.GatePending, Options: []core.Option{{Label: "yes", Approves: true}, {Label: "no"}}}
	if err := s.CreateGate(ctx, g); err != nil {
		t.Fatalf("CreateGate = %v", err)
	}
	if err := s.CreateGate(ctx, g); err == nil {
		t.Errorf("CreateGate(duplicate) = nil, want an error")
	}
	boom := errors.New("boom")
	got, err := s.UpdateGate(ctx, "t1", func(g *core.Gate) error {
		g.State = core.GateApproved
		g.Options[0].Label = "mutated"
		return boom
	})
	if !errors.Is(err, boom) || got.State != core.GatePending || got.Options[0].Label != "yes" {
		t.Errorf("UpdateGate(failing fn) = %+v, %v; want stored gate unchanged, boom", got, err)
	}
	if _, err := s.UpdateGate(ctx, "t1", func(g *core.Gate) error { g.State = core.GateDenied; return nil }); err != nil {
		t.Fatalf("UpdateGate = %v", err)
	}
	if got, _ := s.LoadGate(ctx, "t1"); got.State != core.GateDenied {
		t.Errorf("LoadGate after update: state = %s, want denied", got.State)
	}
	if _, err := s.UpdateGate(ctx, "nope", func(*core.Gate) error { return nil }); !errors.Is(err, core.ErrGateUnknown) {
		t.Errorf("UpdateGate(unknown) = %v, want ErrGateUnknown", err)
	}
	if _, err := s.GateBound(ctx, "b2"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("GateBound(missing) = %v, want ErrNotFound", err)
	}
	for _, tok := range []string{"t2", "t3"} {
		if err := s.CreateGate(ctx, core.Gate{Token: tok, IntentID: "i1", NodeID: "n1", Binding: "b1"}); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := s.GateBound(ctx, "b1"); got.Token != "t3" {
		t.Errorf("GateBound(b1) = %s, want the most recent t3", got.Token)
	}
}

// The ledger's contract is checked by storetest (conformance_test.go);
// Finished is the fake's own.
func TestLedgerFinished(t *testing.T) {
	ctx := context.Background()
	l := NewLedger()
	th := core.Thread{Platform: "slack", Workspace: "T", Channel: "C", ID: "1"}
	for _, id := range []string{"c1", "c2"} {
		if err := l.SaveDelegation(ctx, core.Delegation{Thread: th, CallID: id, IntentID: "i-" + id, Started: time.Unix(1, 0)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"c2", "c2", "c1"} {
		if err := l.FinishDelegation(ctx, th, id); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, d := range l.Finished() {
		got = append(got, d.IntentID)
	}
	if len(got) != 2 || got[0] != "i-c2" || got[1] != "i-c1" {
		t.Errorf("Finished = %v, want [i-c2 i-c1]: each once, in the order finished", got)
	}
}

func TestRecorderWait(t *testing.T) {
	var r Recorder
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		r.Status(ctx, "working")
		r.Say(ctx, "one")
		r.Say(ctx, "two")
	}()
	got, err := r.WaitSays(ctx, 2)
	if err != nil || len(got) != 2 || got[1] != "two" {
		t.Fatalf("WaitSays(2) = %q, %v; want [one two]", got, err)
	}
	short, cancelShort := context.WithCancel(ctx)
	cancelShort()
	if _, err := r.WaitSays(short, 3); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitSays(3) on a cancelled ctx = %v, want context.Canceled", err)
	}
}
