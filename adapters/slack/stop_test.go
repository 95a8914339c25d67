package slack

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/internal/intake"
	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core"
)

// TestStopWhileApprovalPending: a turn waiting on an approval is stopped
// only by the person who asked, an approver or a workspace admin; anyone
// else's "stop" never reaches the hub, gets a private refusal, and the
// approval stays open for those who may answer it.
func TestStopWhileApprovalPending(t *testing.T) {
	tests := []struct {
		name    string
		user    string
		stopped bool
	}{
		{"the requester", "UALICE", true},
		{"an approver", "UBOSS", true},
		{"a workspace admin", "UADMIN", true},
		{"someone else in the thread", "UMALLORY", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := start(t, func(o *Options) { o.Approvers = []string{"UBOSS"} })
			e.slack.SetAdmin("UADMIN")
			e.hub.OnTurn(func(ctx context.Context, in core.Inbound) {
				if core.IsStop(in.Text) {
					return // the hub stops the running turn: not this fake's part
				}
				ans := core.Ask(ctx, e.a.Approver(in.Thread, in.User), core.GateRequest{
					IntentID: "intent-" + in.EventID, NodeID: "n1",
					Question: "Send **5 USDC** to bob?", Options: []core.Option{{Label: "approve", Approves: true}, {Label: "deny"}},
				})
				_ = e.a.Reporter(in.Thread).Say(ctx, fmt.Sprintf("approved=%v by %s", ans.Approved, ans.By))
			})
			d := e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "pay bob"})
			gate := e.gateMessageIn("C0GENERAL", d.TS)

			e.ack(e.slack.Message(slacktest.Msg{User: tt.user, Channel: "C0GENERAL", ThreadTS: d.TS, Text: "stop"}))
			e.idle()
			var stops []core.Inbound
			for _, in := range e.hub.Journaled() {
				if core.IsStop(in.Text) {
					stops = append(stops, in)
				}
			}
			if tt.stopped {
				if len(stops) != 1 || stops[0].User != tt.user {
					t.Fatalf("stops handed to the hub = %+v, want %s's", stops, tt.user)
				}
				for _, m := range e.slack.Messages() {
					if m.Ephemeral {
						t.Errorf("ephemeral %q to %s, want no refusal", m.Text, m.Recipient)
					}
				}
				return
			}
			if len(stops) != 0 {
				t.Fatalf("stops handed to the hub = %+v, want none from %s", stops, tt.user)
			}
			eph, err := e.slack.WaitMessage(e.ctx, func(m slacktest.Message) bool { return m.Ephemeral && m.Recipient == tt.user })
			if err != nil {
				t.Fatal(err)
			}
			if eph.Text != intake.RefuseStop || eph.ThreadTS != d.TS {
				t.Errorf("refusal = %+v, want %q privately in the thread", eph, intake.RefuseStop)
			}
			for _, m := range e.botMessages("C0GENERAL", d.TS) {
				if strings.Contains(m.Rendered(), "stop") {
					t.Errorf("visible bot message %q, want the refusal private", m.Rendered())
				}
			}
			// The approval is still open: the requester's approver answers it.
			e.ack(e.slack.Click("UBOSS", gate, 0))
			e.botReply("C0GENERAL", d.TS, "approved=true by UBOSS")
		})
	}
}
