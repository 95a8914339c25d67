package core_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
)

// twoOfThree is a spend request under a tier that needs two of UA, UB and
// U1, U1 being the requester, and UC able to deny.
func twoOfThree(q core.Quorum) core.GateRequest {
	req := gateReq("n1")
	req.Options = []core.Option{{Label: "Approve", Approves: true}, {Label: "Deny"}}
	if q.Approvers == nil {
		q.Approvers = []string{"UA", "UB", "U1", "UC"}
	}
	q.Need = 2
	req.Quorum = &q
	return req
}

// TestQuorumAnswer: a quorum is two distinct people, never the
// requester; a second click by one never counts twice; each click is
// recorded with who, when and where; the gate completes only with the
// second approval, and any deny ends it.
func TestQuorumAnswer(t *testing.T) {
	ctx := t.Context()
	gs, store, clk := newGates(t)
	g, _, err := gs.Open(ctx, twoOfThree(core.Quorum{Tier: "over 1000 USDC"}), []string{"U-admin"})
	if err != nil {
		t.Fatal(err)
	}
	click := func(user string, idx int, surface string) core.Click {
		t.Helper()
		c, err := gs.AnswerFrom(ctx, g.Token, idx, user, nil, surface)
		if err != nil {
			t.Fatalf("AnswerFrom(%s) = %v", user, err)
		}
		return c
	}
	if c := click("U1", 0, "thread"); c.Refusal == "" || c.Redraw {
		t.Errorf("the requester's approval = %+v, want refused", c)
	}
	if c := click("U-admin", 0, "thread"); c.Refusal == "" {
		t.Errorf("an approver outside the tier's group = %+v, want refused", c)
	}
	c := click("UA", 0, "dm")
	if c.Refusal != "" || !c.Redraw || c.Gate.State != core.GatePending {
		t.Fatalf("the first approval = %+v, want recorded, the gate still pending and redrawn", c)
	}
	if got, want := c.Gate.Progress(), "1 of 2 approvals: <@UA>"; got != want {
		t.Errorf("Progress = %q, want %q", got, want)
	}
	clk.Advance(time.Minute)
	if c := click("UA", 0, "thread"); !strings.Contains(c.Refusal, "never counts twice") || !strings.Contains(c.Refusal, "1 more approval") {
		t.Errorf("a repeated approval = %+v, want refused saying one more is needed", c)
	}
	if stored, _ := store.LoadGate(ctx, g.Token); len(stored.Votes) != 1 || stored.State != core.GatePending {
		t.Errorf("after the repeated click: %d votes, %s; want 1, pending", len(stored.Votes), stored.State)
	}
	c = click("UB", 0, "home")
	if c.Gate.State != core.GateApproved || c.Gate.DecidedBy != "UA,UB" {
		t.Errorf("the second approval = %s by %q, want approved by UA,UB", c.Gate.State, c.Gate.DecidedBy)
	}
	want := []core.Vote{
		{User: "UA", At: clk.Now().Add(-time.Minute), Approves: true, Surface: "dm"},
		{User: "UB", At: clk.Now(), Approves: true, Surface: "home"},
	}
	if stored, _ := store.LoadGate(ctx, g.Token); !slices.Equal(stored.Votes, want) {
		t.Errorf("votes = %+v, want %+v", stored.Votes, want)
	}
	if c := click("UC", 1, "thread"); c.Gate.State != core.GateApproved || c.Refusal == "" {
		t.Errorf("a deny after the quorum = %+v, want refused, the gate approved", c)
	}

	// Any deny ends it, even after an approval, even by one who approved.
	for _, denier := range []string{"UC", "UA"} {
		req := twoOfThree(core.Quorum{})
		req.NodeID = "deny-" + denier
		g, _, _ := gs.Open(ctx, req, nil)
		if _, err := gs.AnswerFrom(ctx, g.Token, 0, "UA", nil, "thread"); err != nil {
			t.Fatal(err)
		}
		c, _ := gs.AnswerFrom(ctx, g.Token, 1, denier, nil, "thread")
		if c.Gate.State != core.GateDenied || c.Gate.DecidedBy != denier {
			t.Errorf("deny by %s after one approval = %s by %q, want denied by them", denier, c.Gate.State, c.Gate.DecidedBy)
		}
	}
}

