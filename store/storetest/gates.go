package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
)

func testGates(t *testing.T, b core.GateStore) {
	ctx := context.Background()
	g := core.Gate{
		Token: "tok1", Thread: thread("g1"), IntentID: "int1", NodeID: "n1", Question: "Send 5 USDC?",
		Options: []core.Option{{Label: "yes", Approves: true}, {Label: "no"}}, Requester: "U1", Allowed: []string{"U2"},
		Created: epoch, Expires: epoch.Add(time.Hour), State: core.GatePending,
	}
	if err := b.CreateGate(ctx, g); err != nil {
		t.Fatalf("CreateGate = %v", err)
	}
	if err := b.CreateGate(ctx, g); err == nil {
		t.Errorf("CreateGate(same token) = nil, want an error")
	}
	got, err := b.LoadGate(ctx, "tok1")
	if err != nil || !gateEqual(got, g) {
		t.Fatalf("LoadGate = %+v, %v; want %+v", got, err, g)
	}
	if _, err := b.LoadGate(ctx, "forged"); !errors.Is(err, core.ErrGateUnknown) {
		t.Errorf("LoadGate(forged) = %v, want ErrGateUnknown", err)
	}

	// fn's error comes back unwrapped, with the gate as stored.
	refuse := errors.New("refused")
	got, err = b.UpdateGate(ctx, "tok1", func(g *core.Gate) error {
		g.State = core.GateApproved
		return refuse
	})
	if err != refuse || got.State != core.GatePending {
		t.Errorf("UpdateGate(fn fails) = state %s, %v; want pending, the fn's error itself", got.State, err)
	}
	if got, _ := b.LoadGate(ctx, "tok1"); got.State != core.GatePending {
		t.Errorf("after failed UpdateGate state = %s, want pending", got.State)
	}
	got, err = b.UpdateGate(ctx, "tok1", func(g *core.Gate) error {
		g.MessageRef = "C1/1700.1"
		g.Options = append(g.Options, core.Option{Label: "maybe"})
		return nil
	})
	if err != nil || got.MessageRef != "C1/1700.1" {
		t.Fatalf("UpdateGate = %+v, %v", got, err)
	}
	if got, _ := b.LoadGate(ctx, "tok1"); got.MessageRef != "C1/1700.1" || !slices.Equal(got.Options, []core.Option{{Label: "yes", Approves: true}, {Label: "no"}, {Label: "maybe"}}) {
		t.Errorf("LoadGate after UpdateGate = %+v, want the update stored", got)
	}
	if _, err := b.UpdateGate(ctx, "forged", func(*core.Gate) error { return nil }); !errors.Is(err, core.ErrGateUnknown) {
		t.Errorf("UpdateGate(forged) = %v, want ErrGateUnknown", err)
	}

	// GateBound finds the latest gate opened with a binding, and no other.
	g.Binding = "bind1"
	g2 := g
	g2.Token, g2.Created = "tok2", epoch.Add(time.Minute)
	if err := b.CreateGate(ctx, g2); err != nil {
		t.Fatal(err)
	}
	g3 := g
	g3.Token, g3.Binding, g3.Created = "tok3", "bind2", epoch.Add(2*time.Minute)
	if err := b.CreateGate(ctx, g3); err != nil {
		t.Fatal(err)
	}
	if got, err := b.GateBound(ctx, "bind1"); err != nil || got.Token != "tok2" {
		t.Errorf("GateBound(bind1) = %s, %v; want tok2", got.Token, err)
	}
	for _, binding := range []string{"bind3", ""} {
		if _, err := b.GateBound(ctx, binding); !errors.Is(err, core.ErrNotFound) {
			t.Errorf("GateBound(%q) = %v, want ErrNotFound", binding, err)
		}
	}
}

// testGatesFlow drives core.Gates over the backend: the approval flow the
// adapters rely on, including a restart finding the decided gate.
func testGatesFlow(t *testing.T, b core.GateStore) {
	ctx := context.Background()
	clock := epochClock()
	gates := core.NewGates(core.GatesOptions{Store: b, SelfApprove: true, Clock: clock})
	req := core.GateRequest{Thread: thread("f1"), IntentID: "int9", NodeID: "n1", Question: "Swap?", Options: []core.Option{{Label: "approve", Approves: true}, {Label: "deny"}}, Requester: "U1"}
	g, fresh, err := gates.Open(ctx, req, []string{"role:admins"})
	if err != nil || !fresh {
		t.Fatalf("Open = %v, %v; want a fresh gate", fresh, err)
	}
	steps := []struct {
		user  string
		roles []string
		opt   string
		want  error
	}{
		{"U9", nil, "approve", core.ErrGateForbidden},
		{"U1", nil, "maybe", core.ErrGateOption},
		{"U7", []string{"admins"}, "approve", nil},
		{"U1", nil, "deny", core.ErrGateClosed},
	}
	for _, s := range steps {
		if _, err := gates.Decide(ctx, g.Token, s.user, s.roles, s.opt); !errors.Is(err, s.want) {
			t.Errorf("Decide(%s, %s) = %v, want %v", s.user, s.opt, err, s.want)
		}
	}
	again, fresh, err := core.NewGates(core.GatesOptions{Store: b, SelfApprove: true, Clock: clock}).Open(ctx, req, nil)
	if err != nil || fresh || again.Token != g.Token || !again.Decision().Approved || again.DecidedBy != "U7" {
		t.Errorf("Open after restart = %+v, fresh %v, %v; want the approved gate", again, fresh, err)
	}
}

