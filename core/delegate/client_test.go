package delegate_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/delegate"
	"github.com/neobot/neobot/core/delegate/delegatetest"
)

func TestNewRequiresDaemonURL(t *testing.T) {
	for _, base := range []string{"", "  ", "ftp://x", "127.0.0.1:8080"} {
		_, err := delegate.New(delegate.Options{BaseURL: base})
		if err == nil || !strings.Contains(err.Error(), "NEO_DAEMON_URL") {
			t.Errorf("New(BaseURL %q) = %v, want an error naming NEO_DAEMON_URL", base, err)
		}
	}
}

// TestRunStatusTable covers every row of the seed's status table.
func TestRunStatusTable(t *testing.T) {
	tests := []struct {
		name   string
		script delegatetest.Intent
		want   string
		check  func(t *testing.T, err error)
	}{
		{name: "completed", script: delegatetest.Intent{Answer: "settled"}, want: "settled"},
		{name: "completed without answer", script: delegatetest.Intent{}, want: "Done"},
		{name: "slow", script: delegatetest.Intent{Polls: 3, Answer: "settled late"}, want: "settled late"},
		{name: "failed", script: delegatetest.Intent{Fail: "insufficient balance"}, check: func(t *testing.T, err error) {
			var fe *delegate.FailedError
			if !errors.As(err, &fe) || fe.Message != "insufficient balance" || fe.IntentID != "i1" {
				t.Errorf("Run = %v, want *FailedError{i1, insufficient balance}", err)
			}
			if !strings.Contains(err.Error(), "insufficient balance") {
				t.Errorf("Run error text = %q, want the pipeline message", err)
			}
		}},
		{name: "cancelled", script: delegatetest.Intent{Cancel: true}, check: func(t *testing.T, err error) {
			if !errors.Is(err, delegate.ErrCancelled) || err.Error() != "the delegated task was cancelled" {
				t.Errorf("Run = %v, want %q", err, delegate.ErrCancelled)
			}
		}},
		{name: "clarify", script: delegatetest.Intent{Clarify: "Which wallet should pay?"}, check: func(t *testing.T, err error) {
			var ce *delegate.ClarifyError
			if !errors.As(err, &ce) || ce.Question != "Which wallet should pay?" {
				t.Errorf("Run = %v, want *ClarifyError carrying the question", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			d := delegatetest.New(t)
			d.Script(tt.script)
			got, err := newClient(t, d, delegate.Options{}).Run(ctx, "send 5 PAX to bob")
			if tt.check != nil {
				if got != "" {
					t.Errorf("Run answer = %q, want none with an error", got)
				}
				tt.check(t, err)
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Run = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestRunMaxWait(t *testing.T) {
	ctx := testCtx(t)
	d := delegatetest.New(t)
	d.Script(delegatetest.Intent{Never: true})
	clk := newClock()
	ledger := coretest.NewLedger()
	// Each poll moves the clock a minute on: MaxWait passes after ten polls
	// whatever the machine's speed.
	now := func() time.Time { clk.Advance(time.Minute); return clk.Now() }
	c := newClient(t, d, delegate.Options{MaxWait: 10 * time.Minute, Now: now, Ledger: ledger})
	rec := coretest.NewRecorder()
	_, err := c.Run(withTurn(ctx, rec, nil, "call-1"), "send 5 PAX to bob")
	if !errors.Is(err, delegate.ErrTimeout) {
		t.Fatalf("Run = %v, want ErrTimeout", err)
	}
	if !strings.Contains(err.Error(), "i1") || !strings.Contains(err.Error(), "10m0s") {
		t.Errorf("Run error = %q, want the intent and the wait named", err)
	}
	if got, _ := ledger.Delegations(ctx); len(got) != 0 {
		t.Errorf("Delegations after timeout = %v, want none (the tool call has its outcome)", got)
	}
}

func TestRunGates(t *testing.T) {
	gate := delegatetest.Gate{NodeID: "n1", Question: "Approve spend of 5 PAX?", Options: []string{"approve", "deny"}}
	failing := core.Approver(func(context.Context, core.GateRequest) (core.GateAnswer, error) {
		return core.GateAnswer{Approved: true, Answer: "approve"}, errors.New("slack is down")
	})
	tests := []struct {
		name     string
		turn     bool          // put a turn (with this approver) in ctx
		approver core.Approver // turn's approver, or Options.Approver without a turn
		approved bool
		answer   string
	}{
		{name: "approve", turn: true, approver: answerWith("approve"), approved: true, answer: "approve"},
		{name: "deny", turn: true, approver: answerWith("deny"), answer: "deny"},
		{name: "options approver without turn", approver: answerWith("approve"), approved: true, answer: "approve"},
		{name: "nil approver denies", approver: nil},
		{name: "nil turn approver denies", turn: true, approver: nil},
		{name: "approver error denies", turn: true, approver: failing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			d := delegatetest.New(t)
			d.Script(delegatetest.Intent{Gates: []delegatetest.Gate{gate}, Answer: "settled"})
			opts := delegate.Options{}
			if tt.turn {
				ctx = withTurn(ctx, coretest.NewRecorder(), tt.approver, "")
			} else {
				opts.Approver = tt.approver
			}
			got, err := newClient(t, d, opts).Run(ctx, "send 5 PAX to bob")
			answers := d.Answers()
			want := []delegatetest.Answer{{IntentID: "i1", NodeID: "n1", Approved: tt.approved, Answer: tt.answer, Key: "i1/n1"}}
			if !slices.Equal(answers, want) {
				t.Errorf("daemon answers = %+v, want %+v", answers, want)
			}
			if tt.approved {
				if err != nil || got != "settled" {
					t.Errorf("Run = %q, %v; want settled", got, err)
				}
				return
			}
			var fe *delegate.FailedError
			if !errors.As(err, &fe) || !strings.Contains(fe.Message, "denied") {
				t.Errorf("Run = %q, %v; want the daemon's denial as *FailedError", got, err)
			}
		})
	}
}

// TestRunGatesInOrder checks that two gates are each asked once and the
// intent completes after both approvals.
func TestRunGatesInOrder(t *testing.T) {
	ctx := testCtx(t)
	d := delegatetest.New(t)
	d.Script(delegatetest.Intent{
		Gates:  []delegatetest.Gate{{NodeID: "n1", Question: "Spend 5 PAX?"}, {NodeID: "n2", Question: "Pay the 0.1 PAX fee?"}},
		Answer: "settled",
	})
	var asked []string
	a := func(ctx context.Context, req core.GateRequest) (core.GateAnswer, error) {
		asked = append(asked, req.NodeID+":"+req.Question)
		if req.IntentID != "i1" || req.Requester != "U1" || req.Thread != thread || !slices.Equal(req.Options, []core.Option{{Label: "yes", Approves: true}, {Label: "no"}}) ||
			!slices.Equal(req.PlaceApprovers, []string{"UDAVE"}) {
			t.Errorf("approver request = %+v, want intent i1, requester U1, thread, options yes/no, the place's approver UDAVE", req)
		}
		return core.GateAnswer{Approved: true, Answer: "yes", By: "U1"}, nil
	}
	placed := func(in core.Inbound) []string {
		if in.Thread == thread {
			return []string{"UDAVE"}
		}
		return nil
	}
	got, err := newClient(t, d, delegate.Options{PlaceApprovers: placed}).Run(withTurn(ctx, nil, a, ""), "send 5 PAX to bob")
	if err != nil || got != "settled" {
		t.Fatalf("Run = %q, %v; want settled", got, err)
	}
	if want := []string{"n1:Spend 5 PAX?", "n2:Pay the 0.1 PAX fee?"}; !slices.Equal(asked, want) {
		t.Errorf("approver asked %q, want %q", asked, want)
	}
}

// TestRunGateExpiry: a gate nobody answers expires (core.Gates, injected
// clock) and the daemon is told no.
func TestRunGateExpiry(t *testing.T) {
	ctx := testCtx(t)
	d := delegatetest.New(t)
	d.Script(delegatetest.Intent{Gates: []delegatetest.Gate{{NodeID: "n1", Question: "Spend 5 PAX?"}}, Answer: "settled"})
	clk := newClock()
	store := coretest.NewGateStore()
	b := newBoard(store, clk)
	b.beforeWait = func() { clk.Advance(31 * time.Minute) } // nobody clicks
	_, err := newClient(t, d, delegate.Options{}).Run(withTurn(ctx, nil, b.approver(), ""), "send 5 PAX to bob")
	var fe *delegate.FailedError
	if !errors.As(err, &fe) {
		t.Fatalf("Run = %v, want the daemon's denial", err)
	}
	if got := d.Answers(); len(got) != 1 || got[0].Approved {
		t.Errorf("daemon answers = %+v, want one denial", got)
	}
	g := b.next(t, ctx)
	if got, _ := store.LoadGate(ctx, g.Token); got.State != core.GateExpired {
		t.Errorf("gate state = %s, want expired", got.State)
	}
}

// TestRunGateWithdrawn: when the daemon drops a gate from its pending list,
// the approver's ctx is cancelled, the daemon is still sent a denial (it
// refuses it: the gate is gone), and the adapter closes the gate in chat.
func TestRunGateWithdrawn(t *testing.T) {
	ctx := testCtx(t)
	d := delegatetest.New(t)
	d.Script(delegatetest.Intent{Gates: []delegatetest.Gate{{NodeID: "n1", Question: "Spend 5 PAX?"}}, Answer: "settled"})
	store := coretest.NewGateStore()
	b := newBoard(store, nil)
	b.closeOnCancel = true
	done := runAsync(withTurn(ctx, nil, b.approver(), ""), newClient(t, d, delegate.Options{}), "send 5 PAX to bob")
	g := b.next(t, ctx)
	if !d.Withdraw("i1", "n1") {
		t.Fatal("Withdraw(i1, n1) = false, want the gate pending")
	}
	select {
	case node := <-b.cancelled:
		if node != "n1" {
			t.Errorf("cancelled approver for %s, want n1", node)
		}
	case <-ctx.Done():
		t.Fatal("the approver's ctx was not cancelled after the gate was withdrawn")
	}
	r := wait(t, ctx, done)
	var fe *delegate.FailedError
	if !errors.As(r.err, &fe) || !strings.Contains(fe.Message, "expired") {
		t.Errorf("Run = %q, %v; want the daemon's failure", r.answer, r.err)
	}
	if got := d.Answers(); len(got) != 0 {
		t.Errorf("daemon answers accepted = %+v, want none for a withdrawn gate", got)
	}
	if got, err := d.WaitReceived(ctx, 1); err != nil || got[0].Approved || got[0].NodeID != "n1" {
		t.Errorf("daemon was sent %+v, %v; want a denial of n1", got, err)
	}
	if got, _ := store.LoadGate(ctx, g.Token); got.State != core.GateExpired {
		t.Errorf("gate state = %s, want expired (closed in chat)", got.State)
	}
}

// TestRunClicks drives the approval through core.Gates as an adapter would,
// with the refusals a chat thread produces.
func TestRunClicks(t *testing.T) {
	ctx := testCtx(t)
	d := delegatetest.New(t)
	d.Script(delegatetest.Intent{Gates: []delegatetest.Gate{{NodeID: "n1", Question: "Spend 5 PAX?", Options: []string{"approve", "deny"}}}, Answer: "settled"})
	store := coretest.NewGateStore()
	b := newBoard(store, nil, "U-admin")
	done := runAsync(withTurn(ctx, nil, b.approver(), ""), newClient(t, d, delegate.Options{}), "send 5 PAX to bob")
	g := b.next(t, ctx)

	if _, err := b.gates.Decide(ctx, g.Token, "U-mallory", nil, "approve"); !errors.Is(err, core.ErrGateForbidden) {
		t.Errorf("Decide(by a user not allowed) = %v, want ErrGateForbidden", err)
	}
	if _, err := b.gates.Decide(ctx, "forged-"+g.Token, "U1", nil, "approve"); !errors.Is(err, core.ErrGateUnknown) {
		t.Errorf("Decide(forged token) = %v, want ErrGateUnknown", err)
	}
	if got := d.Answers(); len(got) != 0 {
		t.Fatalf("daemon answers after refusals = %+v, want none", got)
	}
	if _, err := b.gates.Decide(ctx, g.Token, "U-admin", nil, "approve"); err != nil {
		t.Fatalf("Decide(by a configured approver) = %v", err)
	}
	r := wait(t, ctx, done)
	if r.err != nil || r.answer != "settled" {
		t.Fatalf("Run = %q, %v; want settled", r.answer, r.err)
	}
	if got, err := b.gates.Decide(ctx, g.Token, "U1", nil, "deny"); !errors.Is(err, core.ErrGateClosed) || got.DecidedBy != "U-admin" {
		t.Errorf("Decide(second answer) = %+v, %v; want ErrGateClosed with the first decision kept", got, err)
	}
	want := []delegatetest.Answer{{IntentID: "i1", NodeID: "n1", Approved: true, Answer: "approve", Key: "i1/n1"}}
	if got := d.Answers(); !slices.Equal(got, want) {
		t.Errorf("daemon answers = %+v, want %+v", got, want)
	}
}

// TestRunRestart: the client shuts down while a gate waits; a new client on the
// same ledger and gate store finds the intent and the gate, and finishes
// after the approval without submitting again.
func TestRunRestart(t *testing.T) {
	ctx := testCtx(t)
	d := delegatetest.New(t)
	d.Script(delegatetest.Intent{Gates: []delegatetest.Gate{{NodeID: "n1", Question: "Spend 5 PAX?"}}, Answer: "settled"})
	ledger, store := coretest.NewLedger(), coretest.NewGateStore()

	// First process: stopped while the gate waits.
	b1 := newBoard(store, nil)
	ctx1, stop := context.WithCancelCause(ctx)
	done := runAsync(withTurn(ctx1, nil, b1.approver(), "call-7"), newClient(t, d, delegate.Options{Ledger: ledger}), "send 5 PAX to bob")
	g1 := b1.next(t, ctx)
	stop(core.ErrShutdown)
	if r := wait(t, ctx, done); !errors.Is(r.err, delegate.ErrInterrupted) {
		t.Fatalf("Run after stop = %q, %v; want ErrInterrupted", r.answer, r.err)
	}
	if got := d.Answers(); len(got) != 0 {
		t.Fatalf("daemon answers after shutdown = %+v, want none (the gate stays pending for the resumed turn)", got)
	}
	if ds, _ := ledger.Delegations(ctx); len(ds) != 1 || ds[0].IntentID != "i1" || ds[0].CallID != "call-7" || ds[0].Requester != "U1" {
		t.Fatalf("Delegations after the stop = %+v, want i1 for call-7 by U1", ds)
	}

	// Second process: same stores, new client, new Gates.
	b2 := newBoard(store, nil)
	rec := coretest.NewRecorder()
	done = runAsync(withTurn(ctx, rec, b2.approver(), "call-7"), newClient(t, d, delegate.Options{Ledger: ledger}), "send 5 PAX to bob")
	g2 := b2.next(t, ctx)
	if g2.Token != g1.Token {
		t.Errorf("gate after restart = %s, want the one already posted %s", g2.Token, g1.Token)
	}
	if _, err := b2.gates.Decide(ctx, g2.Token, "U1", nil, "yes"); err != nil {
		t.Fatalf("Decide = %v", err)
	}
	r := wait(t, ctx, done)
	if r.err != nil || r.answer != "settled" {
		t.Fatalf("Run after restart = %q, %v; want settled", r.answer, r.err)
	}
	if got := d.Intents(); len(got) != 1 {
		t.Errorf("daemon intents = %+v, want one (resumed, not resubmitted)", got)
	}
	if got := d.Answers(); len(got) != 1 || !got[0].Approved {
		t.Errorf("daemon answers = %+v, want one approval", got)
	}
	if ds, _ := ledger.Delegations(ctx); len(ds) != 0 {
		t.Errorf("Delegations after completion = %+v, want none", ds)
	}
	if n := rec.Notices(); len(n) == 0 || !strings.Contains(n[0], "Resuming") || !strings.Contains(n[0], "i1") {
		t.Errorf("notices = %q, want a resume notice naming i1 first", n)
	}
}

// TestRunCallIDReusedInALaterTurn: a model that reuses a call ID in a
// later turn of the thread asks for a new spend: it is submitted (under
// its own idempotency key) and approved afresh, not answered with the
// earlier turn's outcome.
func TestRunCallIDReusedInALaterTurn(t *testing.T) {
	ctx := testCtx(t)
	d := delegatetest.New(t)
	d.Script(delegatetest.Intent{Answer: "sent 5 PAX"}, delegatetest.Intent{Answer: "sent 7 PAX"})
	c := newClient(t, d, delegate.Options{Ledger: coretest.NewLedger()})
	in := func(event string) context.Context {
		return core.WithToolCall(core.WithTurn(ctx, &core.Turn{
			Inbound: core.Inbound{Thread: thread, User: "U1", Text: "pay bob", EventID: event}, Approver: answerWith("yes"),
		}), "call_0")
	}
	if out, err := c.Run(in("Ev1"), "send 5 PAX to bob"); err != nil || out != "sent 5 PAX" {
		t.Fatalf("first turn = %q, %v", out, err)
	}
	if out, err := c.Run(in("Ev2"), "send 7 PAX to bob"); err != nil || out != "sent 7 PAX" {
		t.Errorf("a later turn reusing call_0 = %q, %v; want its own spend", out, err)
	}
	if got := d.Intents(); len(got) != 2 {
		t.Errorf("daemon intents = %d, want 2", len(got))
	}
}

// TestRunRestartAfterDecision: the human decided but the process died
// before the daemon heard; the resumed run sends the recorded decision
// without asking again.
func TestRunRestartAfterDecision(t *testing.T) {
	ctx := testCtx(t)
	d := delegatetest.New(t)
	d.Script(delegatetest.Intent{Gates: []delegatetest.Gate{{NodeID: "n1", Question: "Spend 5 PAX?"}}, Answer: "settled"})
	ledger, store := coretest.NewLedger(), coretest.NewGateStore()
	gates := core.NewGates(core.GatesOptions{Store: store, SelfApprove: true})
	// State a crash leaves behind: intent recorded, gate decided, not sent.
	if err := ledger.SaveDelegation(ctx, core.Delegation{Thread: thread, CallID: "call-7", IntentID: "i1", Requester: "U1"}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(d.URL()+"/messages/async", "application/json", strings.NewReader(`{"prose":"send 5 PAX to bob"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if d.Pending("i1") != "n1" {
		t.Fatalf("daemon pending gate of i1 = %q, want n1", d.Pending("i1"))
	}
	g, _, err := gates.Open(ctx, core.GateRequest{Thread: thread, IntentID: "i1", NodeID: "n1", CallID: "call-7", Question: "Spend 5 PAX?", Options: []core.Option{{Label: "yes", Approves: true}, {Label: "no"}}, Requester: "U1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gates.Decide(ctx, g.Token, "U1", nil, "yes"); err != nil {
		t.Fatal(err)
	}

	b := newBoard(store, nil)
	got, err := newClient(t, d, delegate.Options{Ledger: ledger}).Run(withTurn(ctx, nil, b.approver(), "call-7"), "send 5 PAX to bob")
	if err != nil || got != "settled" {
		t.Fatalf("Run = %q, %v; want settled", got, err)
	}
	select {
	case g := <-b.shown:
		t.Errorf("gate %s shown again, want the recorded decision used", g.Token)
	default:
	}
	if a := d.Answers(); len(a) != 1 || !a[0].Approved {
		t.Errorf("daemon answers = %+v, want the recorded approval once", a)
	}
}

// TestRunAnswerSentOnce: the connection drops after the daemon applied the
// answer; the client resends and the daemon applies it once.
func TestRunAnswerSentOnce(t *testing.T) {
	ctx := testCtx(t)
	d := delegatetest.New(t)
	// The intent keeps running after the gate, so the client keeps going
	// until the test has seen the resend, whatever the scheduling.
	d.Script(delegatetest.Intent{Gates: []delegatetest.Gate{{NodeID: "n1", Question: "Spend 5 PAX?"}}, Never: true, DropAnswers: 1})
	runCtx, stop := context.WithCancel(ctx)
	done := runAsync(runCtx, newClient(t, d, delegate.Options{Approver: answerWith("yes")}), "send 5 PAX to bob")
	posts, err := d.WaitRequests(ctx, 2, func(r delegatetest.Request) bool { return strings.HasSuffix(r.Path, "/answer") })
	stop()
	wait(t, ctx, done)
	if err != nil {
		t.Fatalf("no resend after the dropped connection: %v", err)
	}
	for _, r := range posts {
		if k := r.Header.Get("Idempotency-Key"); k != "i1/n1" {
			t.Errorf("answer request carried Idempotency-Key %q, want i1/n1", k)
		}
	}
	if a := d.Answers(); len(a) != 1 || !a[0].Approved {
		t.Errorf("daemon applied %d answers (%+v), want 1 approval", len(a), a)
	}
}

func TestRunCredentials(t *testing.T) {
	ctx := testCtx(t)
	d := delegatetest.New(t)
	d.RequireToken("s3cret")
	d.Script(delegatetest.Intent{Gates: []delegatetest.Gate{{NodeID: "n1"}}, Answer: "settled"})
	c := newClient(t, d, delegate.Options{
		Token: "s3cret", CallerDID: "did:key:z6Mk", CallerWallet: "0xabc", Skill: "payments", Approver: answerWith("yes"),
	})
	rec := coretest.NewRecorder()
	if got, err := c.Run(withTurn(ctx, rec, answerWith("yes"), "call-1"), "send 5 PAX to bob"); err != nil || got != "settled" {
		t.Fatalf("Run = %q, %v; want settled", got, err)
	}
	reqs := d.Requests()
	for _, r := range reqs {
		if r.Header.Get("Authorization") != "Bearer s3cret" || r.Header.Get("X-Caller-DID") != "did:key:z6Mk" || r.Header.Get("X-Caller-Wallet") != "0xabc" {
			t.Errorf("%s %s headers = %v, want bearer token, caller DID and wallet", r.Method, r.Path, r.Header)
		}
	}
	var body map[string]string
	if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"prose": "send 5 PAX to bob", "skill": "payments", "caller_did": "did:key:z6Mk", "caller_wallet": "0xabc"}
	for k, v := range want {
		if body[k] != v {
			t.Errorf("submit body[%q] = %q, want %q", k, body[k], v)
		}
	}
	if k := reqs[0].Header.Get("Idempotency-Key"); k != "neobot:"+thread.Key()+":Ev1:call-1" {
		t.Errorf("submit Idempotency-Key = %q, want neobot:<thread>:<message>:call-1", k)
	}
	if n := rec.Notices(); len(n) == 0 || n[0] != "Sent for execution (request i1). I will post here when it needs an approval or finishes." {
		t.Errorf("notices = %q, want the submit notice first", n)
	}

	t.Run("bad token", func(t *testing.T) {
		c := newClient(t, d, delegate.Options{Token: "wrong"})
		_, err := c.Run(ctx, "send 5 PAX to bob")
		if !errors.Is(err, delegate.ErrRefused) || !strings.Contains(err.Error(), "NEO_DAEMON_TOKEN") || strings.Contains(err.Error(), "wrong") {
			t.Errorf("Run with a bad token = %v, want ErrRefused naming NEO_DAEMON_TOKEN and not the token", err)
		}
		if got := d.Intents(); len(got) != 1 {
			t.Errorf("daemon intents = %d, want no new one", len(got))
		}
	})
}

func TestRunUnavailable(t *testing.T) {
	ctx := testCtx(t)
	d := delegatetest.NewServer()
	url := d.URL()
	d.Close()
	c, err := delegate.New(delegate.Options{BaseURL: url, PollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Run(ctx, "send 5 PAX to bob")
	if !errors.Is(err, delegate.ErrUnavailable) || !strings.Contains(err.Error(), "nothing was submitted") || strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("Run against a closed port = %v, want ErrUnavailable saying nothing was submitted, without internals", err)
	}
}

// TestRunPollErrors: transient failures while polling are retried; a
// daemon that forgets the intent ends the run.
func TestRunPollErrors(t *testing.T) {
	ctx := testCtx(t)
	fails := 2
	mux := http.NewServeMux()
	mux.HandleFunc("POST /messages/async", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"intent_id":"x1"}`))
	})
	mux.HandleFunc("GET /messages/async/x1", func(w http.ResponseWriter, r *http.Request) {
		if fails > 0 {
			fails--
			http.Error(w, `{"error":"busy"}`, http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte(`{"status":"completed","result":{"answer":"ok"}}`))
	})
	mux.HandleFunc("GET /messages/async/gone", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"no such intent"}`, http.StatusNotFound)
	})
	srv := newHTTPServer(t, mux)
	c, err := delegate.New(delegate.Options{BaseURL: srv, PollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.Run(ctx, "do it"); err != nil || got != "ok" {
		t.Errorf("Run with two 503s = %q, %v; want ok", got, err)
	}

	ledger := coretest.NewLedger()
	if err := ledger.SaveDelegation(ctx, core.Delegation{Thread: thread, CallID: "c9", IntentID: "gone"}); err != nil {
		t.Fatal(err)
	}
	c, _ = delegate.New(delegate.Options{BaseURL: srv, PollInterval: time.Millisecond, Ledger: ledger})
	_, err = c.Run(withTurn(ctx, nil, nil, "c9"), "do it")
	if !errors.Is(err, delegate.ErrRefused) || !strings.Contains(err.Error(), "no longer knows intent gone") {
		t.Errorf("Run on a forgotten intent = %v, want ErrRefused saying the daemon no longer knows it", err)
	}
}

func TestRunEmptyProse(t *testing.T) {
	d := delegatetest.New(t)
	if _, err := newClient(t, d, delegate.Options{}).Run(testCtx(t), "  "); err == nil {
		t.Error(`Run("  ") = nil error, want a refusal`)
	}
	if n := len(d.Requests()); n != 0 {
		t.Errorf("requests = %d, want none", n)
	}
}

// TestRunStoppedByUser: a user's "stop" while a gate waits denies the gate
// at the daemon at once and finishes the delegation, so neither the daemon
// nor a restart keeps the spend alive.
func TestRunStoppedByUser(t *testing.T) {
	ctx := testCtx(t)
	d := delegatetest.New(t)
	d.Script(delegatetest.Intent{Gates: []delegatetest.Gate{{NodeID: "n1", Question: "Spend 5 PAX?"}}, Answer: "settled"})
	ledger, store := coretest.NewLedger(), coretest.NewGateStore()
	b := newBoard(store, nil)
	turnCtx, stop := context.WithCancelCause(ctx)
	done := runAsync(withTurn(turnCtx, nil, b.approver(), "call-9"), newClient(t, d, delegate.Options{Ledger: ledger}), "send 5 PAX to bob")
	b.next(t, ctx)
	stop(core.ErrStopped)
	if r := wait(t, ctx, done); r.err == nil {
		t.Fatalf("Run after a stop = %q, nil; want an error", r.answer)
	}
	answers, err := d.WaitAnswers(ctx, 1)
	if err != nil {
		t.Fatalf("the daemon never heard about the stopped gate: %v", err)
	}
	if len(answers) != 1 || answers[0].Approved {
		t.Errorf("daemon answers = %+v, want one denial", answers)
	}
	if ds, _ := ledger.Delegations(ctx); len(ds) != 0 {
		t.Errorf("Delegations after a stop = %+v, want none in flight", ds)
	}
}

// TestRunGateClosedTellsDaemon: every way a gate closes without a human's
// decision but shutdown reaches the daemon as approved: false.
func TestRunGateClosedTellsDaemon(t *testing.T) {
	tests := []struct {
		name  string
		cause error // the turn's ctx ends with this cause; nil: MaxWait passes
		want  int   // denials the daemon is sent
	}{
		{"max wait passes", nil, 1},
		{"turn cancelled", context.Canceled, 1},
		{"user stopped the turn", core.ErrStopped, 1},
		{"shutdown leaves the gate pending", core.ErrShutdown, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			d := delegatetest.New(t)
			d.Script(delegatetest.Intent{Gates: []delegatetest.Gate{{NodeID: "n1", Question: "Spend 5 PAX?"}}, Answer: "settled"})
			opts := delegate.Options{}
			if tt.cause == nil {
				// Each poll moves the clock a minute on: MaxWait passes
				// after a few polls while the approver still waits.
				clk := newClock()
				opts.Now = func() time.Time { clk.Advance(time.Minute); return clk.Now() }
				opts.MaxWait = 5 * time.Minute
			}
			asked := make(chan struct{}, 1)
			blocking := core.Approver(func(ctx context.Context, req core.GateRequest) (core.GateAnswer, error) {
				asked <- struct{}{}
				<-ctx.Done()
				return core.GateAnswer{}, ctx.Err()
			})
			turnCtx, cancel := context.WithCancelCause(ctx)
			defer cancel(nil)
			done := runAsync(withTurn(turnCtx, nil, blocking, ""), newClient(t, d, opts), "send 5 PAX to bob")
			if tt.cause != nil {
				select {
				case <-asked:
				case <-ctx.Done():
					t.Fatal("the approver was never asked")
				}
				cancel(tt.cause)
			}
			if r := wait(t, ctx, done); r.err == nil {
				t.Fatalf("Run = %q, nil; want an error", r.answer)
			}
			if tt.want == 0 {
				if got := d.Received(); len(got) != 0 {
					t.Errorf("daemon was sent %+v, want nothing", got)
				}
				return
			}
			got, err := d.WaitReceived(ctx, tt.want)
			if err != nil || got[0].Approved || got[0].NodeID != "n1" {
				t.Errorf("daemon was sent %+v, %v; want a denial of n1", got, err)
			}
		})
	}
}

// TestRunApproverPanicDenies: an approver that panics on a question
// (a renderer bug) denies the gate instead of crashing the process.
func TestRunApproverPanicDenies(t *testing.T) {
	ctx := testCtx(t)
	d := delegatetest.New(t)
	d.Script(delegatetest.Intent{Gates: []delegatetest.Gate{{NodeID: "n1", Question: " "}}, Answer: "settled"})
	panicky := core.Approver(func(context.Context, core.GateRequest) (core.GateAnswer, error) {
		var parts []string
		return core.GateAnswer{Approved: true, Answer: parts[0]}, nil
	})
	_, err := newClient(t, d, delegate.Options{}).Run(withTurn(ctx, nil, panicky, ""), "send 5 PAX to bob")
	var fe *delegate.FailedError
	if !errors.As(err, &fe) {
		t.Fatalf("Run = %v, want the daemon's denial", err)
	}
	if got := d.Answers(); len(got) != 1 || got[0].Approved {
		t.Errorf("daemon answers = %+v, want one denial", got)
	}
}

// TestRunSpendAuthority: a requester the operator did not allow gets a
// refusal in words and the daemon sees no request at all.
func TestRunSpendAuthority(t *testing.T) {
	policy := core.SpendPolicy{"slack": {Users: []string{"U-treasurer"}}}
	tests := []struct {
		name    string
		ctx     func(context.Context) context.Context
		allowed bool
	}{
		{"listed requester", func(ctx context.Context) context.Context {
			return core.WithTurn(ctx, &core.Turn{Inbound: core.Inbound{Thread: thread, User: "U-treasurer"}, Approver: answerWith("yes")})
		}, true},
		{"unlisted requester", func(ctx context.Context) context.Context { return withTurn(ctx, nil, answerWith("yes"), "") }, false},
		{"no turn, no requester", func(ctx context.Context) context.Context { return ctx }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			d := delegatetest.New(t)
			d.Script(delegatetest.Intent{Answer: "settled"})
			got, err := newClient(t, d, delegate.Options{Authorize: policy.Authorize, Approver: answerWith("yes")}).Run(tt.ctx(ctx), "send 5 PAX to bob")
			if tt.allowed {
				if err != nil || got != "settled" {
					t.Errorf("Run = %q, %v; want settled", got, err)
				}
				return
			}
			var refusal *core.SpendRefusal
			if !errors.As(err, &refusal) || !errors.Is(err, core.ErrSpendForbidden) || !strings.Contains(err.Error(), "nothing was submitted") {
				t.Errorf("Run = %q, %v; want a *core.SpendRefusal saying nothing was submitted", got, err)
			}
			if n := len(d.Requests()); n != 0 {
				t.Errorf("daemon requests = %d, want none", n)
			}
		})
	}
}

// TestDaemonLabelsMarkedWhereTheyComeIn: the daemon says only its options'
// labels, so the client marks which approve as it asks: a plain yes does,
// "Don't send" and a yes that refuses in other words do not.
func TestDaemonLabelsMarkedWhereTheyComeIn(t *testing.T) {
	ctx := testCtx(t)
	d := delegatetest.New(t)
	d.Script(delegatetest.Intent{
		Gates: []delegatetest.Gate{{NodeID: "n1", Question: "Send 5 PAX?", Options: []string{"Yes, send", "Don't send", "Ja, nicht senden"}}},
	})
	var options []core.Option
	a := func(ctx context.Context, req core.GateRequest) (core.GateAnswer, error) {
		options = req.Options
		return core.GateAnswer{Answer: "Don't send", By: "U1"}, nil
	}
	_, _ = newClient(t, d, delegate.Options{}).Run(withTurn(ctx, nil, a, ""), "send 5 PAX to bob") // denied
	want := []core.Option{{Label: "Yes, send", Approves: true}, {Label: "Don't send"}, {Label: "Ja, nicht senden"}}
	if !slices.Equal(options, want) {
		t.Errorf("options asked = %v, want %v", options, want)
	}
}
