package delegate_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/delegate"
	"github.com/neobot/neobot/core/delegate/delegatetest"
)

var thread = core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1700000000.000100"}

// testCtx bounds a test that would otherwise hang on a bug; no assertion
// depends on it.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newClient returns a client for d polling every millisecond, with opts
// applied on top.
func newClient(t *testing.T, d *delegatetest.Server, opts delegate.Options) *delegate.Client {
	t.Helper()
	opts.BaseURL = d.URL()
	if opts.PollInterval == 0 {
		opts.PollInterval = time.Millisecond
	}
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Second
	}
	c, err := delegate.New(opts)
	if err != nil {
		t.Fatalf("delegate.New: %v", err)
	}
	return c
}

// withTurn returns ctx carrying a turn by requester U1 in thread, and the
// tool call ID callID when it is not "".
func withTurn(ctx context.Context, rep core.Reporter, a core.Approver, callID string) context.Context {
	ctx = core.WithTurn(ctx, &core.Turn{
		Inbound:  core.Inbound{Thread: thread, User: "U1", Text: "pay bob", EventID: "Ev1"},
		Reporter: rep, Approver: a,
	})
	if callID != "" {
		ctx = core.WithToolCall(ctx, callID)
	}
	return ctx
}

// answerWith returns an approver that picks option without asking anyone.
func answerWith(option string) core.Approver {
	return func(ctx context.Context, req core.GateRequest) (core.GateAnswer, error) {
		return core.GateAnswer{Approved: core.Approves(option), Answer: option, By: "U1"}, nil
	}
}

func newClock() *coretest.Clock {
	return coretest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
}

// board stands in for a chat thread with approval buttons: it is the
// adapter's approver flow of contracts.md over core.Gates. Every gate it
// shows (fresh or found again after a restart) is sent on shown.
type board struct {
	gates   *core.Gates
	allowed []string
	shown   chan core.Gate
	// beforeWait runs after the gate is shown and before waiting on it.
	beforeWait func()
	// closeOnCancel closes the gate as expired when ctx ends, as an adapter
	// does; false simulates a crash, where nothing runs.
	closeOnCancel bool
	cancelled     chan string // node IDs whose approver ctx ended
}

func newBoard(store core.GateStore, clock core.Clock, allowed ...string) *board {
	return &board{
		gates:   core.NewGates(core.GatesOptions{Store: store, SelfApprove: true, TTL: 30 * time.Minute, Clock: clock}),
		allowed: allowed, shown: make(chan core.Gate, 16), cancelled: make(chan string, 16),
	}
}

func (b *board) approver() core.Approver {
	return func(ctx context.Context, req core.GateRequest) (core.GateAnswer, error) {
		g, fresh, err := b.gates.Open(ctx, req, b.allowed)
		if err != nil {
			return core.GateAnswer{}, err
		}
		if !fresh && g.State != core.GatePending {
			return g.Decision(), nil
		}
		b.shown <- g
		if b.beforeWait != nil {
			b.beforeWait()
		}
		g, err = b.gates.Wait(ctx, g.Token)
		if err != nil {
			b.cancelled <- req.NodeID
			if b.closeOnCancel {
				_, _ = b.gates.Close(context.WithoutCancel(ctx), g.Token, core.GateExpired)
			}
			return core.GateAnswer{}, err
		}
		return g.Decision(), nil
	}
}

// next returns the next gate shown, failing the test when ctx ends first.
func (b *board) next(t *testing.T, ctx context.Context) core.Gate {
	t.Helper()
	select {
	case g := <-b.shown:
		return g
	case <-ctx.Done():
		t.Fatalf("no gate was shown: %v", ctx.Err())
		return core.Gate{}
	}
}

// result is what Run returned.
type result struct {
	answer string
	err    error
}

// runAsync starts c.Run and returns a channel with its result.
func runAsync(ctx context.Context, c *delegate.Client, prose string) <-chan result {
	ch := make(chan result, 1)
	go func() {
		a, err := c.Run(ctx, prose)
		ch <- result{a, err}
	}()
	return ch
}

func wait(t *testing.T, ctx context.Context, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		t.Fatalf("Run did not return: %v", ctx.Err())
		return result{}
	}
}

var _ delegate.Ledger = (*coretest.Ledger)(nil)

// newHTTPServer serves h on loopback for the test and returns its URL.
func newHTTPServer(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