// TestQuorumAsk: Ask returns once, when the second distinct approval
// lands, not at the first.
func TestQuorumAsk(t *testing.T) {
	gs, _, _ := newGates(t)
	ui := newNotifyUI()
	done := make(chan core.GateAnswer, 1)
	go func() {
		ans, _ := gs.Ask(context.Background(), twoOfThree(core.Quorum{}), nil, ui)
		done <- ans
	}()
	g := <-ui.posted
	if n := <-ui.notes; n.text != "" || !slices.Equal(n.people, []string{"UA", "UB", "UC"}) {
		t.Errorf("copies sent to %v (%q), want UA, UB and UC, not the requester", n.people, n.text)
	}
	if _, err := gs.AnswerFrom(t.Context(), g.Token, 0, "UA", nil, "thread"); err != nil {
		t.Fatal(err)
	}
	select {
	case ans := <-done:
		t.Fatalf("Ask returned %+v after one approval of two", ans)
	default:
	}
	if _, err := gs.AnswerFrom(t.Context(), g.Token, 0, "UB", nil, "thread"); err != nil {
		t.Fatal(err)
	}
	if ans := <-done; !ans.Approved || ans.By != "UA,UB" {
		t.Errorf("Ask = %+v, want approved by UA,UB", ans)
	}
}

// notifyUI is a fakeUI that also reaches approvers.
type notifyUI struct {
	*fakeUI
	notes chan note
}

type note struct {
	text   string
	people []string
}

func newNotifyUI() *notifyUI { return &notifyUI{fakeUI: newFakeUI(), notes: make(chan note, 8)} }

func (u *notifyUI) NotifyGate(_ context.Context, g core.Gate, text string, people []string) []string {
	u.notes <- note{text, people}
	var refs []string
	for _, p := range people {
		refs = append(refs, "D"+p)
	}
	return refs
}

