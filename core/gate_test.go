package core_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
)

var gateThread = core.Thread{Platform: "discord", Workspace: "G1", Channel: "C1", ID: "T1"}

func gateReq(node string) core.GateRequest {
	return core.GateRequest{Thread: gateThread, IntentID: "i1", NodeID: node, Question: "Spend 5 PAX?", Options: []core.Option{{Label: "approve", Approves: true}, {Label: "deny"}}, Requester: "U1"}
}

// newGates returns Gates over an in-memory store with a 30-minute TTL and a
// settable clock.
func newGates(t *testing.T) (*core.Gates, *coretest.GateStore, *coretest.Clock) {
	t.Helper()
	clk := coretest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	store := coretest.NewGateStore()
	return core.NewGates(core.GatesOptions{Store: store, SelfApprove: true, TTL: 30 * time.Minute, Clock: clk}), store, clk
}

func TestGatesOpen(t *testing.T) {
	ctx := t.Context()
	gates, _, clk := newGates(t)
	g, fresh, err := gates.Open(ctx, gateReq("n1"), []string{"U-admin"})
	if err != nil || !fresh {
		t.Fatalf("Open = %v, fresh %v; want a fresh gate", err, fresh)
	}
	if g.State != core.GatePending || g.Token == "" || g.Requester != "U1" || !g.Expires.Equal(clk.Now().Add(30*time.Minute)) {
		t.Errorf("Open = %+v, want pending, a token, requester U1, expiry in 30m", g)
	}

	again, fresh, err := gates.Open(ctx, gateReq("n1"), nil)
	if err != nil || fresh || again.Token != g.Token {
		t.Errorf("Open(same node, pending) = %s fresh %v, %v; want the same gate, not fresh", again.Token, fresh, err)
	}

	other, fresh, _ := gates.Open(ctx, gateReq("n2"), nil)
	if !fresh || other.Token == g.Token {
		t.Errorf("Open(other node) = %s fresh %v, want a new gate", other.Token, fresh)
	}

	if _, err := gates.Decide(ctx, g.Token, "U1", nil, "approve"); err != nil {
		t.Fatal(err)
	}
	decided, fresh, _ := gates.Open(ctx, gateReq("n1"), nil)
	if fresh || decided.Token != g.Token || !decided.Decision().Approved {
		t.Errorf("Open(decided node) = %+v fresh %v, want the decided gate to resend", decided, fresh)
	}

	clk.Advance(31 * time.Minute)
	renewed, fresh, _ := gates.Open(ctx, gateReq("n2"), nil)
	if !fresh || renewed.Token == other.Token {
		t.Errorf("Open(node whose gate expired) = %s fresh %v, want a new gate", renewed.Token, fresh)
	}

	noOpts := gateReq("n3")
	noOpts.Options = nil
	if g, _, _ := gates.Open(ctx, noOpts, nil); !slices.Equal(g.Options, []core.Option{{Label: "yes", Approves: true}, {Label: "no"}}) {
		t.Errorf("Open(no options).Options = %v, want yes (approving) and no", g.Options)
	}
}

// TestGatesOpenBinding: a decision answers the exact gate a person saw. A
// daemon restarted on an empty database reuses intent and node IDs; its
// new spend in another thread, from another tool call, or with another
// question must ask again.
func TestGatesOpenBinding(t *testing.T) {
	otherThread := gateThread
	otherThread.ID = "1700000999.000100"
	tests := []struct {
		name   string
		change func(*core.GateRequest)
		reuse  bool
	}{
		{"same request (a resumed turn)", func(*core.GateRequest) {}, true},
		{"another thread", func(r *core.GateRequest) { r.Thread = otherThread }, false},
		{"another tool call", func(r *core.GateRequest) { r.CallID = "call-2" }, false},
		{"another intent", func(r *core.GateRequest) { r.IntentID = "i2" }, false},
		{"node re-raised with a new question", func(r *core.GateRequest) { r.Question = "Spend 500 PAX?" }, false},
		{"other options", func(r *core.GateRequest) { r.Options = append(r.Options, core.Option{Label: "later"}) }, false},
	}
	for _, tt := range tests {
		for _, state := range []string{"approve", "deny", "pending"} {
			t.Run(tt.name+"/"+state, func(t *testing.T) {
				ctx := t.Context()
				gates, _, _ := newGates(t)
				first := gateReq("n1")
				first.CallID = "call-1"
				g, _, err := gates.Open(ctx, first, nil)
				if err != nil {
					t.Fatal(err)
				}
				if state != "pending" {
					if _, err := gates.Decide(ctx, g.Token, "U1", nil, state); err != nil {
						t.Fatal(err)
					}
				}
				next := first
				next.Options = slices.Clone(first.Options)
				tt.change(&next)
				got, fresh, err := gates.Open(ctx, next, nil)
				if err != nil {
					t.Fatal(err)
				}
				if reused := !fresh && got.Token == g.Token; reused != tt.reuse {
					t.Errorf("Open(%s) reused the earlier gate = %v, want %v", tt.name, reused, tt.reuse)
				}
				if !tt.reuse && (got.State != core.GatePending || got.Decision().Approved) {
					t.Errorf("Open(%s) = %s gate, want a new pending one that waits for a click", tt.name, got.State)
				}
			})
		}
	}
}

