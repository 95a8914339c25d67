package core_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/neobot/neobot/core"
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
	// Asked again (a resumed turn), the recorded decision returns at once.
	ans, err := gs.Ask(context.Background(), gateReq("n1"), nil, ui)
	if err != nil || !ans.Approved {
		t.Errorf("Ask after the decision = %+v, %v; want the recorded approval", ans, err)
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
	g, err := store.GateFor(context.Background(), "i1", "n1")
	if err != nil || g.State != core.GateExpired {
		t.Errorf("gate after a failed post = %s, %v; want expired", g.State, err)
	}
}

var errPost = errors.New("post refused")

type failingUI struct{}

func (failingUI) PostGate(context.Context, core.Gate) (string, error) { return "", errPost }
func (failingUI) ShowGate(context.Context, core.Gate)                 {}
