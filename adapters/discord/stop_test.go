package discord

import (
	"context"
	"fmt"
	"testing"

	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/adapters/internal/intake"
	"github.com/neobot/neobot/core"
)

// TestStopWhileApprovalPending: a turn waiting on an approval is stopped
// only by the person who asked or an approver (by user or by role); anyone
// else's "stop" never reaches the hub, is refused in their DMs, not in the
// thread, and the approval stays open.
func TestStopWhileApprovalPending(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		user    string
		stopped bool
	}{
		{"the requester", "111", true},
		{"an approver", "222", true},
		{"a member holding an approver role", "555", true},
		{"someone else in the thread", "999", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := start(t, func(o *Options) { o.Approvers = []string{"222", "role:TREASURY"} })
			e.discord.SetRoles("555", "TREASURY")
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
			d := e.discord.Mention(discordtest.Msg{User: "111", Text: "pay bob"})
			gate := e.gateMessageIn(d.ID)

			e.discord.Message(discordtest.Msg{User: tt.user, Channel: d.ID, Text: "stop"})
			dm := e.discord.DMChannel(tt.user)
			if tt.stopped {
				e.hub.Wait(e.ctx, t, 2)
			} else if _, err := e.discord.WaitMessage(e.ctx, func(m discordtest.Message) bool { return m.ChannelID == dm }); err != nil {
				t.Fatalf("no DM to %s: %v\nmessages: %+v", tt.user, err, e.discord.Messages())
			}
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
				if got := e.discord.In(dm); len(got) != 0 {
					t.Errorf("DMs to %s = %+v, want no refusal", tt.user, got)
				}
				return
			}
			if len(stops) != 0 {
				t.Fatalf("stops handed to the hub = %+v, want none from %s", stops, tt.user)
			}
			if got := e.discord.In(dm); len(got) != 1 || got[0].Content != intake.RefuseStop {
				t.Errorf("DMs to %s = %+v, want the refusal %q", tt.user, got, intake.RefuseStop)
			}
			for _, m := range e.botMessages(d.ID) {
				if m.Content == intake.RefuseStop {
					t.Errorf("refusal shown in the thread, want it in %s's DMs only", tt.user)
				}
			}
			// The approval is still open: an approver answers it.
			e.response(e.discord.Click("222", gate, 0))
			e.botReply(d.ID, "approved=true by 222")
		})
	}
}
