package discord

import (
	"context"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/adaptertest"
	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/adapters/internal/intake/intaketest"
)

// TestConformance runs the chat adapter suite against discordtest.
func TestConformance(t *testing.T) {
	t.Parallel()
	adaptertest.Run(t, driver{})
}

// driver runs the suite's adapters. Threads are channel IDs (a thread's,
// or a DM's), messages their IDs; places are "text:<id>" (a mention there
// starts a thread), "thread:<id>" or "dm:".
type driver struct{}

// People: the approver answers by holding an approver role; 222 is an
// approver by user ID.
func (driver) People() adaptertest.People {
	return adaptertest.People{Requester: "111", Approver: "555", Stranger: "999", MayStop: []string{"222"}}
}

func (d driver) Start(t *testing.T) adaptertest.Chat {
	e := start(t, func(o *Options) { o.Approvers = []string{"222", "role:TREASURY"} })
	e.discord.SetRoles("555", "TREASURY")
	hidden := e.discord.AddPrivateChannel("leadership")
	c := chat{Adapter: e.a, e: e, dms: map[string]string{}, private: []adaptertest.Place{
		{Name: "channel hidden from @everyone", ID: "text:" + hidden.ID},
		{Name: "thread in a hidden channel", ID: "thread:" + e.discord.AddThread(hidden.ID, "reorg").ID},
		{Name: "private thread", ID: "thread:" + e.discord.AddPrivateThread(discordtest.ChannelID, "just us").ID},
		{Name: "DM", ID: "dm:"},
	}}
	p := d.People()
	for _, u := range append([]string{p.Requester, p.Approver, p.Stranger}, p.MayStop...) {
		c.dms[e.discord.DMChannel(u)] = u
	}
	return c
}

// chat is the suite's view of one adapter and its fake guild.
type chat struct {
	*Adapter // Reporter and Approver
	e        *env
	private  []adaptertest.Place
	dms      map[string]string // DM channel: its user
}

func (c chat) Hub() *intaketest.Hub { return c.e.hub }
func (c chat) Public() adaptertest.Place {
	return adaptertest.Place{Name: "public channel", ID: "text:" + discordtest.ChannelID}
}
func (c chat) Private() []adaptertest.Place { return c.private }

func (c chat) Post(p adaptertest.Place, user, text string) string {
	kind, id, _ := strings.Cut(p.ID, ":")
	switch kind {
	case "dm":
		return c.e.discord.DM(discordtest.Msg{User: user, Text: text}).ChannelID
	case "thread":
		c.e.discord.Mention(discordtest.Msg{User: user, Channel: id, Text: text})
		return id
	}
	return c.e.discord.Mention(discordtest.Msg{User: user, Channel: id, Text: text}).ID // Neo's thread starts from it
}

func (c chat) Reply(thread, user, text string) {
	c.e.discord.Message(discordtest.Msg{User: user, Channel: thread, Text: text})
}

// seen is m as the suite sees it.
func (c chat) seen(m discordtest.Message) adaptertest.Message {
	out := adaptertest.Message{Ref: m.ID, Thread: m.ChannelID, To: c.dms[m.ChannelID],
		Text: m.Content, Buttons: len(m.Buttons()), Edits: m.Edits, Fake: m}
	if m.Ephemeral {
		out.To, out.Ephemeral = m.Recipient, true
	}
	return out
}

func (c chat) Messages() []adaptertest.Message {
	var out []adaptertest.Message
	for _, m := range c.e.discord.Messages() {
		if m.FromBot() || m.Ephemeral {
			out = append(out, c.seen(m))
		}
	}
	return out
}

func (c chat) WaitMessage(ctx context.Context, pred func(adaptertest.Message) bool) (adaptertest.Message, error) {
	m, err := c.e.discord.WaitMessage(ctx, func(m discordtest.Message) bool { return (m.FromBot() || m.Ephemeral) && pred(c.seen(m)) })
	return c.seen(m), err
}

func (c chat) Click(ctx context.Context, user string, m adaptertest.Message, i int) error {
	_, err := c.e.discord.WaitResponse(ctx, c.e.discord.Click(user, m.Fake.(discordtest.Message), i))
	return err
}

func (c chat) WaitIdle(ctx context.Context) error { return c.e.a.work.WaitIdle(ctx) }
