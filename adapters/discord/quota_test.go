package discord

import (
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/quota"
)

// TestOverTheShare: a Discord user past their messages a minute is told
// once, in a reply, to slow down and when; nothing more of theirs reaches
// the hub, and another user's message does.
func TestOverTheShare(t *testing.T) {
	t.Parallel()
	clock := coretest.NewClock(time.Date(2026, 11, 26, 22, 0, 0, 0, time.UTC))
	e := start(t, func(o *Options) { o.Quota = quota.New(quota.Limits{PerMinute: 2}, clock) })
	e.hub.OnTurn(echo(e.a))
	var first discordtest.Delivery
	for i := range 5 {
		d := e.discord.DM(discordtest.Msg{User: "111", Text: "hello"})
		if i == 2 {
			first = d
		}
	}
	m := e.botReply(first.ChannelID, "slow down")
	if m.ReferenceID != first.ID || !strings.Contains(m.Content, "30 seconds") {
		t.Errorf("reply %q to %s, want one to the first message over the share, saying when", m.Content, m.ReferenceID)
	}
	e.discord.DM(discordtest.Msg{User: "222", Text: "hi"})
	e.hub.Wait(e.ctx, t, 3)
	e.idle()
	if n := len(e.hub.Journaled()); n != 3 {
		t.Errorf("%d messages reached the hub, want 3 (two of 111's, 222's)", n)
	}
	slow := 0
	for _, m := range e.discord.Messages() {
		if m.FromBot() && strings.Contains(m.Content, "slow down") {
			slow++
		}
	}
	if slow != 1 {
		t.Errorf("told to slow down %d times, want once", slow)
	}
}
