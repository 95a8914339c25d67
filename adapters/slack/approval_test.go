package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/internal/gatetext"
	"github.com/neobot/neobot/adapters/slack/slacktest"
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

// gateMessageIn waits for the approval message in the thread.
func (e *env) gateMessageIn(channel, thread string) slacktest.Message {
	e.t.Helper()
	m, err := e.slack.WaitMessage(e.ctx, func(m slacktest.Message) bool {
		return m.FromBot() && m.Channel == channel && m.ThreadTS == thread && len(m.Buttons()) > 0
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

// edited waits for msg to have been edited and returns it as it is then.
func (e *env) edited(msg slacktest.Message) slacktest.Message {
	e.t.Helper()
	m, err := e.slack.WaitMessage(e.ctx, func(m slacktest.Message) bool {
		return m.Channel == msg.Channel && m.TS == msg.TS && m.Edits > msg.Edits
	})
	if err != nil {
		e.t.Fatalf("message %s never edited: %v", msg.TS, err)
	}
	return m
}

// TestApprovalMessage: how an approval shows in Slack: the question in
// mrkdwn, approve and deny as primary and danger buttons carrying an
// opaque token, and once answered who approved and when, in the viewer's
// time zone. The flow itself is the conformance suite's.
func TestApprovalMessage(t *testing.T) {
	e := start(t, nil)
	askOnTurn(e)
	d := e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "pay bob"})
	msg := e.gateMessageIn("C0GENERAL", d.TS)

	buttons := msg.Buttons()
	if len(buttons) != 2 || buttons[0].Text != "approve" || buttons[0].Style != "primary" ||
		buttons[1].Text != "deny" || buttons[1].Style != "danger" {
		t.Fatalf("buttons = %+v, want approve (primary) and deny (danger)", buttons)
	}
	token, idx, ok := gatetext.ParseValue(buttons[1].Value)
	if !ok || idx != 1 || len(token) < 20 {
		t.Errorf("deny button value = %q, want an opaque token and index 1", buttons[1].Value)
	}
	if !strings.Contains(msg.Rendered(), "Send *5 USDC* to bob?") {
		t.Errorf("question = %q, want the question in mrkdwn", msg.Rendered())
	}

	e.ack(e.slack.Click("UALICE", msg, 0))
	e.botReply("C0GENERAL", d.TS, "approved=true by UALICE")
	got := e.edited(msg)
	if len(got.Buttons()) != 0 || !strings.Contains(got.Rendered(), "Approved (approve) by <@UALICE> at <!date^") {
		t.Errorf("gate message after the click = %q with %d buttons, want who approved and when, no buttons", got.Rendered(), len(got.Buttons()))
	}

}

func TestApprovalCancelledTurnExpiresGate(t *testing.T) {
	e := start(t, nil)
	turnCtx, cancelTurn := context.WithCancel(context.Background())
	defer cancelTurn()
	e.hub.OnTurn(func(ctx context.Context, in core.Inbound) {
		ans := core.Ask(turnCtx, e.a.Approver(in.Thread, in.User), core.GateRequest{
			IntentID: "i1", NodeID: "n1", Question: "Spend?", Options: []core.Option{{Label: "yes", Approves: true}, {Label: "no"}}})
		_ = e.a.Reporter(in.Thread).Say(ctx, fmt.Sprintf("approved=%v", ans.Approved))
	})
	d := e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "spend"})
	msg := e.gateMessageIn("C0GENERAL", d.TS)
	cancelTurn()
	e.botReply("C0GENERAL", d.TS, "approved=false")
	got, err := e.slack.WaitMessage(e.ctx, func(m slacktest.Message) bool {
		return m.TS == msg.TS && strings.Contains(m.Rendered(), "Expired")
	})
	if err != nil {
		t.Fatalf("gate message never showed it expired: %v", err)
	}
	if len(got.Buttons()) != 0 {
		t.Errorf("expired gate still has %d buttons", len(got.Buttons()))
	}
	// A late click is refused privately.
	e.ack(e.slack.Click("UALICE", msg, 0))
	eph, err := e.slack.WaitMessage(e.ctx, func(m slacktest.Message) bool { return m.Ephemeral && m.Recipient == "UALICE" })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(eph.Text, "already answered") && !strings.Contains(eph.Text, "expired") {
		t.Errorf("ephemeral on a late click = %q, want it to say the request is over", eph.Text)
	}
}

