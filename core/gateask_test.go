package core_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
)

// fakeUI records what Gates.Ask shows; posted carries each gate posted.
type fakeUI struct {
	mu     sync.Mutex
	posted chan core.Gate
	shown  []core.Gate
}

func newFakeUI() *fakeUI { return &fakeUI{posted: make(chan core.Gate, 4)} }

func (u *fakeUI) PostGate(ctx context.Context, g core.Gate) (string, error) {
	u.posted <- g
	return "C1:" + g.Token, nil
}

func (u *fakeUI) ShowGate(ctx context.Context, g core.Gate) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.shown = append(u.shown, g)
}

func (u *fakeUI) lastShown() (core.Gate, int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.shown) == 0 {
		return core.Gate{}, 0
	}
	return u.shown[len(u.shown)-1], len(u.shown)
}

func TestAskApproved(t *testing.T) {
	gs, _, _ := newGates(t)
	ui := newFakeUI()
	type result struct {
		ans core.GateAnswer
		err error
	}
	done := make(chan result, 1)
	go func() {
		ans, err := gs.Ask(context.Background(), gateReq("n1"), nil, ui)
		done <- result{ans, err}
	}()
	g := <-ui.posted
	if _, err := gs.Decide(context.Background(), g.Token, "U1", nil, "approve"); err != nil {
		t.Fatalf("Decide = %v", err)
	}
	r := <-done
	if r.err != nil || !r.ans.Approved || r.ans.By != "U1" {
		t.Errorf("Ask = %+v, %v; want approved by U1", r.ans, r.err)
	}
	if _, n := ui.lastShown(); n != 0 {
		t.Errorf("Ask redrew a gate a person decided (%d times); the click's handler does that", n)
	}
	// Asked again (a resumed turn), the recorded decision returns at once.
	ans, err := gs.Ask(context.Background(), gateReq("n1"), nil, ui)
	if err != nil || !ans.Approved {
		t.Errorf("Ask after the decision = %+v, %v; want the recorded approval", ans, err)
	}
}

// TestAskRedrawsADecisionFromElsewhere: the instance that takes a click
// redraws the question only after it acks the click, so one killed in
// between leaves the question up with its buttons. The turn waiting on
// the gate draws the outcome when the decision comes from another
// instance, and a turn resumed on a decided gate draws it too; a
// decision taken here is drawn by its click's handler alone.
func TestAskRedrawsADecisionFromElsewhere(t *testing.T) {
	gs, store, clk := newGates(t)
	other := core.NewGates(core.GatesOptions{Store: store, SelfApprove: true, TTL: 30 * time.Minute, Clock: clk})
	ui := newFakeUI()
	done := make(chan core.GateAnswer, 1)
	go func() {
		ans, _ := gs.Ask(context.Background(), gateReq("n1"), nil, ui)
		done <- ans
	}()
	g := <-ui.posted
	if err := clk.WaitPending(t.Context(), 1); err != nil {
		t.Fatalf("Ask never began waiting: %v", err)
	}
	if _, err := other.Decide(context.Background(), g.Token, "U1", nil, "approve"); err != nil {
		t.Fatalf("Decide on the other instance = %v", err)
	}
	if err := gs.Changed(context.Background(), g.Token); err != nil {
		t.Fatalf("Changed = %v", err)
	}
	if ans := <-done; !ans.Approved {
		t.Fatalf("Ask = %+v, want approved", ans)
	}
	if last, n := ui.lastShown(); n != 1 || last.State != core.GateApproved {
		t.Errorf("ShowGate calls = %d (last %s), want the approval drawn once by the waiting turn", n, last.State)
	}
	// The turn resumed elsewhere after a crash finds the gate decided.
	resumed := newFakeUI()
	if ans, err := other.Ask(context.Background(), gateReq("n1"), nil, resumed); err != nil || !ans.Approved {
		t.Fatalf("the resumed Ask = %+v, %v; want the recorded approval", ans, err)
	}
	if last, n := resumed.lastShown(); n != 1 || last.State != core.GateApproved {
		t.Errorf("the resumed turn's ShowGate calls = %d (last %s), want the approval drawn once", n, last.State)
	}
}

// TestAskExpires: a gate nobody answers expires while Ask waits; Ask
// denies, and shows the gate as expired, buttons gone.
func TestAskExpires(t *testing.T) {
	gs, _, clk := newGates(t)
	ui := newFakeUI()
	done := make(chan core.GateAnswer, 1)
	go func() {
		ans, _ := gs.Ask(context.Background(), gateReq("n1"), nil, ui)
		done <- ans
	}()
	<-ui.posted
	if err := clk.WaitPending(t.Context(), 1); err != nil {
		t.Fatalf("Ask never armed the gate's expiry: %v", err)
	}
	clk.Advance(31 * time.Minute)
	if ans := <-done; ans.Approved {
		t.Errorf("Ask across the expiry = %+v, want denied", ans)
	}
	if last, n := ui.lastShown(); n != 1 || last.State != core.GateExpired {
		t.Errorf("ShowGate calls = %d (last %s), want the gate shown once as expired", n, last.State)
	}
}

