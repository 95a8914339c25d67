package discord

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/core"
)

// rates is a Rater that keeps nothing: the adapter shows feedback buttons.
type rates struct{}

func (rates) Rate(context.Context, core.Rating) error { return nil }

// TestOneMessagePerAnswer: a turn's progress lines live in one message
// (its status message), which the answer then replaces, with the 👍/👎
// buttons on it; a long answer carries them on its last message only.
// The status line stays in the progress message meanwhile.
func TestOneMessagePerAnswer(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *Options) { o.StatusInterval = time.Nanosecond; o.Rater = rates{} })
	for _, tc := range []struct {
		name, answer string
		messages     int
	}{
		{"short", "The key was rotated on Monday.", 1},
		{"long", strings.Repeat("The key was rotated on Monday. ", 100), 2},
	} {
		th := e.discord.AddThread(discordtest.ChannelID, tc.name)
		thread := core.Thread{Platform: Platform, Workspace: discordtest.GuildID, Channel: discordtest.ChannelID, ID: th.ID}
		ctx := core.WithTurn(e.ctx, &core.Turn{Inbound: core.Inbound{Thread: thread, User: "111", EventID: "Ev-" + tc.name}})
		r := e.a.Reporter(thread)
		if err := r.Status(ctx, "thinking…"); err != nil {
			t.Fatal(err)
		}
		st := r.(core.Stepper)
		for _, s := range []core.Step{
			{ID: "c1", Plan: "rotate the key", Title: "Read file (fs)", State: core.StepRunning},
			{ID: "c1", Plan: "rotate the key", Title: "Read file (fs)", State: core.StepDone},
		} {
			if err := st.Step(ctx, s); err != nil {
				t.Fatal(err)
			}
			if err := r.Status(ctx, "thinking more…"); err != nil {
				t.Fatal(err)
			}
		}
		if msgs := e.botMessages(th.ID); len(msgs) != 1 || !strings.Contains(msgs[0].Content, "✅ Read file (fs)") {
			t.Fatalf("%s: while the tools run: %+v, want one progress message", tc.name, msgs)
		}
		if err := r.Say(ctx, tc.answer); err != nil {
			t.Fatal(err)
		}
		msgs := e.botMessages(th.ID)
		if len(msgs) != tc.messages {
			t.Fatalf("%s: %d messages (%+v), want %d", tc.name, len(msgs), msgs, tc.messages)
		}
		for i, m := range msgs {
			last := i == len(msgs)-1
			if strings.Contains(m.Content, "Read file") || (len(m.Buttons()) == 2) != last {
				t.Errorf("%s: message %d = %.60q with %d buttons; want the answer, the buttons on the last message only", tc.name, i, m.Content, len(m.Buttons()))
			}
		}
	}
}