func TestGatesDecide(t *testing.T) {
	tests := []struct {
		name    string
		user    string
		roles   []string
		option  string
		token   func(real string) string
		advance time.Duration
		wantErr error
		want    core.GateState
	}{
		{name: "requester approves", user: "U1", option: "approve", want: core.GateApproved},
		{name: "requester denies", user: "U1", option: "deny", want: core.GateDenied},
		{name: "configured approver", user: "U-admin", option: "approve", want: core.GateApproved},
		{name: "allowed role", user: "U-mod", roles: []string{"R-treasury"}, option: "approve", want: core.GateApproved},
		{name: "user not allowed", user: "U-mallory", roles: []string{"R-other"}, option: "approve", wantErr: core.ErrGateForbidden},
		{name: "empty user", user: "", option: "approve", wantErr: core.ErrGateForbidden},
		{name: "forged token", user: "U1", option: "approve", token: func(real string) string { return real + "x" }, wantErr: core.ErrGateUnknown},
		{name: "empty token", user: "U1", option: "approve", token: func(string) string { return "" }, wantErr: core.ErrGateUnknown},
		{name: "expired", user: "U1", option: "approve", advance: 30 * time.Minute, wantErr: core.ErrGateExpired},
		{name: "not an option", user: "U1", option: "maybe", wantErr: core.ErrGateOption},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			gates, store, clk := newGates(t)
			g, _, err := gates.Open(ctx, gateReq("n1"), []string{"U-admin", "role:R-treasury"})
			if err != nil {
				t.Fatal(err)
			}
			clk.Advance(tt.advance)
			token := g.Token
			if tt.token != nil {
				token = tt.token(token)
			}
			got, err := gates.Decide(ctx, token, tt.user, tt.roles, tt.option)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Decide = %v, want %v", err, tt.wantErr)
				}
				if stored, _ := store.LoadGate(ctx, g.Token); stored.State != core.GatePending || stored.DecidedBy != "" {
					t.Errorf("gate after a refusal = %+v, want unchanged and pending", stored)
				}
				return
			}
			if err != nil || got.State != tt.want || got.DecidedBy != tt.user || got.Answer != tt.option || !got.DecidedAt.Equal(clk.Now()) {
				t.Fatalf("Decide = %+v, %v; want %s by %s", got, err, tt.want, tt.user)
			}
			if stored, _ := store.LoadGate(ctx, g.Token); stored.State != tt.want {
				t.Errorf("stored state = %s, want %s (durable before Decide returns)", stored.State, tt.want)
			}
			// A second answer changes nothing.
			second, err := gates.Decide(ctx, g.Token, "U1", nil, "deny")
			if !errors.Is(err, core.ErrGateClosed) || second.State != tt.want || second.DecidedBy != tt.user {
				t.Errorf("Decide(second) = %+v, %v; want ErrGateClosed and the first decision", second, err)
			}
		})
	}
}

