package discord

import (
	"testing"

	"github.com/neobot/neobot/adapters/discord/discordtest"
)

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
