package main

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// threeCalls is a turn of three tool calls: two that work and one that
// fails (an unknown tool), the first two at once, the third a step later
// (the model thinks a while first, so updates come faster than the pace
// allows and are held back), then the answer.
func threeCalls() []llmtest.Reply {
	return []llmtest.Reply{
		llmtest.Calls(llmtest.Call("call-recall", "memory_recall", `{"query":"deploy key"}`),
			llmtest.Call("call-history", "history_search", `{"query":"rotation"}`)),
		llmtest.Calls(llmtest.Call("call-broken", "vault__rotate_key", `{"key":"SECRET-KEY-ARG"}`)).After(600 * time.Millisecond),
		llmtest.Text("I looked in memory and the history; the vault tool is not available here.").After(600 * time.Millisecond),
	}
}

// paced fails t if two of times fall within one interval of each other.
func paced(t *testing.T, what string, times []time.Time, interval time.Duration) {
	t.Helper()
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	for i := 1; i < len(times); i++ {
		// A little slack for the fake's own clock reading: the bot
		// waits a full interval between its own calls.
		if d := times[i].Sub(times[i-1]); d < interval-50*time.Millisecond {
			t.Errorf("%s %d came %s after the one before, faster than one a %s", what, i, d, interval)
		}
	}
}

// TestStepsShowInSlack: with the built binary, a turn with three tool
// calls shows three task cards in a streamed Slack message, under the
// turn's plan, each going from in progress to complete (one to error),
// never showing an argument; the cards are appended no faster than once
// a second, and the answer follows in the same message, the feedback
// buttons at its bottom: one bot message in the thread, nothing else.
func TestStepsShowInSlack(t *testing.T) {
	w := newSlackWorld(t)
	streamModel(t, w.model, threeCalls()...)
	p := w.start(t, 1)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "rotate the deploy key please"})
	w.finishedAnswer(t, "C0GENERAL", mention.TS, "the vault tool is not available here.")

	var cards slacktest.Message
	for _, m := range w.slack.Thread("C0GENERAL", mention.TS) {
		if m.FromBot() && len(m.Tasks()) > 0 {
			cards = m
		}
	}
	if cards.TS == "" {
		t.Fatalf("no task cards in the thread: %+v\n%s", w.slack.Thread("C0GENERAL", mention.TS), p.output.String())
	}
	if cards.Plan() != "rotate the deploy key please" {
		t.Errorf("plan = %q, want the question", cards.Plan())
	}
	got := map[string]string{}
	for _, task := range cards.Tasks() {
		got[task.Title] = strings.Join(task.Statuses, "->")
		if strings.Contains(task.Title+task.Output, "SECRET") {
			t.Errorf("a task card shows an argument: %+v", task)
		}
	}
	want := map[string]string{"Memory recall": "in_progress->complete", "History search": "in_progress->complete",
		"Rotate key (vault)": "in_progress->error"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("task cards = %v\nwant %v", got, want)
	}
	if cards.Streaming {
		t.Errorf("the task cards' stream was never stopped")
	}
	var appends []time.Time // of cards: the answer's first words go at once
	for _, c := range w.slack.Calls("chat.appendStream") {
		if c.Params.Get("ts") == cards.TS && strings.Contains(c.Params.Get("chunks"), `"task_update"`) {
			appends = append(appends, c.At)
		}
	}
	if len(appends) == 0 {
		t.Errorf("the cards were never appended to while the turn ran: all came at the end")
	}
	paced(t, "chat.appendStream", appends, time.Second)
	// The status message above the turn's message goes once it is done.
	bot, err := w.slack.WaitMessages(waitCtx(t), func(all []slacktest.Message) bool {
		n := 0
		for _, m := range all {
			if m.FromBot() && !m.Ephemeral && m.ThreadTS == mention.TS {
				n++
			}
		}
		return n == 1
	})
	if err != nil {
		t.Errorf("the thread never came down to one bot message: %+v", w.slack.Thread("C0GENERAL", mention.TS))
	}
	for _, m := range bot {
		if m.FromBot() && !m.Ephemeral && m.ThreadTS == mention.TS {
			_, buttons := m.Feedback()
			if m.TS != cards.TS || !strings.Contains(m.Rendered(), "the vault tool is not available here.") || !buttons {
				t.Errorf("the thread's one bot message is %+v, want the cards, the answer and the feedback buttons", m)
			}
		}
	}
	p.stop(t)
}

// TestStepsShowInDiscord: the same turn on Discord shows one progress
// message, edited in place no faster than once a second, showing the
// steps as they go (all three, one failed, in its last progress); the
// answer then replaces the progress lines in that message, which carries
// the 👍/👎 buttons: one bot message in the thread, nothing else.
func TestStepsShowInDiscord(t *testing.T) {
	w := newDiscordWorld(t)
	streamModel(t, w.model, threeCalls()...)
	p := w.start(t, 1)
	mention := w.discord.Mention(discordtest.Msg{User: "111", Text: "rotate the deploy key please"})
	answer := w.finishedAnswer(t, mention.ID, "the vault tool is not available here.")

	var edits []time.Time
	steps := map[string]bool{}
	for _, c := range w.discord.Calls("PATCH /channels/{channel}/messages/{message}") {
		if !strings.HasSuffix(c.Path, "/"+answer.ID) {
			continue
		}
		if strings.Contains(string(c.Body), "SECRET") {
			t.Errorf("the progress message shows an argument: %s", c.Body)
		}
		if strings.Contains(string(c.Body), "Memory recall") {
			edits = append(edits, c.At)
			for _, s := range []string{"✅ Memory recall", "✅ History search", "❌ Rotate key (vault)"} {
				steps[s] = steps[s] || strings.Contains(string(c.Body), s)
			}
		}
	}
	if len(steps) != 3 || !steps["✅ Memory recall"] || !steps["✅ History search"] || !steps["❌ Rotate key (vault)"] {
		t.Errorf("the progress lines shown in the answer's message = %v, want the three steps, one failed", steps)
	}
	paced(t, "an edit of the progress message", edits, time.Second)
	var bot []discordtest.Message
	for _, m := range w.discord.Messages() {
		if m.FromBot() && !m.Ephemeral && m.ChannelID == mention.ID {
			bot = append(bot, m)
		}
	}
	if len(bot) != 1 || bot[0].ID != answer.ID || len(answer.Buttons()) != 2 || strings.Contains(answer.Content, "Memory recall") {
		t.Errorf("the thread holds %d bot messages (%+v), want one: the answer in place of the progress lines, with the 👍/👎 buttons", len(bot), bot)
	}
	p.stop(t)
}