func TestAskCancelled(t *testing.T) {
	tests := []struct {
		name  string
		cause error
		want  core.GateState
		shown bool
	}{
		{"user stopped the turn", core.ErrStopped, core.GateDenied, true},
		{"process shutting down", core.ErrShutdown, core.GatePending, false},
		{"turn cancelled", context.Canceled, core.GateExpired, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gs, store, _ := newGates(t)
			ui := newFakeUI()
			ctx, cancel := context.WithCancelCause(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := gs.Ask(ctx, gateReq("n1"), nil, ui)
				done <- err
			}()
			g := <-ui.posted
			cancel(tt.cause)
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("Ask = %v, want context.Canceled", err)
			}
			stored, err := store.LoadGate(context.Background(), g.Token)
			if err != nil || stored.State != tt.want || stored.MessageRef != "C1:"+g.Token {
				t.Errorf("gate after cancel = %s ref %q, %v; want %s ref %q", stored.State, stored.MessageRef, err, tt.want, "C1:"+g.Token)
			}
			if last, n := ui.lastShown(); (n > 0) != tt.shown || tt.shown && last.State != tt.want {
				t.Errorf("ShowGate calls = %d (last %s), want shown=%v with %s", n, last.State, tt.shown, tt.want)
			}
		})
	}
}

func TestAskPostFailureExpiresGate(t *testing.T) {
	gs, store, _ := newGates(t)
	ui := failingUI{}
	_, err := gs.Ask(context.Background(), gateReq("n1"), nil, ui)
	if !errors.Is(err, errPost) {
		t.Fatalf("Ask = %v, want errPost", err)
	}
	g, err := store.GateBound(context.Background(), gateReq("n1").Binding())
	if err != nil || g.State != core.GateExpired {
		t.Errorf("gate after a failed post = %s, %v; want expired", g.State, err)
	}
}

var errPost = errors.New("post refused")

type failingUI struct{}

func (failingUI) PostGate(context.Context, core.Gate) (string, error) { return "", errPost }
func (failingUI) ShowGate(context.Context, core.Gate)                 {}

// findingUI is a GateUI that can also find a message it posted before.
type findingUI struct {
	*fakeUI
	found string
}

func (u findingUI) FindGate(context.Context, core.Gate) (string, bool, error) {
	return u.found, u.found != "", nil
}

// refSignal is a gate store that reports each MessageRef recorded.
type refSignal struct {
	*coretest.GateStore
	recorded chan string
}

func (s *refSignal) UpdateGate(ctx context.Context, token string, fn func(*core.Gate) error) (core.Gate, error) {
	before, _ := s.GateStore.LoadGate(ctx, token)
	g, err := s.GateStore.UpdateGate(ctx, token, fn)
	if err == nil && g.MessageRef != before.MessageRef {
		s.recorded <- g.MessageRef
	}
	return g, err
}

// TestAskAfterCrashBeforeRecordingTheMessage: the process died between
// posting a gate and recording its message. The resumed Ask reuses the
// message a GateFinder finds, and posts again only when none is found.
func TestAskAfterCrashBeforeRecordingTheMessage(t *testing.T) {
	tests := []struct {
		name     string
		found    string
		wantPost bool
		wantRef  string
	}{
		{"finder finds the message", "C1:old", false, "C1:old"},
		{"finder finds nothing", "", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &refSignal{GateStore: coretest.NewGateStore(), recorded: make(chan string, 1)}
			gs := core.NewGates(core.GatesOptions{Store: store, SelfApprove: true})
			ctx := context.Background()
			// First run: the gate exists, its message was posted, the ref
			// never recorded.
			g, _, err := gs.Open(ctx, gateReq("n1"), nil)
			if err != nil {
				t.Fatal(err)
			}
			ui := findingUI{fakeUI: newFakeUI(), found: tt.found}
			done := make(chan error, 1)
			go func() {
				_, err := gs.Ask(ctx, gateReq("n1"), nil, ui)
				done <- err
			}()
			if tt.wantPost {
				posted := <-ui.posted
				if posted.Token != g.Token {
					t.Errorf("posted gate %s, want the resumed gate %s", posted.Token, g.Token)
				}
				tt.wantRef = "C1:" + g.Token
			}
			if ref := <-store.recorded; ref != tt.wantRef {
				t.Errorf("recorded MessageRef %q, want %q", ref, tt.wantRef)
			}
			if _, err := gs.Decide(ctx, g.Token, "U1", nil, "approve"); err != nil {
				t.Fatalf("Decide = %v", err)
			}
			if err := <-done; err != nil {
				t.Fatalf("Ask = %v", err)
			}
			select {
			case p := <-ui.posted:
				t.Errorf("Ask posted gate %s again although the finder found its message", p.Token)
			default:
			}
			got, err := store.LoadGate(ctx, g.Token)
			if err != nil {
				t.Fatal(err)
			}
			if got.MessageRef != tt.wantRef {
				t.Errorf("MessageRef = %q, want %q", got.MessageRef, tt.wantRef)
			}
		})
	}
}