func TestGatesWait(t *testing.T) {
	t.Run("decided while waiting", func(t *testing.T) {
		ctx := t.Context()
		gates, _, _ := newGates(t)
		g, _, _ := gates.Open(ctx, gateReq("n1"), nil)
		type res struct {
			g   core.Gate
			err error
		}
		done := make(chan res, 1)
		go func() {
			g, err := gates.Wait(ctx, g.Token)
			done <- res{g, err}
		}()
		if _, err := gates.Decide(ctx, g.Token, "U1", nil, "approve"); err != nil {
			t.Fatal(err)
		}
		r := <-done
		if r.err != nil || r.g.State != core.GateApproved || !r.g.Decision().Approved || r.g.Decision().By != "U1" {
			t.Errorf("Wait = %+v, %v; want the approval by U1", r.g, r.err)
		}
	})
	t.Run("decided before waiting", func(t *testing.T) {
		ctx := t.Context()
		gates, _, _ := newGates(t)
		g, _, _ := gates.Open(ctx, gateReq("n1"), nil)
		gates.Decide(ctx, g.Token, "U1", nil, "deny")
		got, err := gates.Wait(ctx, g.Token)
		if err != nil || got.State != core.GateDenied || got.Decision().Approved {
			t.Errorf("Wait = %+v, %v; want the denial", got, err)
		}
	})
	t.Run("expired", func(t *testing.T) {
		ctx := t.Context()
		gates, store, clk := newGates(t)
		g, _, _ := gates.Open(ctx, gateReq("n1"), nil)
		clk.Advance(time.Hour)
		got, err := gates.Wait(ctx, g.Token)
		if err != nil || got.State != core.GateExpired || got.Decision().Approved {
			t.Errorf("Wait on an expired gate = %+v, %v; want expired, denied", got, err)
		}
		if stored, _ := store.LoadGate(ctx, g.Token); stored.State != core.GateExpired {
			t.Errorf("stored state = %s, want expired", stored.State)
		}
		if _, err := gates.Decide(ctx, g.Token, "U1", nil, "approve"); !errors.Is(err, core.ErrGateClosed) {
			t.Errorf("Decide after expiry = %v, want ErrGateClosed", err)
		}
	})
	t.Run("expires while waiting", func(t *testing.T) {
		ctx := t.Context()
		gates, store, clk := newGates(t)
		g, _, _ := gates.Open(ctx, gateReq("n1"), nil)
		done := make(chan core.Gate, 1)
		go func() {
			got, _ := gates.Wait(ctx, g.Token)
			done <- got
		}()
		if err := clk.WaitPending(ctx, 1); err != nil {
			t.Fatalf("Wait never armed its expiry timer: %v", err)
		}
		clk.Advance(29 * time.Minute)
		if stored, _ := store.LoadGate(ctx, g.Token); stored.State != core.GatePending {
			t.Fatalf("state a minute before expiry = %s, want pending", stored.State)
		}
		clk.Advance(time.Minute)
		if got := <-done; got.State != core.GateExpired || got.Decision().Approved {
			t.Errorf("Wait across the expiry = %+v, want expired, denied", got)
		}
		if _, err := gates.Decide(ctx, g.Token, "U1", nil, "approve"); !errors.Is(err, core.ErrGateClosed) {
			t.Errorf("a click after the wait expired = %v, want ErrGateClosed", err)
		}
	})
	t.Run("ctx ends", func(t *testing.T) {
		gates, store, _ := newGates(t)
		g, _, _ := gates.Open(t.Context(), gateReq("n1"), nil)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := gates.Wait(ctx, g.Token); !errors.Is(err, context.Canceled) {
			t.Errorf("Wait(cancelled ctx) = %v, want context.Canceled", err)
		}
		if stored, _ := store.LoadGate(t.Context(), g.Token); stored.State != core.GatePending {
			t.Errorf("state after a cancelled Wait = %s, want pending for whoever resumes", stored.State)
		}
	})
	t.Run("unknown token", func(t *testing.T) {
		gates, _, _ := newGates(t)
		if _, err := gates.Wait(t.Context(), "nope"); !errors.Is(err, core.ErrGateUnknown) {
			t.Errorf("Wait(unknown) = %v, want ErrGateUnknown", err)
		}
	})
	t.Run("two waiters", func(t *testing.T) {
		ctx := t.Context()
		gates, _, _ := newGates(t)
		g, _, _ := gates.Open(ctx, gateReq("n1"), nil)
		done := make(chan core.GateState, 2)
		for range 2 {
			go func() {
				got, _ := gates.Wait(ctx, g.Token)
				done <- got.State
			}()
		}
		if _, err := gates.Close(ctx, g.Token, core.GateDenied); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if s := <-done; s != core.GateDenied {
				t.Errorf("Wait after Close = %s, want denied", s)
			}
		}
	})
}

