package conversation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
)

// toolRunner runs a fake tool for messages whose text is "use the tool":
// the tool reports that it started and blocks until its context ends.
// Other messages are answered at once.
type toolRunner struct {
	sayRunner
	started chan string          // tool call IDs, as each starts
	ended   chan context.Context // the tool's context, once it ended
}

func (r *toolRunner) Run(ctx context.Context, t core.Turn) error {
	if t.Inbound.Text != "use the tool" {
		return r.sayRunner.Run(ctx, t)
	}
	r.mu.Lock()
	r.order = append(r.order, t.Inbound.EventID)
	r.mu.Unlock()
	callCtx := core.WithToolCall(ctx, "call-"+t.Inbound.EventID)
	r.started <- core.ToolCallFrom(callCtx)
	<-callCtx.Done()
	r.ended <- callCtx
	return fmt.Errorf("tool call: %w", callCtx.Err())
}

func TestStopCancelsToolCallAndSetsAsideQueue(t *testing.T) {
	r := &toolRunner{started: make(chan string, 1), ended: make(chan context.Context, 1)}
	h, j, p := startHub(t, Options{Runner: r})
	m1 := msg("A", "E1", "use the tool")
	submit(t, h, m1)
	if id := <-r.started; id != "call-E1" {
		t.Fatalf("tool call ID = %q, want call-E1", id)
	}
	submit(t, h, msg("A", "E2", "and then this"))
	submit(t, h, msg("A", "E3", "and that"))
	submit(t, h, msg("A", "E4", "STOP"))
	toolCtx := <-r.ended
	if !errors.Is(toolCtx.Err(), context.Canceled) || !errors.Is(context.Cause(toolCtx), core.ErrStopped) {
		t.Errorf("tool context after stop = %v (cause %v), want canceled by core.ErrStopped", toolCtx.Err(), context.Cause(toolCtx))
	}
	j.waitCompleted(t, 4) // E1 cancelled, E2 and E3 set aside, E4 the stop itself

	rec := p.rec(m1.Thread)
	notices, err := rec.WaitNotices(waitCtx(t), 3)
	if err != nil {
		t.Fatal(err)
	}
	// Two "got it" notices for the queued messages, one for the stop.
	if want := stopText(true, 2); !slices.Contains(notices, want) || len(notices) != 3 {
		t.Errorf("notices = %q, want two for the queued messages and %q", notices, want)
	}

	submit(t, h, msg("A", "E5", "what's the weather?"))
	says, err := rec.WaitSays(waitCtx(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(says, []string{"answer E5"}) {
		t.Errorf("answers = %q, want only the message after the stop", says)
	}
	if got := r.calls(); !slices.Equal(got, []string{"E1", "E5"}) {
		t.Errorf("turns run = %v, want [E1 E5]: queued messages are set aside by stop", got)
	}
	for _, n := range rec.Notices() {
		if strings.HasPrefix(n, "I hit a problem") {
			t.Errorf("notice %q after a stop, want no failure notice", n)
		}
	}
}

func TestStopWithNothingRunning(t *testing.T) {
	r := &sayRunner{}
	h, j, p := startHub(t, Options{Runner: r})
	stop := msg("A", "E1", "cancel")
	submit(t, h, stop)
	j.waitCompleted(t, 1)
	notices, err := p.rec(stop.Thread).WaitNotices(waitCtx(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := stopText(false, 0); notices[0] != want {
		t.Errorf("notice = %q, want %q", notices[0], want)
	}
	if got := r.calls(); len(got) != 0 {
		t.Errorf("turns run = %v, want none: stop is not a turn", got)
	}
}

// gateApprover follows the adapters' approval flow over gates: open the
// gate, post it (sent on asked), wait; when the turn's context ends, deny
// the gate if the user stopped the turn, and leave it pending for the
// resumed turn on a shutdown. The context's cause is sent on causes.
func gateApprover(gates *core.Gates, asked chan<- core.Gate, causes chan<- error) core.Approver {
	return func(ctx context.Context, req core.GateRequest) (core.GateAnswer, error) {
		g, _, err := gates.Open(ctx, req, nil)
		if err != nil {
			return core.GateAnswer{}, err
		}
		asked <- g
		token := g.Token
		g, err = gates.Wait(ctx, token)
		if err == nil {
			return g.Decision(), nil
		}
		causes <- context.Cause(ctx)
		if errors.Is(context.Cause(ctx), core.ErrStopped) {
			if _, cerr := gates.Close(context.WithoutCancel(ctx), token, core.GateDenied); cerr != nil {
				return core.GateAnswer{}, errors.Join(err, cerr)
			}
		}
		return core.GateAnswer{}, err
	}
}

func TestCancelDuringGate(t *testing.T) {
	tests := []struct {
		name      string
		cancel    func(t *testing.T, h *Hub)
		wantCause error
		wantState core.GateState
		wantDone  bool // the message is completed
	}{
		{
			name:      "stop denies the gate",
			cancel:    func(t *testing.T, h *Hub) { submit(t, h, msg("A", "E2", "stop")) },
			wantCause: core.ErrStopped, wantState: core.GateDenied, wantDone: true,
		},
		{
			name: "shutdown leaves the gate pending for the resumed turn",
			cancel: func(t *testing.T, h *Hub) {
				if err := h.Close(context.Background()); err != nil {
					t.Errorf("Close() = %v", err)
				}
			},
			wantCause: core.ErrShutdown, wantState: core.GatePending, wantDone: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := coretest.NewGateStore()
			gates := core.NewGates(core.GatesOptions{Store: store, SelfApprove: true})
			asked, causes := make(chan core.Gate, 1), make(chan error, 1)
			answers := make(chan core.GateAnswer, 1)
			runner := runFunc(func(ctx context.Context, turn core.Turn) error {
				ans := core.Ask(ctx, turn.Approver, core.GateRequest{
					Thread: turn.Inbound.Thread, IntentID: "intent-1", NodeID: "node-1",
					Question: "Send 5 USDC to alice?", Options: []core.Option{{Label: "approve", Approves: true}, {Label: "deny"}},
					Requester: turn.Inbound.User,
				})
				answers <- ans
				if !ans.Approved {
					return fmt.Errorf("spend not approved: %w", ctx.Err())
				}
				return turn.Reporter.Say(ctx, "sent")
			})
			h, j, p := startHub(t, Options{Runner: runner})
			p.approver = gateApprover(gates, asked, causes)

			in := msg("A", "E1", "send alice 5 USDC")
			in.User = "U7"
			submit(t, h, in)
			g := <-asked
			if g.Requester != "U7" {
				t.Errorf("gate requester = %q, want the author U7", g.Requester)
			}
			tt.cancel(t, h)
			if cause := <-causes; !errors.Is(cause, tt.wantCause) {
				t.Errorf("approver's context cause = %v, want %v", cause, tt.wantCause)
			}
			if ans := <-answers; ans.Approved || ans.By != "" {
				t.Errorf("answer after cancel = %+v, want denied by default", ans)
			}
			if tt.wantDone {
				j.waitCompleted(t, 2) // the message and the stop
			} else if err := h.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got, _ := store.LoadGate(context.Background(), g.Token); got.State != tt.wantState {
				t.Errorf("gate state = %s, want %s", got.State, tt.wantState)
			}
			if got := j.completed(in); got != tt.wantDone {
				t.Errorf("message completed = %v, want %v", got, tt.wantDone)
			}
			if says := p.rec(in.Thread).Says(); len(says) != 0 {
				t.Errorf("answers = %q, want none: the spend never happened", says)
			}
		})
	}
}

func TestTurnErrors(t *testing.T) {
	tests := []struct {
		name       string
		run        func(ctx context.Context, t core.Turn) error
		wantNotice string // prefix; "" for no notice
		wantSay    bool
	}{
		{name: "answered", run: func(ctx context.Context, t core.Turn) error { return t.Reporter.Say(ctx, "done") }, wantSay: true},
		{name: "already answered before a restart", run: func(context.Context, core.Turn) error {
			return fmt.Errorf("agent: resume: %w", core.ErrAnswered)
		}},
		{name: "internal error", run: func(context.Context, core.Turn) error {
			return errors.New(`llm: POST https://api.fireworks.ai/inference/v1/chat/completions: status 500: {"error":"key fw_abc123"}`)
		}, wantNotice: "I hit a problem and couldn't finish: something went wrong"},
		{name: "deadline", run: func(context.Context, core.Turn) error {
			return fmt.Errorf("llm: chat: %w", context.DeadlineExceeded)
		}, wantNotice: "I hit a problem and couldn't finish: this took longer"},
		{name: "panic", run: func(context.Context, core.Turn) error { panic("nil map") },
			wantNotice: "I hit a problem and couldn't finish: something went wrong"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, j, p := startHub(t, Options{Runner: runFunc(tt.run)})
			in := msg("A", "E1", "hello")
			submit(t, h, in)
			j.waitCompleted(t, 1)
			if err := h.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			rec := p.rec(in.Thread)
			notices := rec.Notices()
			switch {
			case tt.wantNotice == "" && len(notices) != 0:
				t.Errorf("notices = %q, want none", notices)
			case tt.wantNotice != "" && (len(notices) != 1 || !strings.HasPrefix(notices[0], tt.wantNotice)):
				t.Errorf("notices = %q, want one starting %q", notices, tt.wantNotice)
			}
			for _, n := range notices {
				for _, leak := range []string{"fireworks", "500", "fw_", "nil map", "llm:"} {
					if strings.Contains(n, leak) {
						t.Errorf("notice %q shows internals (%q)", n, leak)
					}
				}
			}
			if got := len(rec.Says()) == 1; got != tt.wantSay {
				t.Errorf("answered = %v, want %v", got, tt.wantSay)
			}
		})
	}
}

// TestCloseLetsRunningTurnFinish checks that Close waits within Grace for
// the running turn and leaves queued turns pending.
func TestCloseLetsRunningTurnFinish(t *testing.T) {
	r := newHeldRunner()
	h, j, _ := startHub(t, Options{Runner: r, MaxConcurrent: 1, Grace: time.Hour})
	a1, a2, b1 := msg("A", "A1", "one"), msg("A", "A2", "two"), msg("B", "B1", "three")
	submit(t, h, a1)
	c := r.next(t)
	submit(t, h, a2)
	submit(t, h, b1)

	closed := make(chan error, 1)
	go func() { closed <- h.Close(context.Background()) }()
	<-h.closing
	if ok, err := h.Submit(t.Context(), msg("A", "A3", "four")); ok || !errors.Is(err, ErrClosed) {
		t.Errorf("Submit() while closing = %v, %v, want false, ErrClosed", ok, err)
	}
	if c.ctx.Err() != nil {
		t.Errorf("running turn's context during Grace = %v, want live", c.ctx.Err())
	}
	c.reply <- nil
	if err := <-closed; err != nil {
		t.Fatalf("Close() = %v, want nil", err)
	}
	if !j.completed(a1) {
		t.Error("turn finished within Grace is not completed")
	}
	if got, want := j.pendingIDs(t), []string{"A2", "B1"}; !slices.Equal(got, want) {
		t.Errorf("pending after Close = %v, want %v", got, want)
	}
	assertIdleAfterClose(t, h)
}

// TestShutdownCancelsThenResumes checks that a turn still running after
// Grace is cancelled, stays pending, and resumes (with everything queued
// behind it) in order after a restart, exactly once.
func TestShutdownCancelsThenResumes(t *testing.T) {
	j := newMemJournal()
	r := newHeldRunner()
	h, _, _ := startHub(t, Options{Runner: r, Journal: j, MaxConcurrent: 1, Grace: time.Millisecond})
	a1, a2, b1 := msg("A", "A1", "one"), msg("A", "A2", "two"), msg("B", "B1", "three")
	submit(t, h, a1)
	c := r.next(t)
	submit(t, h, a2)
	submit(t, h, b1)
	if err := h.Close(context.Background()); err != nil {
		t.Fatalf("Close() = %v, want nil", err)
	}
	if cause := context.Cause(c.ctx); !errors.Is(cause, core.ErrShutdown) {
		t.Errorf("running turn's cancel cause = %v, want shutdown", cause)
	}
	if got, want := j.pendingIDs(t), []string{"A1", "A2", "B1"}; !slices.Equal(got, want) {
		t.Fatalf("pending after shutdown = %v, want %v (the interrupted turn resumes)", got, want)
	}

	// Restart: A1 is resumed first (the agent continues it), then A2 and B1.
	r2 := &sayRunner{}
	h2, _, p2 := startHub(t, Options{Runner: r2, Journal: j, MaxConcurrent: 1})
	j.waitCompleted(t, 3)
	if err := h2.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := r2.calls()
	if i, k := slices.Index(got, "A1"), slices.Index(got, "A2"); len(got) != 3 || i < 0 || k < i || !slices.Contains(got, "B1") {
		t.Errorf("turns after restart = %v, want A1 before A2, and B1, each once", got)
	}
	if says := p2.rec(a1.Thread).Says(); !slices.Equal(says, []string{"answer A1", "answer A2"}) {
		t.Errorf("answers in A after restart = %q, want A1's then A2's", says)
	}
	assertIdleAfterClose(t, h2)
}

// assertIdleAfterClose is assertIdle for a hub closed with turns left:
// those stay in the journal, and the hub holds no worker.
func assertIdleAfterClose(t *testing.T, h *Hub) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.running != 0 || len(h.chores) != 0 {
		t.Errorf("closed hub has %d workers and %d chores, want none", h.running, len(h.chores))
	}
}

// TestCloseReportsTurnsOutlivingCtx checks that Close gives up when its
// context ends before a turn that ignores cancellation, and that a later
// Close waits for it.
func TestCloseReportsTurnsOutlivingCtx(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	runner := runFunc(func(ctx context.Context, turn core.Turn) error {
		close(started)
		<-release // ignores ctx, like a stuck tool
		return nil
	})
	h, j, _ := startHub(t, Options{Runner: runner, Grace: time.Hour})
	in := msg("A", "E1", "hi")
	submit(t, h, in)
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Close(cancelled ctx) with a stuck turn = %v, want context.Canceled", err)
	}
	close(release)
	if err := h.Close(context.Background()); err != nil {
		t.Errorf("second Close() = %v, want nil once the turn ended", err)
	}
	if !j.completed(in) {
		t.Error("turn that finished with nil is not completed")
	}
}