func TestApprovalResumedGateNotPostedTwice(t *testing.T) {
	e := start(t, nil)
	th := core.Thread{Platform: Platform, Workspace: slacktest.TeamID, Channel: "C0GENERAL", ID: "1700000000.000001"}
	req := core.GateRequest{IntentID: "i9", NodeID: "n1", Question: "Spend?", Options: []core.Option{{Label: "yes", Approves: true}, {Label: "no"}}}

	// The first run posts the gate, then the process stops while it is pending.
	first, cancel := context.WithCancel(context.Background())
	done := make(chan core.GateAnswer, 1)
	go func() { done <- core.Ask(first, e.a.Approver(th, "UALICE"), req) }()
	msg := e.gateMessageIn(th.Channel, th.ID)
	e.a.work.Stop() // Run's context ended: leave the gate pending for the restart
	cancel()
	if ans := <-done; ans.Approved {
		t.Fatalf("cancelled approver = %+v, want a denial", ans)
	}

	// The resumed turn waits on the same gate; the click completes it.
	go func() { done <- core.Ask(e.ctx, e.a.Approver(th, "UALICE"), req) }()
	e.ack(e.slack.Click("UALICE", msg, 0))
	if ans := <-done; !ans.Approved || ans.By != "UALICE" || ans.Answer != "yes" {
		t.Errorf("resumed approver = %+v, want approved by UALICE", ans)
	}
	n := 0
	for _, m := range e.slack.Thread(th.Channel, th.ID) {
		if m.FromBot() {
			n++
		}
	}
	if n != 1 {
		t.Errorf("gate messages posted = %d, want 1", n)
	}
}

func TestClickOnUnknownGate(t *testing.T) {
	e := start(t, nil)
	blocks, _ := json.Marshal([]map[string]any{{
		"type": "actions", "block_id": gateBlockID,
		"elements": []map[string]any{{"type": "button", "action_id": gateActionPrefix + "0", "value": "forged:0",
			"text": map[string]any{"type": "plain_text", "text": "yes"}}},
	}})
	msg := e.slack.AddMessage(slacktest.Message{Channel: "C0GENERAL", User: slacktest.BotUserID, BotID: slacktest.BotID,
		Text: "old", Blocks: blocks})
	e.ack(e.slack.Click("UALICE", msg, 0))
	eph, err := e.slack.WaitMessage(e.ctx, func(m slacktest.Message) bool { return m.Ephemeral && m.Recipient == "UALICE" })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(eph.Text, "no longer pending") {
		t.Errorf("ephemeral = %q, want it to say the request is no longer pending", eph.Text)
	}
	got, err := e.slack.WaitMessage(e.ctx, func(m slacktest.Message) bool { return m.TS == msg.TS && m.Edits > 0 })
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Buttons()) != 0 {
		t.Errorf("stale message still has buttons after the click")
	}
}

func TestApproverWithoutGatesDenies(t *testing.T) {
	e := start(t, func(o *Options) { o.Gates = nil })
	if ap := e.a.Approver(core.Thread{}, "U"); ap != nil {
		t.Errorf("Approver without Gates = non-nil, want nil (deny)")
	}
}