func TestGatesClose(t *testing.T) {
	ctx := t.Context()
	gates, _, _ := newGates(t)
	g, _, _ := gates.Open(ctx, gateReq("n1"), nil)
	closed, err := gates.Close(ctx, g.Token, core.GateExpired)
	if err != nil || closed.State != core.GateExpired {
		t.Fatalf("Close = %+v, %v; want expired", closed, err)
	}
	if _, err := gates.Decide(ctx, g.Token, "U1", nil, "approve"); !errors.Is(err, core.ErrGateClosed) {
		t.Errorf("Decide after Close = %v, want ErrGateClosed", err)
	}

	g2, _, _ := gates.Open(ctx, gateReq("n2"), nil)
	gates.Decide(ctx, g2.Token, "U1", nil, "approve")
	kept, err := gates.Close(ctx, g2.Token, core.GateExpired)
	if err != nil || kept.State != core.GateApproved {
		t.Errorf("Close(decided) = %+v, %v; want the decision unchanged", kept, err)
	}
	if _, err := gates.Close(ctx, "nope", core.GateExpired); !errors.Is(err, core.ErrGateUnknown) {
		t.Errorf("Close(unknown) = %v, want ErrGateUnknown", err)
	}
}

func TestGatesUpdate(t *testing.T) {
	ctx := t.Context()
	gates, store, _ := newGates(t)
	g, _, _ := gates.Open(ctx, gateReq("n1"), nil)
	if _, err := gates.Update(ctx, g.Token, func(g *core.Gate) error { g.MessageRef = "C1/123.456"; return nil }); err != nil {
		t.Fatal(err)
	}
	if stored, _ := store.LoadGate(ctx, g.Token); stored.MessageRef != "C1/123.456" {
		t.Errorf("MessageRef = %q, want C1/123.456", stored.MessageRef)
	}
}

func TestGateMayAnswer(t *testing.T) {
	tests := []struct {
		self  bool // the gate allows self-approval
		user  string
		roles []string
		want  bool
	}{
		{true, "U1", nil, true},
		{false, "U1", nil, false},            // the requester, no self-approval
		{false, "U1", []string{"R1"}, false}, // ... even holding an approver role
		{false, "U-both", nil, false},        // ... even listed as an approver
		{true, "U-both", nil, true},
		{false, "U2", nil, true},
		{false, "U3", []string{"R1"}, true},
		{false, "U3", []string{"R2"}, false},
		{false, "U3", nil, false},
		{false, "", nil, false},
		{true, "", nil, false},
		{false, "R1", nil, false}, // a role ID is not a user ID
	}
	for _, tt := range tests {
		g := core.Gate{Requester: "U1", Allowed: []string{"U2", "U-both", "role:R1"}, SelfApprove: tt.self}
		if tt.user == "U-both" {
			g.Requester = "U-both"
		}
		if got := g.MayAnswer(tt.user, tt.roles); got != tt.want {
			t.Errorf("Gate{Requester: %s, SelfApprove: %v}.MayAnswer(%q, %q) = %v, want %v", g.Requester, tt.self, tt.user, tt.roles, got, tt.want)
		}
	}
	// A click that names no user never answers, even a gate whose
	// requester is unknown too, or whose approvers list holds an empty
	// entry (a trailing comma in a setting).
	for _, g := range []core.Gate{
		{Requester: "", SelfApprove: true},
		{Requester: "U1", Allowed: []string{"", "U2"}},
	} {
		if g.MayAnswer("", nil) {
			t.Errorf("%+v.MayAnswer(\"\") = true, want an anonymous click refused", g)
		}
	}
}

// TestGateMayStop: the requester may always take back their request; an
// approver may stop it too; nobody else may, nor an anonymous user.
func TestGateMayStop(t *testing.T) {
	tests := []struct {
		user  string
		roles []string
		want  bool
	}{
		{"U1", nil, true}, // the requester, without self-approval
		{"U2", nil, true},
		{"U3", []string{"R1"}, true},
		{"U3", []string{"R2"}, false},
		{"U3", nil, false},
		{"", nil, false},
		{"R1", nil, false},
	}
	for _, tt := range tests {
		g := core.Gate{Requester: "U1", Allowed: []string{"U2", "", "role:R1"}}
		if got := g.MayStop(tt.user, tt.roles); got != tt.want {
			t.Errorf("Gate{Requester: U1}.MayStop(%q, %q) = %v, want %v", tt.user, tt.roles, got, tt.want)
		}
	}
	if ok, err := (*core.Gates)(nil).MayStop(t.Context(), core.Thread{}, "U3", nil); !ok || err != nil {
		t.Errorf("(*Gates)(nil).MayStop = false, want true: no gates, nothing to guard")
	}
}

