package discord

import (
	"context"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/discord/discordtest"
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
// channel @everyone cannot view, in a thread of one, or in a private
// thread is recalled there, and never in a public channel, where today
// it would come back as their profile.
func TestPrivatePlacesStayPrivate(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	hidden := e.discord.AddPrivateChannel("leadership")
	hiddenThread := e.discord.AddThread(hidden.ID, "reorg")
	privateThread := e.discord.AddPrivateThread(discordtest.ChannelID, "just us")
	tests := []struct {
		name    string
		channel string
		mention bool
		public  bool // a public place: the fact follows its author
	}{
		{"channel hidden from @everyone", hidden.ID, true, false},
		{"thread in a hidden channel", hiddenThread.ID, false, false},
		{"private thread", privateThread.ID, false, false},
		{"public channel", e.discord.AddChannel("random").ID, true, true},
	}
	n := 0
	next := func(m discordtest.Msg, mention bool) core.Inbound {
		t.Helper()
		if mention {
			e.discord.Mention(m)
		} else {
			e.discord.Message(m)
		}
		n++
		return e.hub.Wait(e.ctx, t, n)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fact := "Alice is interviewing at Initech"
			said := next(discordtest.Msg{User: "alice", Channel: tc.channel, Text: "<@" + discordtest.BotUserID + "> keep this quiet: I am interviewing at Initech"}, tc.mention)
			public := next(discordtest.Msg{User: "alice", Text: "where am I interviewing? Initech?"}, true)
			if got := recalled(t, said, public, fact); strings.Contains(got, fact) != tc.public {
				t.Errorf("in #general after a %s, memory shows:\n%s\nwant %q shown: %v", tc.name, got, fact, tc.public)
			}
			again := next(discordtest.Msg{User: "alice", Channel: tc.channel, Text: "<@" + discordtest.BotUserID + "> where am I interviewing?"}, tc.mention)
			if got := recalled(t, said, again, fact); !strings.Contains(got, fact) {
				t.Errorf("back in the %s, memory shows:\n%s\nwant %q", tc.name, got, fact)
			}
		})
	}
}

// TestChannelMadePrivate: a channel made private after Neo looked it up
// is private from the next message on, in its threads too: Discord's
// CHANNEL_UPDATE drops what Neo knew of it.
func TestChannelMadePrivate(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	ch := e.discord.AddChannel("plans")
	th := e.discord.AddThread(ch.ID, "q3")
	steps := []struct {
		name, channel string
		private       bool
	}{
		{"public channel", ch.ID, false},
		{"its thread", th.ID, false},
		{"made private", ch.ID, true},
		{"its thread now", th.ID, true},
	}
	for i, s := range steps {
		if i == 2 {
			e.discord.SetOverwrites(ch.ID, discordtest.Overwrite{ID: discordtest.GuildID, Deny: discordtest.PermissionViewChannel})
		}
		e.discord.Mention(discordtest.Msg{User: "alice", Channel: s.channel, Text: "hello"})
		if in := e.hub.Wait(e.ctx, t, i+1); in.PrivateChannel != s.private {
			t.Errorf("%s: Inbound.PrivateChannel = %v, want %v", s.name, in.PrivateChannel, s.private)
		}
	}
}