// TestApprovalCancellationCause: how a gate ends when its turn is cancelled
// depends on why — a user's stop denies it, a shutdown leaves it pending for
// the restarted process, anything else lets it expire.
func TestApprovalCancellationCause(t *testing.T) {
	tests := []struct {
		name  string
		cause error
		want  core.GateState
		shown string
	}{
		{"user stopped the turn", core.ErrStopped, core.GateDenied, "Denied"},
		{"process shutting down", core.ErrShutdown, core.GatePending, ""},
		{"turn cancelled", context.Canceled, core.GateExpired, "Expired"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := start(t, nil)
			th := core.Thread{Platform: Platform, Workspace: slacktest.TeamID, Channel: "C0GENERAL", ID: fmt.Sprintf("1700000001.00000%d", i)}
			req := core.GateRequest{IntentID: "i-cause", NodeID: fmt.Sprint("n", i), Question: "Spend?", Options: []core.Option{{Label: "yes", Approves: true}, {Label: "no"}}}
			ctx, cancel := context.WithCancelCause(context.Background())
			done := make(chan core.GateAnswer, 1)
			go func() { done <- core.Ask(ctx, e.a.Approver(th, "UALICE"), req) }()
			msg := e.gateMessageIn(th.Channel, th.ID)
			cancel(tt.cause)
			if ans := <-done; ans.Approved {
				t.Fatalf("cancelled approver = %+v, want no approval", ans)
			}
			bound := req
			bound.Thread = th // as the thread's approver fills it in
			got, err := e.store.GateBound(context.Background(), bound.Binding())
			if err != nil {
				t.Fatal(err)
			}
			if got.State != tt.want {
				t.Errorf("gate state after cancel(%v) = %s, want %s", tt.cause, got.State, tt.want)
			}
			if tt.shown != "" {
				if _, err := e.slack.WaitMessage(e.ctx, func(m slacktest.Message) bool {
					return m.TS == msg.TS && strings.Contains(m.Rendered(), tt.shown) && len(m.Buttons()) == 0
				}); err != nil {
					t.Errorf("gate message never showed %q without buttons: %v", tt.shown, err)
				}
			}
		})
	}
}

// TestApprovalPostedButNotRecorded: the process died between posting the
// approval and recording where it is. The resumed turn finds the posted
// message in the thread and waits on it instead of asking twice.
func TestApprovalPostedButNotRecorded(t *testing.T) {
	e := start(t, nil)
	ctx := context.Background()
	th := core.Thread{Platform: Platform, Workspace: slacktest.TeamID, Channel: "C0GENERAL", ID: "1700000002.000001"}
	req := core.GateRequest{Thread: th, IntentID: "i-crash", NodeID: "n1", Question: "Spend?", Options: []core.Option{{Label: "yes", Approves: true}, {Label: "no"}}, Requester: "UALICE"}
	g, _, err := e.gates.Open(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (gateUI{e.a}).PostGate(ctx, g); err != nil { // posted, never recorded
		t.Fatal(err)
	}
	msg := e.gateMessageIn(th.Channel, th.ID)

	done := make(chan core.GateAnswer, 1)
	go func() { done <- core.Ask(e.ctx, e.a.Approver(th, "UALICE"), req) }()
	if _, err := e.slack.WaitCall(e.ctx, "conversations.replies", nil); err != nil {
		t.Fatalf("the resumed approver never looked for its message: %v", err)
	}
	e.ack(e.slack.Click("UALICE", msg, 0))
	if ans := <-done; !ans.Approved || ans.By != "UALICE" {
		t.Errorf("resumed approver = %+v, want approved by UALICE", ans)
	}
	n := 0
	for _, m := range e.slack.Thread(th.Channel, th.ID) {
		if m.FromBot() && !m.Ephemeral {
			n++
		}
	}
	if n != 1 {
		t.Errorf("approval messages in the thread = %d, want 1", n)
	}
	if got, _ := e.store.LoadGate(ctx, g.Token); got.MessageRef != th.Channel+":"+msg.TS {
		t.Errorf("MessageRef = %q, want the found message %s:%s", got.MessageRef, th.Channel, msg.TS)
	}
}
