package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// TestFeedback: with the built binary, every answer carries feedback
// buttons, in the answer's own message: the thread holds one bot message,
// made with at most two Slack calls (the status message posted, then
// edited into the answer with the buttons). In Slack, a thumbs down asks privately what was wrong and the
// reason picked is kept; in Discord a thumbs up is kept. Both show in
// /metrics by rating, skill and model (no text in the labels) and in
// neobot feedback with the question and the answer.
func TestFeedback(t *testing.T) {
	sw := newSlackWorld(t)
	health := freeAddr(t)
	sw.env["NEO_HEALTH_ADDR"] = health
	streamModel(t, sw.model, llmtest.Text("Yes."), llmtest.Text("The deploy key rotates every ninety days."))
	p := sw.start(t, 1)
	short := sw.slack.Mention(slacktest.Msg{User: "UALICE", Text: "is the deploy key rotated?"})
	if _, err := sw.slack.WaitMessage(waitCtx(t), func(m slacktest.Message) bool {
		_, ok := m.Feedback()
		return m.FromBot() && m.ThreadTS == short.TS && ok && m.Rendered() == "Yes."
	}); err != nil {
		t.Fatalf("the short answer carries no feedback buttons: %v\n%+v", err, sw.slack.Thread("C0GENERAL", short.TS))
	}
	var calls []string
	for _, c := range sw.slack.Calls("") {
		if strings.HasPrefix(c.Method, "chat.") && c.Method != "chat.postEphemeral" && c.Params.Get("channel") == "C0GENERAL" {
			calls = append(calls, c.Method)
		}
	}
	if len(calls) > 2 {
		t.Errorf("Slack calls to answer the mention = %v, want at most 2", calls)
	}
	mention := sw.slack.Mention(slacktest.Msg{User: "UALICE", Text: "how often does the deploy key rotate?"})
	sw.answerIn(t, "C0GENERAL", mention.TS, "every ninety days")
	buttons, err := sw.slack.WaitMessage(waitCtx(t), func(m slacktest.Message) bool {
		_, ok := m.Feedback()
		return m.FromBot() && m.ThreadTS == mention.TS && ok
	})
	if err != nil {
		t.Fatalf("the answer carries no feedback buttons: %v\n%+v", err, sw.slack.Thread("C0GENERAL", mention.TS))
	}
	var bot []slacktest.Message
	for _, m := range sw.slack.Thread("C0GENERAL", mention.TS) {
		if m.FromBot() && !m.Ephemeral {
			bot = append(bot, m)
		}
	}
	if len(bot) != 1 || bot[0].TS != buttons.TS || !strings.Contains(buttons.Rendered(), "every ninety days") {
		t.Errorf("the thread holds %d bot messages (%+v), want one: the answer with its buttons", len(bot), bot)
	}
	sw.slack.ClickFeedback("UALICE", buttons, false)
	why, err := sw.slack.WaitMessage(waitCtx(t), func(m slacktest.Message) bool {
		return m.Ephemeral && m.Recipient == "UALICE" && len(m.Buttons()) > 0 && strings.Contains(m.Rendered(), "What was wrong")
	})
	if err != nil {
		t.Fatalf("a thumbs down did not ask what was wrong: %v", err)
	}
	sw.slack.Click("UALICE", why, 0)
	if _, err := sw.slack.WaitMessage(waitCtx(t), func(m slacktest.Message) bool {
		return m.Ephemeral && m.Recipient == "UALICE" && strings.Contains(m.Rendered(), "noted: Wrong or made up")
	}); err != nil {
		t.Fatalf("the reason was not acknowledged: %v\n%s", err, p.output.String())
	}
	metrics := waitFor(t, p, "http://"+health+"/metrics", "the Slack rating", func(s int, b string) bool {
		return s == http.StatusOK && metricLine(b, "neobot_feedback_total", []string{`rating="down"`, `skill="default"`, `model="test-main"`}, "1")
	})
	if strings.Contains(metrics, "UALICE") || strings.Contains(metrics, "ninety") {
		t.Error("/metrics labels carry a person or text")
	}
	p.stop(t)

	// Discord, on the same database.
	dw := newDiscordWorld(t)
	dw.env["NEO_DB_PATH"] = sw.env["NEO_DB_PATH"]
	dw.env["NEO_HEALTH_ADDR"] = health
	streamModel(t, dw.model, llmtest.Text("Rotate it in the vault, then update CI."))
	p2 := dw.start(t, 1)
	dm := dw.discord.Mention(discordtest.Msg{User: "111", Text: "where do I rotate it?"})
	dw.answerIn(t, dm.ID, "update CI")
	rate, err := dw.discord.WaitMessage(waitCtx(t), func(m discordtest.Message) bool {
		return m.FromBot() && m.ChannelID == dm.ID && len(m.Buttons()) == 2 && strings.Contains(m.Content, "update CI")
	})
	if err != nil {
		t.Fatalf("the Discord answer carries no feedback buttons: %v\n%+v", err, dw.discord.Messages())
	}
	for _, m := range dw.discord.Messages() {
		if m.FromBot() && !m.Ephemeral && m.ChannelID == dm.ID && m.ID != rate.ID {
			t.Errorf("a second bot message beside the answer: %q", m.Content)
		}
	}
	dw.discord.Click("111", rate, 0)
	if _, err := dw.discord.WaitMessage(waitCtx(t), func(m discordtest.Message) bool {
		return m.Ephemeral && strings.Contains(m.Content, "Thanks for the feedback")
	}); err != nil {
		t.Fatalf("the thumbs up was not acknowledged: %v\n%s", err, p2.output.String())
	}
	waitFor(t, p2, "http://"+health+"/metrics", "the Discord rating", func(s int, b string) bool {
		return s == http.StatusOK && metricLine(b, "neobot_feedback_total", []string{`rating="up"`, `skill="default"`, `model="test-main"`}, "1")
	})
	p2.stop(t)

	out, _, err := run(t, dw.env, "", "feedback", "--format", "json")
	if err != nil {
		t.Fatalf("neobot feedback: %v\n%s", err, out)
	}
	var rows []map[string]string
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 2 {
		t.Fatalf("neobot feedback --format json = %s (%v), want two ratings", out, err)
	}
	if r := rows[0]; r["rating"] != "down" || r["reason"] != "Wrong or made up" || r["user"] != "UALICE" || !strings.HasPrefix(r["thread"], "slack/") ||
		!strings.Contains(r["question"], "how often does the deploy key rotate?") || r["answer"] != "The deploy key rotates every ninety days." || r["model"] != "test-main" {
		t.Errorf("Slack rating = %v", r)
	}
	if r := rows[1]; r["rating"] != "up" || r["user"] != "111" || !strings.HasPrefix(r["thread"], "discord/") ||
		!strings.Contains(r["question"], "where do I rotate it?") || r["answer"] != "Rotate it in the vault, then update CI." {
		t.Errorf("Discord rating = %v", r)
	}
	csvOut, _, err := run(t, dw.env, "", "feedback")
	if err != nil || !strings.HasPrefix(csvOut, "at,thread,turn,user,rating,reason,skill,model,question,answer\n") || !strings.Contains(csvOut, "Wrong or made up") {
		t.Errorf("neobot feedback (csv) = %q, %v", csvOut, err)
	}
}
