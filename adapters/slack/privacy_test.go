package slack

import (
	"testing"

	"github.com/neobot/neobot/adapters/slack/slacktest"
)

// TestMentionChannelKind: a mention does not say what its channel is, so
// the adapter asks conversations.info, once per channel; a channel it
// cannot learn about counts as private.
func TestMentionChannelKind(t *testing.T) {
	e := start(t, nil)
	e.slack.SetChannelType("C0SECRET", "group")
	e.slack.SetChannelType("C0TRIO", "mpim")
	e.slack.Script("conversations.info", slacktest.Reply{Error: "missing_scope"})
	tests := []struct {
		name, channel string
		private       bool
		lookups       int // conversations.info calls so far
	}{
		{"lookup fails", "C0UNKNOWN", true, 1},
		{"private channel", "C0SECRET", true, 2},
		{"private channel again", "C0SECRET", true, 2},
		{"group DM", "C0TRIO", true, 3},
		{"public channel", "C0GENERAL", false, 4},
		{"public channel again", "C0GENERAL", false, 4},
		{"legacy private channel", "G0LEGACY", true, 4},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e.slack.Mention(slacktest.Msg{User: "UALICE", Channel: tc.channel, Text: "hello", MentionAlone: true})
			in := e.hub.Wait(e.ctx, t, i+1)
			if in.PrivateChannel != tc.private {
				t.Errorf("Inbound.PrivateChannel = %v, want %v", in.PrivateChannel, tc.private)
			}
			if n := len(e.slack.Calls("conversations.info")); n != tc.lookups {
				t.Errorf("conversations.info called %d times, want %d", n, tc.lookups)
			}
		})
	}
}