// TestQuorumTimes: the tier's reminder, escalation and expiry happen at
// their times on the manual clock, each once, even across a restart
// between them; the escalation group may approve from then on; the
// expiry tells the thread and the requester, and nothing is approved.
func TestQuorumTimes(t *testing.T) {
	clk := coretest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	store := coretest.NewGateStore()
	req := twoOfThree(core.Quorum{RemindAfter: time.Hour, EscalateAfter: 2 * time.Hour, EscalateTo: []string{"UCFO"}, ExpireAfter: 3 * time.Hour})
	ask := func(ctx context.Context, ui *notifyUI) chan core.GateAnswer {
		gs := core.NewGates(core.GatesOptions{Store: store, Clock: clk})
		done := make(chan core.GateAnswer, 1)
		go func() {
			ans, _ := gs.Ask(ctx, req, nil, ui)
			done <- ans
		}()
		return done
	}
	ctx, cancel := context.WithCancelCause(t.Context())
	ui := newNotifyUI()
	done := ask(ctx, ui)
	g := <-ui.posted
	<-ui.notes // the copies
	if err := clk.WaitPending(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	if n := <-ui.notes; !strings.Contains(n.text, "Reminder") || !strings.Contains(n.text, "<@UA>, <@UB>, <@UC>") || strings.Contains(n.text, "<@U1>") {
		t.Errorf("reminder = %q, want the approvers who did not vote, not the requester", n.text)
	}
	// neobot restarts: the turn ends as in a shutdown, and resumes.
	cancel(core.ErrShutdown)
	<-done
	ui = newNotifyUI()
	done = ask(t.Context(), ui)
	if err := clk.WaitPending(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if gate, _ := store.LoadGate(t.Context(), g.Token); gate.MayAnswer("UCFO", nil) {
		t.Error("the escalation group may approve before the escalation")
	}
	clk.Advance(time.Hour)
	n := <-ui.notes
	if !strings.Contains(n.text, "escalated: <@UCFO> may now approve") || !slices.Equal(n.people, []string{"UCFO"}) {
		t.Errorf("escalation = %q to %v, want UCFO told and sent a copy; no second reminder", n.text, n.people)
	}
	// The expiry's timer is armed once the escalation is done.
	if err := clk.WaitPending(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if gate, _ := store.LoadGate(t.Context(), g.Token); !gate.MayAnswer("UCFO", nil) || !slices.Contains(gate.Copies, "DUCFO") || !gate.Reminded {
		t.Errorf("after the escalation: UCFO may answer %v, copies %v, reminded %v", gate.MayAnswer("UCFO", nil), gate.Copies, gate.Reminded)
	}
	clk.Advance(time.Hour)
	if ans := <-done; ans.Approved {
		t.Errorf("Ask after the expiry = %+v, want nothing approved", ans)
	}
	if n := <-ui.notes; !strings.Contains(n.text, "<@U1>, the approval you asked for above expired") || !strings.Contains(n.text, "nothing was run") {
		t.Errorf("expiry = %q, want the requester and the thread told", n.text)
	}
	if last, _ := ui.lastShown(); last.State != core.GateExpired {
		t.Errorf("shown as %s, want expired", last.State)
	}
}

// racingUI is a notifyUI on which an approval lands while the copies are
// being sent, before they are recorded; shown carries each redraw.
type racingUI struct {
	*notifyUI
	gs    *core.Gates
	shown chan core.Gate
}

func (u racingUI) NotifyGate(ctx context.Context, g core.Gate, text string, people []string) []string {
	if text == "" {
		if _, err := u.gs.AnswerFrom(ctx, g.Token, 0, "UA", nil, "dm"); err != nil {
			panic(err)
		}
	}
	return u.notifyUI.NotifyGate(ctx, g, text, people)
}

func (u racingUI) ShowGate(_ context.Context, g core.Gate) { u.shown <- g }

// TestQuorumVoteWhileCopying: a vote recorded while the copies were
// being sent (so its click's redraw did not know them) is shown on every
// copy once they are recorded.
func TestQuorumVoteWhileCopying(t *testing.T) {
	gs, _, _ := newGates(t)
	ui := racingUI{newNotifyUI(), gs, make(chan core.Gate, 4)}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _, _ = gs.Ask(ctx, twoOfThree(core.Quorum{}), nil, ui) }()
	<-ui.posted
	select {
	case g := <-ui.shown:
		if len(g.Votes) != 1 || len(g.Copies) != 3 {
			t.Errorf("redrawn with %d votes and %d copies, want the vote on the 3 copies", len(g.Votes), len(g.Copies))
		}
	case <-t.Context().Done():
		t.Fatal("the copies were never redrawn with the vote")
	}
}

// denyingUI is a racingUI on which a deny lands while the copies are
// being redrawn with the vote that came in as they were sent, so that
// redraw ends after the deny's own.
type denyingUI struct{ racingUI }

func (u denyingUI) ShowGate(ctx context.Context, g core.Gate) {
	if g.State == core.GatePending {
		if _, err := u.gs.AnswerFrom(ctx, g.Token, 1, "UB", nil, "dm"); err != nil {
			panic(err)
		}
	}
	u.shown <- g
}

// TestQuorumDenyWhileRedrawingCopies: a deny that lands while the copies
// are redrawn with an earlier vote is drawn after that redraw: no copy is
// left asking for an approval that was denied (with its buttons live).
func TestQuorumDenyWhileRedrawingCopies(t *testing.T) {
	gs, _, _ := newGates(t)
	ui := denyingUI{racingUI{newNotifyUI(), gs, make(chan core.Gate, 4)}}
	ans, err := gs.Ask(t.Context(), twoOfThree(core.Quorum{}), nil, ui)
	if err != nil || ans.Approved {
		t.Fatalf("Ask = %+v, %v; want denied", ans, err)
	}
	var last core.Gate
	for len(ui.shown) > 0 {
		last = <-ui.shown
	}
	if last.State != core.GateDenied {
		t.Errorf("the copies were last drawn %s with %d votes, want denied", last.State, len(last.Votes))
	}
}
