package slack

import (
	"context"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/memory"
	"github.com/neobot/neobot/core/memory/memorytest"
)

// recalled returns what memory shows the author of asked, in asked's
// conversation, once the turn of said, whose author stated fact about
// themself, is written back.
func recalled(t *testing.T, said, asked core.Inbound, fact string) string {
	t.Helper()
	ctx := context.Background()
	c, err := memory.New(ctx, memory.Options{Store: &memorytest.Store{}, Model: memorytest.AboutAuthor{fact}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WriteBack(ctx, said, []llm.Message{llm.AssistantMessage("Noted.")}); err != nil {
		t.Fatalf("WriteBack = %v", err)
	}
	return memorytest.Shown(t, c, asked, "interviewing Initech")
}

// TestPrivatePlacesStayPrivate: what someone says about themself in a
// private channel (one made since 2021, with a C ID, and an older G one)
// or a group DM is recalled there, and never in a public channel, where
// today it would come back as their profile.
func TestPrivatePlacesStayPrivate(t *testing.T) {
	e := start(t, nil)
	tests := []struct {
		name, channel, kind string
		public              bool // a public place: the fact follows its author
	}{
		{"private channel", "C0SECRET", "group", false},
		{"private channel made before 2021", "G0LEGACY", "", false},
		{"group DM", "C0MPIM", "mpim", false},
		{"public channel", "C0RANDOM", "channel", true},
	}
	n := 0
	next := func(m slacktest.Msg) core.Inbound {
		t.Helper()
		e.slack.Mention(m)
		n++
		return e.hub.Wait(e.ctx, t, n)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.kind != "" {
				e.slack.SetChannelType(tc.channel, tc.kind)
			}
			fact := "Alice is interviewing at Initech"
			said := next(slacktest.Msg{User: "UALICE", Channel: tc.channel, Text: "keep this quiet: I am interviewing at Initech"})
			public := next(slacktest.Msg{User: "UALICE", Text: "where am I interviewing? Initech?"})
			if got := recalled(t, said, public, fact); strings.Contains(got, fact) != tc.public {
				t.Errorf("in #general after a %s, memory shows:\n%s\nwant %q shown: %v", tc.name, got, fact, tc.public)
			}
			again := next(slacktest.Msg{User: "UALICE", Channel: tc.channel, Text: "where am I interviewing?"})
			if got := recalled(t, said, again, fact); !strings.Contains(got, fact) {
				t.Errorf("back in the %s, memory shows:\n%s\nwant %q", tc.name, got, fact)
			}
		})
	}
}

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
