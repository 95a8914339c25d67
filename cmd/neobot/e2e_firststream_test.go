package main

import (
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// firstAnswer is streamingAnswer at about 200 characters a second: long
// enough that an answer shown only once complete is told apart from one
// shown while written, on a loaded machine too.
func firstAnswer() llmtest.Reply {
	return llmtest.Text(streamingAnswer).Streamed(4, 20*time.Millisecond)
}

// shownWhileWritten checks, once the answer is finished, that the first
// call showing it (at shown, as the chat's fake recorded it) came after
// the model's first token and before its last, and reports how long after
// the first token it came.
func shownWhileWritten(t *testing.T, model *llmtest.Server, where string, shown time.Time) {
	t.Helper()
	var s llmtest.Stream
	for _, st := range model.Streams() {
		if st.Model != cheapModel && st.FirstContent.Before(shown) {
			s = st
		}
	}
	if s.FirstContent.IsZero() {
		t.Fatalf("%s: the answer showed at %s, before the model sent anything: %+v", where, shown.Format(time.StampMicro), model.Streams())
	}
	if !shown.Before(s.Done) {
		t.Errorf("%s: the first answer showed %s after the model's last token: it waited for the whole answer", where, shown.Sub(s.Done))
	}
	// Not a timing bound, an ordering one with a wide margin: the words
	// show before the model has written half the answer.
	if half := s.FirstContent.Add(s.Done.Sub(s.FirstContent) / 2); !shown.Before(half) {
		t.Errorf("%s: the first words showed %d ms after the first token, once the model had written over half the answer", where, shown.Sub(s.FirstContent).Milliseconds())
	}
	t.Logf("%s: first words shown %d ms after the model's first token (the model took %d ms to write it all)",
		where, shown.Sub(s.FirstContent).Milliseconds(), s.Done.Sub(s.FirstContent).Milliseconds())
}

// TestFirstAnswerStreams: with the built binary, the very first answer
// after a start, in a Slack channel thread, a Slack DM and a Discord
// thread, shows its first words while the model is still writing it, and
// never its reasoning. A restart streams at once as well: the store kept
// what the first run learned.
func TestFirstAnswerStreams(t *testing.T) {
	t.Run("slack channel thread", func(t *testing.T) {
		w := newSlackWorld(t)
		// The chat template opens the reasoning block in the prompt: the
		// first answer's first bytes close an empty one, which teaches the
		// posture; after a restart, an answer that starts with reasoning
		// shows none of it, from its first answer on.
		opened := llmtest.Text("</think>"+streamingAnswer).Streamed(4, 20*time.Millisecond)
		reasoned := llmtest.Text("REASONING-INLINE weigh the vault first</think>"+streamingAnswer).Streamed(4, 20*time.Millisecond)
		streamModel(t, w.model, opened, reasoned)
		p := w.start(t, 1)
		mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "how do I rotate the deploy key?"})
		first := slackShown(t, w, "Rotating the deploy key")
		w.finishedAnswer(t, "C0GENERAL", mention.TS, "starts from a clean slate.")
		shownWhileWritten(t, w.model, "slack channel thread", first)
		p.stop(t)

		// After a restart the first answer streams at once too.
		p2 := w.start(t, 2)
		asked := time.Now()
		again := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "and once more?"})
		second := slackShownAfter(t, w, asked, "Rotating the deploy key")
		w.finishedAnswer(t, "C0GENERAL", again.TS, "starts from a clean slate.")
		// Counted from the first token of the reasoning, which is held
		// back (46 characters, about 240 ms of the model's writing).
		shownWhileWritten(t, w.model, "slack channel thread after a restart", second)
		for _, c := range w.slack.Calls("") {
			for _, v := range c.Params {
				if s := strings.Join(v, " "); strings.Contains(s, "REASONING") || strings.Contains(s, "think>") {
					t.Errorf("%s sent reasoning to Slack: %q", c.Method, s)
				}
			}
		}
		p2.stop(t)
	})
	t.Run("slack DM", func(t *testing.T) {
		w := newSlackWorld(t)
		streamModel(t, w.model, firstAnswer())
		p := w.start(t, 1)
		dm := w.slack.DM(slacktest.Msg{User: "UALICE", Text: "how do I rotate the deploy key?"})
		first := slackShown(t, w, "Rotating the deploy key")
		w.finishedAnswer(t, "D0DM", dm.TS, "starts from a clean slate.")
		shownWhileWritten(t, w.model, "slack DM", first)
		p.stop(t)
	})
	t.Run("discord thread", func(t *testing.T) {
		w := newDiscordWorld(t)
		streamModel(t, w.model, firstAnswer())
		p := w.start(t, 1)
		mention := w.discord.Mention(discordtest.Msg{User: "111", Text: "how do I rotate the deploy key?"})
		c, err := w.discord.WaitCall(waitCtx(t), "", func(c discordtest.Call) bool {
			return strings.Contains(string(c.Body), "Rotating the deploy key")
		})
		if err != nil {
			t.Fatalf("the answer never showed: %v\n%s", err, p.output.String())
		}
		w.finishedAnswer(t, mention.ID, "starts from a clean slate.")
		shownWhileWritten(t, w.model, "discord thread", c.At)
		p.stop(t)
	})
}

// slackShown waits for the first Slack call that shows want and returns
// when the fake received it.
func slackShown(t *testing.T, w *slackWorld, want string) time.Time {
	t.Helper()
	return slackShownAfter(t, w, time.Time{}, want)
}

// slackShownAfter is slackShown for the calls received after after.
func slackShownAfter(t *testing.T, w *slackWorld, after time.Time, want string) time.Time {
	t.Helper()
	c, err := w.slack.WaitCall(waitCtx(t), "", func(c slacktest.Call) bool {
		if !c.At.After(after) {
			return false
		}
		for _, v := range c.Params {
			if strings.Contains(strings.Join(v, " "), want) {
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("the answer never showed: %v\ncalls: %+v", err, w.slack.Calls(""))
	}
	return c.At
}
