package main

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/adapters/slack/slacktest"
)

// TestSlackClickRecordedBeforeAck: neobot is killed the moment Slack
// takes an approval click as handled, when the click's ack arrives. Slack
// never delivers an acked interaction again, so the click must be
// recorded by then: after the restart the approval is not asked again,
// and the approved call runs once (or, begun when the kill came, is
// reported unknown).
func TestSlackClickRecordedBeforeAck(t *testing.T) {
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) { slackClickRecordedBeforeAck(t, db.use) })
	}
}

// slackClickRecordedBeforeAck is TestSlackClickRecordedBeforeAck on the store useDB sets up.
func slackClickRecordedBeforeAck(t *testing.T, useDB func(*testing.T, map[string]string)) {
	w, wal := newSpendWorld(t)
	useDB(t, w.env)
	w.env["NEO_CONFIG"] = writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{
		"notes": map[string]any{"side_effects": map[string]string{"read": "allow", "write": "ask"}, "places": []string{"slack"}},
	}})
	spendModel(t, w.model, "wallet__write_note")
	first := w.start(t, 1)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "note that it is pay day"})
	gate := w.waitGate(t, first, mention.TS, "wallet/write_note")

	var armed atomic.Bool
	killed := make(chan struct{})
	w.slack.OnAck(func(slacktest.Ack) {
		if armed.CompareAndSwap(true, false) {
			first.kill()
			close(killed)
		}
	})
	armed.Store(true)
	w.slack.Click("UCAROL", gate, 0) // Allow once
	select {
	case <-killed:
	case <-waitCtx(t).Done():
		t.Fatalf("the click was never acked\n%s", first.output.String())
	}

	p := w.start(t, 2)
	var answer string
	_, err := w.slack.WaitMessages(waitCtx(t), func(all []slacktest.Message) bool {
		for _, m := range all {
			if !m.FromBot() || m.Ephemeral || m.ThreadTS != mention.TS {
				continue
			}
			if m.TS != gate.TS && len(m.Buttons()) > 0 && strings.Contains(m.Rendered(), "wallet/write_note") {
				answer = "asked again: " + m.Rendered()
				return true
			}
			if strings.Contains(m.Rendered(), "Outcome:") && !m.Streaming && !strings.Contains(m.Rendered(), "writing…") {
				answer = m.Rendered()
				return true
			}
		}
		return false
	})
	p.stop(t)
	if err != nil {
		t.Fatalf("no answer after the restart: %v\n%s", err, p.output.String())
	}
	if strings.HasPrefix(answer, "asked again") {
		t.Fatalf("the click Slack saw acked was lost in the crash; the approval was %s", answer)
	}
	// The approved call either ran once, or was begun when the kill came
	// and is truthfully reported unknown; it never runs twice.
	began, _ := wal.calls(t, "write_note")
	if began > 1 || began == 0 && !strings.Contains(answer, "unknown") {
		t.Errorf("write_note ran %d times after one acked click, answer %q; want one run, or none reported unknown", began, answer)
	}
}

// TestDiscordClickRecordedBeforeResponse: neobot is killed the moment
// Discord gets the first response to an approval click, which is when the
// person sees it handled (Discord never delivers an interaction again).
// The decision must be recorded by then: after the restart the spend
// completes once, without a second click.
func TestDiscordClickRecordedBeforeResponse(t *testing.T) {
	w := newDiscordWorld(t)
	first, mention, gate := w.askSpend(t)

	var armed atomic.Bool
	killed := make(chan struct{})
	w.discord.OnResponse(func(discordtest.Response) {
		if armed.CompareAndSwap(true, false) {
			first.kill()
			close(killed)
		}
	})
	armed.Store(true)
	w.discord.Click("111", gate, 0)
	select {
	case <-killed:
	case <-waitCtx(t).Done():
		t.Fatalf("the click got no response\n%s", first.output.String())
	}

	p := w.start(t, 2)
	w.answerIn(t, mention.ID, "Done: 5 PAX sent (tx 0xfeed).")
	p.stop(t)
	if answers := w.daemon.Answers(); len(answers) != 1 || !answers[0].Approved {
		t.Errorf("daemon answers = %+v, want the one approval the person saw taken", answers)
	}
	if got := discordAnswers(w, "Done: 5 PAX sent"); got != 1 {
		t.Errorf("final answer posted %d times, want once", got)
	}
}
