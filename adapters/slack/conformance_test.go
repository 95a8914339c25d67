package slack

import (
	"context"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/adaptertest"
	"github.com/neobot/neobot/adapters/internal/intake/intaketest"
	"github.com/neobot/neobot/adapters/slack/slacktest"
)

// TestConformance runs the chat adapter suite against slacktest.
func TestConformance(t *testing.T) { adaptertest.Run(t, driver{}) }

// driver runs the suite's adapters in Socket Mode. Threads are
// "channel/ts", messages "channel/ts" too.
type driver struct{}

func (driver) People() adaptertest.People {
	return adaptertest.People{Requester: "UALICE", Approver: "UBOSS", Stranger: "UMALLORY", MayStop: []string{"UADMIN"}}
}

func (driver) Start(t *testing.T) adaptertest.Chat {
	e := start(t, func(o *Options) { o.Approvers = []string{"UBOSS"} })
	e.slack.SetAdmin("UADMIN")
	e.slack.SetChannelType("C0SECRET", "group")
	e.slack.SetChannelType("C0MPIM", "mpim")
	return chat{Adapter: e.a, e: e}
}

// chat is the suite's view of one adapter and its fake workspace.
type chat struct {
	*Adapter // Reporter and Approver
	e        *env
}

func (c chat) Hub() *intaketest.Hub { return c.e.hub }
func (c chat) Public() adaptertest.Place {
	return adaptertest.Place{Name: "public channel", ID: "C0GENERAL"}
}

func (c chat) Private() []adaptertest.Place {
	return []adaptertest.Place{
		{Name: "private channel", ID: "C0SECRET"},
		{Name: "private channel made before 2021", ID: "G0LEGACY"},
		{Name: "group DM", ID: "C0MPIM"},
		{Name: "DM", ID: "D0DM"},
	}
}

func (c chat) Post(p adaptertest.Place, user, text string) string {
	m := slacktest.Msg{User: user, Channel: p.ID, Text: text}
	var d slacktest.Delivery
	if strings.HasPrefix(p.ID, "D") {
		d = c.e.slack.DM(m)
	} else {
		d = c.e.slack.Mention(m)
	}
	c.e.ack(d)
	return p.ID + "/" + d.TS
}

func (c chat) Reply(thread, user, text string) {
	channel, ts, _ := strings.Cut(thread, "/")
	c.e.ack(c.e.slack.Message(slacktest.Msg{User: user, Channel: channel, ThreadTS: ts, Text: text}))
}

// seen is m as the suite sees it.
func seen(m slacktest.Message) adaptertest.Message {
	thread := m.ThreadTS
	if thread == "" {
		thread = m.TS
	}
	out := adaptertest.Message{Ref: m.Channel + "/" + m.TS, Thread: m.Channel + "/" + thread,
		Text: m.Rendered(), Buttons: len(m.Buttons()), Edits: m.Edits, Fake: m}
	if m.Ephemeral {
		out.To, out.Ephemeral, out.Text = m.Recipient, true, m.Text
	}
	return out
}

func (c chat) Messages() []adaptertest.Message {
	var out []adaptertest.Message
	for _, m := range c.e.slack.Messages() {
		if m.FromBot() || m.Ephemeral {
			out = append(out, seen(m))
		}
	}
	return out
}

func (c chat) WaitMessage(ctx context.Context, pred func(adaptertest.Message) bool) (adaptertest.Message, error) {
	m, err := c.e.slack.WaitMessage(ctx, func(m slacktest.Message) bool { return (m.FromBot() || m.Ephemeral) && pred(seen(m)) })
	return seen(m), err
}

func (c chat) Click(ctx context.Context, user string, m adaptertest.Message, i int) error {
	_, err := c.e.slack.WaitAck(ctx, c.e.slack.Click(user, m.Fake.(slacktest.Message), i))
	return err
}

func (c chat) WaitIdle(ctx context.Context) error { return c.e.a.work.WaitIdle(ctx) }