// TestGatesApprover: the approver fills in the turn's thread and requester,
// and nil Gates give a nil approver, which denies.
func TestGatesApprover(t *testing.T) {
	var none *core.Gates
	if none.Approver(gateThread, "U1", nil, newFakeUI()) != nil {
		t.Error("(*Gates)(nil).Approver = non-nil, want nil (deny)")
	}
	gs, _, _ := newGates(t)
	ui := newFakeUI()
	ask := gs.Approver(gateThread, "U1", nil, ui)
	done := make(chan core.GateAnswer, 1)
	go func() {
		done <- core.Ask(context.Background(), ask, core.GateRequest{IntentID: "i1", NodeID: "n9", Question: "Spend?", Options: []core.Option{{Label: "approve", Approves: true}, {Label: "deny"}}})
	}()
	g := <-ui.posted
	if g.Thread != gateThread || g.Requester != "U1" {
		t.Errorf("posted gate thread %v requester %q, want %v and U1", g.Thread, g.Requester, gateThread)
	}
	if _, err := gs.Decide(context.Background(), g.Token, "U1", nil, "approve"); err != nil {
		t.Fatal(err)
	}
	if ans := <-done; !ans.Approved {
		t.Errorf("approver answer = %+v, want approved", ans)
	}
}

// TestAskDecidedAsTheTurnIsCancelled: a person's decision that lands just
// before the turn is cancelled or stopped stands. Ask returns it, and does
// not draw the gate as anything but the person's decision.
func TestAskDecidedAsTheTurnIsCancelled(t *testing.T) {
	tests := []struct {
		name     string
		decision core.GateState
		cause    error
	}{
		{"approved, then the turn is cancelled", core.GateApproved, context.Canceled},
		{"denied, then the user stops the turn", core.GateDenied, core.ErrStopped},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gs, store, _ := newGates(t)
			ui := newFakeUI()
			ctx, cancel := context.WithCancelCause(context.Background())
			type result struct {
				ans core.GateAnswer
				err error
			}
			done := make(chan result, 1)
			go func() {
				ans, err := gs.Ask(ctx, gateReq("n1"), nil, ui)
				done <- result{ans, err}
			}()
			g := <-ui.posted
			// Written straight to the store, the decision wakes no waiter:
			// Ask learns of it only when it closes the gate after the
			// cancellation.
			if _, err := store.UpdateGate(context.Background(), g.Token, func(g *core.Gate) error {
				g.State, g.DecidedBy = tt.decision, "U1"
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			cancel(tt.cause)
			r := <-done
			if r.err != nil || r.ans.Approved != (tt.decision == core.GateApproved) || r.ans.By != "U1" {
				t.Errorf("Ask = %+v, %v; want the decision by U1 that landed first", r.ans, r.err)
			}
			// Found decided by the store, as a decision from another
			// instance is, it may be drawn, but only as decided.
			if last, n := ui.lastShown(); n > 0 && (last.State != tt.decision || last.DecidedBy != "U1") {
				t.Errorf("Ask redrew a gate a person decided as %s by %q (%d times)", last.State, last.DecidedBy, n)
			}
		})
	}
}

// TestAskDecidedElsewhere: a decision recorded by another process sharing
// the store wakes the turn waiting here once Changed says so, and a
// change that is not a decision does not.
func TestAskDecidedElsewhere(t *testing.T) {
	gs, store, _ := newGates(t)
	ui := newFakeUI()
	done := make(chan core.GateAnswer, 1)
	go func() {
		ans, _ := gs.Ask(context.Background(), gateReq("n1"), nil, ui)
		done <- ans
	}()
	g := <-ui.posted
	// Whether Ask waits already or is about to, the outcome is the same:
	// Wait reads the stored gate after it registers.
	if err := gs.Changed(context.Background(), g.Token); err != nil {
		t.Fatal(err)
	}
	select {
	case ans := <-done:
		t.Fatalf("Ask returned %+v on a change that decided nothing", ans)
	default:
	}
	if _, err := store.UpdateGate(context.Background(), g.Token, func(g *core.Gate) error {
		g.State, g.DecidedBy = core.GateApproved, "U1"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := gs.Changed(context.Background(), g.Token); err != nil {
		t.Fatal(err)
	}
	if ans := <-done; !ans.Approved || ans.By != "U1" {
		t.Errorf("Ask = %+v, want approved by U1 in the other process", ans)
	}
	if err := gs.Changed(context.Background(), "unknown"); err != nil {
		t.Errorf("Changed(a gate nobody waits on) = %v, want nil", err)
	}
}