func gateEqual(a, b core.Gate) bool {
	return a.Token == b.Token && a.Thread == b.Thread && a.IntentID == b.IntentID && a.NodeID == b.NodeID &&
		a.Question == b.Question && slices.Equal(a.Options, b.Options) && a.Requester == b.Requester &&
		slices.Equal(a.Allowed, b.Allowed) && a.Created.Equal(b.Created) && a.Expires.Equal(b.Expires) &&
		a.State == b.State && a.Answer == b.Answer && a.DecidedBy == b.DecidedBy && a.DecidedAt.Equal(b.DecidedAt) &&
		a.Sent == b.Sent && a.MessageRef == b.MessageRef
}

// testGatesQuorum: a gate under a quorum keeps its votes, times and
// copies in the store: after a restart (new Gates over the backend) the
// first approval still counts and a second person completes it; two
// approvals landing at once both count, neither lost.
func testGatesQuorum(t *testing.T, b core.GateStore) {
	ctx := context.Background()
	clock := epochClock()
	q := &core.Quorum{Tier: "over 1000 USDC", Approvers: []string{"UA", "UB", "UC"}, Need: 2,
		RemindAfter: time.Hour, EscalateAfter: 2 * time.Hour, EscalateTo: []string{"UCFO"}, ExpireAfter: 3 * time.Hour}
	req := core.GateRequest{Thread: thread("q1"), IntentID: "int7", NodeID: "1", Question: "Send 2000 USDC?",
		Options: []core.Option{{Label: "Approve", Approves: true}, {Label: "Deny"}}, Requester: "U1", Quorum: q}
	g, _, err := core.NewGates(core.GatesOptions{Store: b, Clock: clock}).Open(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.UpdateGate(ctx, g.Token, func(g *core.Gate) error { g.Copies = []string{"D1:1", "D2:2"}; return nil }); err != nil {
		t.Fatal(err)
	}
	if c, err := core.NewGates(core.GatesOptions{Store: b, Clock: clock}).AnswerFrom(ctx, g.Token, 0, "UA", nil, "dm"); err != nil || c.Gate.State != core.GatePending {
		t.Fatalf("first approval = %+v, %v; want recorded, pending", c.Gate.State, err)
	}
	// Restart: new Gates, the store as it was.
	gates := core.NewGates(core.GatesOptions{Store: b, Clock: clock})
	stored, err := gates.Load(ctx, g.Token)
	switch {
	case err != nil:
		t.Fatal(err)
	case len(stored.Votes) != 1 || stored.Votes[0] != (core.Vote{User: "UA", At: clock.Now(), Approves: true, Surface: "dm"}):
		t.Errorf("votes after restart = %+v, want UA's from the dm", stored.Votes)
	case stored.Need != 2 || stored.Tier != q.Tier || !stored.RemindAt.Equal(epoch.Add(time.Hour)) || !stored.EscalateAt.Equal(epoch.Add(2*time.Hour)) ||
		!stored.Expires.Equal(epoch.Add(3*time.Hour)) || !slices.Equal(stored.EscalateTo, []string{"UCFO"}) || !slices.Equal(stored.Copies, []string{"D1:1", "D2:2"}):
		t.Errorf("quorum after restart = need %d tier %q remind %v escalate %v to %v expires %v copies %v", stored.Need, stored.Tier, stored.RemindAt, stored.EscalateAt, stored.EscalateTo, stored.Expires, stored.Copies)
	}
	if _, err := gates.Decide(ctx, g.Token, "UA", nil, "Approve"); !errors.Is(err, core.ErrGateVoted) {
		t.Errorf("UA again after restart = %v, want ErrGateVoted", err)
	}
	d, err := gates.Decide(ctx, g.Token, "UB", nil, "Approve")
	if err != nil || d.State != core.GateApproved || d.DecidedBy != "UA,UB" {
		t.Errorf("second approval after restart = %s by %q, %v; want approved by UA,UB", d.State, d.DecidedBy, err)
	}

	// Two approvals at once: the store applies them one after the other.
	req.NodeID = "2"
	g, _, err = gates.Open(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	for _, u := range []string{"UB", "UC"} {
		go func() {
			_, err := gates.Decide(ctx, g.Token, u, nil, "Approve")
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("concurrent approval = %v", err)
		}
	}
	if got, _ := gates.Load(ctx, g.Token); got.State != core.GateApproved || len(got.Votes) != 2 {
		t.Errorf("after two concurrent approvals: %s with %d votes, want approved with 2", got.State, len(got.Votes))
	}
}
