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
// a second, and the answer follows.
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
	var appends []time.Time
	for _, c := range w.slack.Calls("chat.appendStream") {
		if c.Params.Get("ts") == cards.TS {
			appends = append(appends, c.At)
		}
	}
	if len(appends) == 0 {
		t.Errorf("the cards were never appended to while the turn ran: all came at the end")
	}
	paced(t, "chat.appendStream", appends, time.Second)
	p.stop(t)
}

// TestStepsShowInDiscord: the same turn on Discord shows one progress
// message, edited in place no faster than once a second, that ends
// showing all three steps, one failed.
func TestStepsShowInDiscord(t *testing.T) {
	w := newDiscordWorld(t)
	streamModel(t, w.model, threeCalls()...)
	p := w.start(t, 1)
	mention := w.discord.Mention(discordtest.Msg{User: "111", Text: "rotate the deploy key please"})
	w.finishedAnswer(t, mention.ID, "the vault tool is not available here.")

	progress, err := w.discord.WaitMessage(waitCtx(t), func(m discordtest.Message) bool {
		return m.FromBot() && m.ChannelID == mention.ID && strings.Contains(m.Content, "✅ Memory recall") &&
			strings.Contains(m.Content, "✅ History search") && strings.Contains(m.Content, "❌ Rotate key (vault)")
	})
	if err != nil {
		t.Fatalf("no progress message ends showing the three steps: %v\nmessages: %+v", err, w.discord.Messages())
	}
	if strings.Contains(progress.Content, "SECRET") {
		t.Errorf("the progress message shows an argument: %q", progress.Content)
	}
	var edits []time.Time
	for _, c := range w.discord.Calls("PATCH /channels/{channel}/messages/{message}") {
		if strings.HasSuffix(c.Path, "/"+progress.ID) {
			edits = append(edits, c.At)
		}
	}
	paced(t, "an edit of the progress message", edits, time.Second)
	p.stop(t)
}