// TestGatesHold: while a turn holds its thread (a tool's task runs),
// only its person may stop it, approvers and self-approval included; the
// release lets anyone again, and a hold elsewhere changes nothing here.
func TestGatesHold(t *testing.T) {
	gates := core.NewGates(core.GatesOptions{Store: coretest.NewGateStore(), SelfApprove: true})
	th := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1.1"}
	other := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "2.2"}
	may := func(th core.Thread, user string) bool {
		t.Helper()
		ok, err := gates.MayStop(t.Context(), th, user, []string{"admin"})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	release := gates.Hold(th, "UALICE")
	if !may(th, "UALICE") || may(th, "UMALLORY") || !may(other, "UMALLORY") {
		t.Errorf("held: alice %v, mallory %v, mallory elsewhere %v; want true, false, true", may(th, "UALICE"), may(th, "UMALLORY"), may(other, "UMALLORY"))
	}
	release()
	release() // twice is once
	if !may(th, "UMALLORY") {
		t.Error("after the release Mallory still may not stop the turn")
	}
	(*core.Gates)(nil).Hold(th, "UALICE")()
}

// TestGatesNoSelfApproval: without SelfApprove the requester's own click
// is refused and changes nothing; an approver's counts.
func TestGatesNoSelfApproval(t *testing.T) {
	ctx := t.Context()
	gates := core.NewGates(core.GatesOptions{Store: coretest.NewGateStore()})
	g, _, err := gates.Open(ctx, gateReq("n1"), []string{"U-admin"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := gates.Decide(ctx, g.Token, "U1", nil, "approve"); !errors.Is(err, core.ErrGateForbidden) || got.State != core.GatePending {
		t.Fatalf("Decide(by the requester) = %s, %v; want ErrGateForbidden and the gate pending", got.State, err)
	}
	if got, err := gates.Decide(ctx, g.Token, "U-admin", nil, "approve"); err != nil || got.State != core.GateApproved {
		t.Errorf("Decide(by an approver) = %s, %v; want approved", got.State, err)
	}
}

// TestGateTokens checks tokens are distinct and long enough not to guess.
func TestGateTokens(t *testing.T) {
	gates, _, _ := newGates(t)
	seen := map[string]bool{}
	for i := range 100 {
		req := gateReq("n")
		req.IntentID = fmt.Sprintf("i%d", i)
		g, _, err := gates.Open(t.Context(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(g.Token) < 22 || seen[g.Token] {
			t.Fatalf("token %q: short or repeated", g.Token)
		}
		seen[g.Token] = true
	}
}

// TestGatesReRaisedAfterExpiry: the same request raised again after its
// gate expired (closed as expired, or past its expiry unclosed) opens a
// fresh gate with a new token and a new expiry; a click on the old
// buttons changes nothing, a click on the new ones decides.
func TestGatesReRaisedAfterExpiry(t *testing.T) {
	tests := []struct {
		name  string
		close bool // the earlier gate was closed as expired, not just left past its time
	}{
		{"closed as expired", true},
		{"past its expiry", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			gates, _, clk := newGates(t)
			old, _, err := gates.Open(ctx, gateReq("n1"), nil)
			if err != nil {
				t.Fatal(err)
			}
			clk.Advance(31 * time.Minute)
			if tt.close {
				if _, err := gates.Close(ctx, old.Token, core.GateExpired); err != nil {
					t.Fatal(err)
				}
			}
			g, fresh, err := gates.Open(ctx, gateReq("n1"), nil)
			if err != nil || !fresh || g.Token == old.Token || g.State != core.GatePending || !g.Expires.Equal(clk.Now().Add(30*time.Minute)) {
				t.Fatalf("Open again = %+v, fresh %v, %v; want a fresh pending gate, new token, expiring 30m from now", g, fresh, err)
			}
			if _, err := gates.Decide(ctx, old.Token, "U1", nil, "approve"); err == nil {
				t.Errorf("a click on the expired gate's button = nil, want it refused")
			}
			d, err := gates.Decide(ctx, g.Token, "U1", nil, "approve")
			if err != nil || d.State != core.GateApproved {
				t.Errorf("a click on the re-raised gate = %s, %v; want approved", d.State, err)
			}
			if again, fresh, err := gates.Open(ctx, gateReq("n1"), nil); err != nil || fresh || again.Token != g.Token {
				t.Errorf("Open after the decision = %s, fresh %v, %v; want the decided gate back", again.Token, fresh, err)
			}
		})
	}
}

// postedUI records the gates it posts and tells when one is.
type postedUI struct{ posted chan core.Gate }

func (u postedUI) PostGate(_ context.Context, g core.Gate) (string, error) {
	u.posted <- g
	return "C1:" + g.Token[:6], nil
}

func (postedUI) ShowGate(context.Context, core.Gate) {}

// TestGatesWaiting: the approvals a person may click are the pending
// ones in their workspace that a running turn waits on, with the message
// they were posted in; nobody else's.
func TestGatesWaiting(t *testing.T) {
	ctx := t.Context()
	gates, _, _ := newGates(t)
	ui := postedUI{posted: make(chan core.Gate, 1)}
	done := make(chan error, 1)
	askCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_, err := gates.Ask(askCtx, gateReq("n1"), []string{"U-admin"}, ui)
		done <- err
	}()
	posted := <-ui.posted
	var got []core.Gate
	for len(got) == 0 || got[0].MessageRef == "" { // the ref is recorded right after the post
		got = gates.Waiting(ctx, "discord", "G1", "U-admin", nil)
		if len(got) > 1 {
			break
		}
	}
	if len(got) != 1 || got[0].Token != posted.Token || got[0].MessageRef == "" {
		t.Errorf("Waiting(U-admin) = %+v, want the posted gate with its message", got)
	}
	if got := gates.Waiting(ctx, "discord", "G1", "U-stranger", nil); len(got) != 0 {
		t.Errorf("Waiting(U-stranger) = %+v, want none: they may not answer", got)
	}
	if got := gates.Waiting(ctx, "discord", "G2", "U-admin", nil); len(got) != 0 {
		t.Errorf("Waiting in another workspace = %+v, want none", got)
	}
	if _, err := gates.Decide(ctx, posted.Token, "U-admin", nil, "approve"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := gates.Waiting(ctx, "discord", "G1", "U-admin", nil); len(got) != 0 {
		t.Errorf("Waiting after the decision = %+v, want none", got)
	}
}

// TestGatesPlaceApprovers: the approvers a place's stored settings name
// may approve that place's spends besides the configured ones, and no
// other: not a request from elsewhere, not a policy tier that names its
// own approvers; the requester listed among them still may not approve
// without self-approval.
func TestGatesPlaceApprovers(t *testing.T) {
	ctx := t.Context()
	gates := core.NewGates(core.GatesOptions{Store: coretest.NewGateStore()})
	open := func(node string, place []string, q *core.Quorum) core.Gate {
		t.Helper()
		req := gateReq(node)
		req.PlaceApprovers, req.Quorum = place, q
		g, _, err := gates.Open(ctx, req, []string{"U-admin"})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	here := open("n1", []string{"UCAROL", "U1"}, nil)
	for _, who := range []string{"U1", "UBOB"} {
		if got, err := gates.Decide(ctx, here.Token, who, nil, "approve"); !errors.Is(err, core.ErrGateForbidden) || got.State != core.GatePending {
			t.Errorf("Decide(by %s) = %s, %v; want ErrGateForbidden and the gate pending", who, got.State, err)
		}
	}
	if got, err := gates.Decide(ctx, here.Token, "UCAROL", nil, "approve"); err != nil || got.State != core.GateApproved {
		t.Errorf("Decide(by the place's approver) = %s, %v; want approved", got.State, err)
	}
	elsewhere := open("n2", nil, nil)
	tier := open("n3", []string{"UCAROL"}, &core.Quorum{Approvers: []string{"UTREASURY"}})
	for _, g := range []core.Gate{elsewhere, tier} {
		if got, err := gates.Decide(ctx, g.Token, "UCAROL", nil, "approve"); !errors.Is(err, core.ErrGateForbidden) || got.State != core.GatePending {
			t.Errorf("Decide(%s by another place's approver) = %s, %v; want ErrGateForbidden", g.NodeID, got.State, err)
		}
	}
	if got, err := gates.Decide(ctx, elsewhere.Token, "U-admin", nil, "approve"); err != nil || got.State != core.GateApproved {
		t.Errorf("Decide(by a configured approver) = %s, %v; want approved", got.State, err)
	}
}
