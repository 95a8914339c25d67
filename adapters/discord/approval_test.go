package discord

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/adapters/internal/intake/intaketest"
	"github.com/neobot/neobot/core"
)

// askOnTurn makes every turn ask for approval of a spend and say the outcome.
func askOnTurn(e *env) {
	e.hub.OnTurn(func(ctx context.Context, in core.Inbound) {
		ans := core.Ask(ctx, e.a.Approver(in.Thread, in.User), core.GateRequest{
			IntentID: "intent-" + in.EventID, NodeID: "n1",
			Question: "Send **5 USDC** to bob?", Options: []core.Option{{Label: "approve", Approves: true}, {Label: "deny"}},
		})
		_ = e.a.Reporter(in.Thread).Say(ctx, fmt.Sprintf("approved=%v by %s", ans.Approved, ans.By))
	})
}

// gateMessageIn waits for the approval message in channel.
func (e *env) gateMessageIn(channel string) discordtest.Message {
	e.t.Helper()
	m, err := e.discord.WaitMessage(e.ctx, func(m discordtest.Message) bool {
		return m.FromBot() && m.ChannelID == channel && len(m.Buttons()) > 0
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

// response waits for the first response to the click d.
func (e *env) response(d discordtest.Delivery) discordtest.Response {
	e.t.Helper()
	r, err := e.discord.WaitResponse(e.ctx, d)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// privateNote waits for an ephemeral message to user containing want.
func (e *env) privateNote(user, want string) discordtest.Message {
	e.t.Helper()
	m, err := e.discord.WaitMessage(e.ctx, func(m discordtest.Message) bool {
		return m.Ephemeral && m.Recipient == user && strings.Contains(m.Content, want)
	})
	if err != nil {
		e.t.Fatalf("no private note %q to %s: %v\nmessages: %+v", want, user, err, e.discord.Messages())
	}
	return m
}

// TestApprovalMessage: how an approval shows in Discord: the question and
// the requester, approve and deny as success and danger buttons whose
// custom IDs carry an opaque token, the click answered by updating the
// message, which then says who approved and when. The flow itself is the
// conformance suite's.
func TestApprovalMessage(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	askOnTurn(e)
	d := e.discord.Mention(discordtest.Msg{User: "111", Text: "pay bob"})
	msg := e.gateMessageIn(d.ID)

	buttons := msg.Buttons()
	if len(buttons) != 2 || buttons[0].Label != "approve" || buttons[0].Style != 3 ||
		buttons[1].Label != "deny" || buttons[1].Style != 4 {
		t.Fatalf("buttons = %+v, want approve (success) and deny (danger)", buttons)
	}
	token, idx, ok := parseCustomID(buttons[1].CustomID)
	if !ok || idx != 1 || len(token) < 20 || len(buttons[1].CustomID) > 100 {
		t.Errorf("deny custom_id = %q, want an opaque token and index 1, under 100 characters", buttons[1].CustomID)
	}
	if !strings.Contains(msg.Content, "Send **5 USDC** to bob?") || !strings.Contains(msg.Content, "<@111>") {
		t.Errorf("gate message = %q, want the question and the requester", msg.Content)
	}

	r := e.response(e.discord.Click("111", msg, 0))
	if r.Type != discordtest.ResponseUpdate {
		t.Errorf("response type = %d, want %d (update the message)", r.Type, discordtest.ResponseUpdate)
	}
	e.botReply(d.ID, "approved=true by 111")
	got, _ := e.discord.MessageByID(msg.ID)
	if len(got.Buttons()) != 0 || !strings.Contains(got.Content, "Approved (approve) by <@111> at <t:") {
		t.Errorf("gate message after the click = %q with %d buttons, want who approved and when, no buttons", got.Content, len(got.Buttons()))
	}

}

// TestApprovalStoppedTurnDeniesGate: a user's stop denies the pending gate.
func TestApprovalStoppedTurnDeniesGate(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	turnCtx, cancelTurn := context.WithCancelCause(context.Background())
	defer cancelTurn(nil)
	e.hub.OnTurn(func(ctx context.Context, in core.Inbound) {
		ans := core.Ask(turnCtx, e.a.Approver(in.Thread, in.User), core.GateRequest{
			IntentID: "i1", NodeID: "n1", Question: "Spend?", Options: []core.Option{{Label: "yes", Approves: true}, {Label: "no"}}})
		_ = e.a.Reporter(in.Thread).Say(ctx, fmt.Sprintf("approved=%v", ans.Approved))
	})
	d := e.discord.Mention(discordtest.Msg{User: "111", Text: "spend"})
	msg := e.gateMessageIn(d.ID)
	cancelTurn(core.ErrStopped)
	e.botReply(d.ID, "approved=false")
	got, err := e.discord.WaitMessage(e.ctx, func(m discordtest.Message) bool {
		return m.ID == msg.ID && strings.Contains(m.Content, "Denied")
	})
	if err != nil {
		t.Fatalf("gate message never showed it was denied: %v", err)
	}
	if len(got.Buttons()) != 0 {
		t.Errorf("denied gate still has %d buttons", len(got.Buttons()))
	}
	// A late click is refused privately.
	e.discord.Click("111", msg, 0)
	e.privateNote("111", "already answered")
}

func TestApprovalShutdownLeavesGatePending(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	th := core.Thread{Platform: Platform, Workspace: discordtest.GuildID, Channel: discordtest.ChannelID, ID: discordtest.ChannelID}
	req := core.GateRequest{IntentID: "i9", NodeID: "n1", Question: "Spend?", Options: []core.Option{{Label: "yes", Approves: true}, {Label: "no"}}}

	// The first run posts the gate, then the process stops while it is pending.
	first, cancel := context.WithCancelCause(context.Background())
	done := make(chan core.GateAnswer, 1)
	go func() { done <- core.Ask(first, e.a.Approver(th, "111"), req) }()
	msg := e.gateMessageIn(th.ID)
	cancel(core.ErrShutdown)
	if ans := <-done; ans.Approved {
		t.Fatalf("cancelled approver = %+v, want a denial", ans)
	}
	if got, _ := e.discord.MessageByID(msg.ID); got.Edits != 0 || len(got.Buttons()) != 2 {
		t.Errorf("gate message after shutdown: %d edits, %d buttons; want it pending", got.Edits, len(got.Buttons()))
	}

	// The resumed turn waits on the same gate; the click completes it.
	go func() { done <- core.Ask(e.ctx, e.a.Approver(th, "111"), req) }()
	e.discord.Click("111", msg, 0)
	if ans := <-done; !ans.Approved || ans.By != "111" || ans.Answer != "yes" {
		t.Errorf("resumed approver = %+v, want approved by 111", ans)
	}
	if n := len(e.botMessages(th.ID)); n != 1 {
		t.Errorf("gate messages posted = %d, want 1", n)
	}
}

func TestClickOnUnknownGate(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	old, err := e.a.send(e.ctx, discordtest.ChannelID, gateSend(core.Gate{Token: "forged", Question: "old", State: core.GatePending, Options: []core.Option{{Label: "yes", Approves: true}}}))
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := e.discord.MessageByID(old.ID)
	r := e.response(e.discord.Click("111", msg, 0))
	if r.Type != discordtest.ResponseUpdate {
		t.Errorf("response type = %d, want the stale message updated (%d)", r.Type, discordtest.ResponseUpdate)
	}
	e.privateNote("111", "no longer pending")
	if got, _ := e.discord.MessageByID(msg.ID); len(got.Buttons()) != 0 {
		t.Errorf("stale message still has buttons after the click")
	}
}

func TestApproverWithoutGatesDenies(t *testing.T) {
	a, err := New(Options{Token: "t", Hub: intaketest.NewHub(intaketest.NewThreads())})
	if err != nil {
		t.Fatal(err)
	}
	if ap := a.Approver(core.Thread{}, "U"); ap != nil {
		t.Errorf("Approver without Gates = non-nil, want nil (deny)")
	}
}

func TestParseCustomID(t *testing.T) {
	cases := []struct {
		in    string
		token string
		idx   int
		ok    bool
	}{
		{"neobot_gate:abc:1", "abc", 1, true},
		{"neobot_gate:abc:-1", "", 0, false},
		{"neobot_gate::1", "", 0, false},
		{"neobot_gate:abc", "", 0, false},
		{"other:abc:1", "", 0, false},
	}
	for _, c := range cases {
		token, idx, ok := parseCustomID(c.in)
		if token != c.token || idx != c.idx || ok != c.ok {
			t.Errorf("parseCustomID(%q) = %q, %d, %v; want %q, %d, %v", c.in, token, idx, ok, c.token, c.idx, c.ok)
		}
	}
}
