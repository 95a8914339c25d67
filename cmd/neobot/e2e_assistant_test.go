package main

import (
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// TestSlackAssistantTitleAndPrompts: with the built binary, a Slack
// assistant thread opened in the pane offers the prompts of the skill
// bound to direct messages, and its first question names the thread.
func TestSlackAssistantTitleAndPrompts(t *testing.T) {
	w := newSlackWorld(t)
	w.env["NEO_CONFIG"] = writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{
		"support": map[string]any{"places": []string{"slack:dm"}, "prompts": []map[string]string{
			{"title": "Open a ticket", "message": "Open a support ticket for me"},
			{"title": "Status page", "message": "Is anything down right now?"},
		}},
	}})
	streamModel(t, w.model, llmtest.Text("Nothing is down."))
	p := w.start(t, 1)
	const thread = "1700000001.000001"
	w.slack.AssistantThreadStarted("UALICE", "D0DM", thread)
	c, err := w.slack.WaitCall(waitCtx(t), "assistant.threads.setSuggestedPrompts", nil)
	if err != nil {
		t.Fatalf("no suggested prompts: %v\n%s", err, p.output.String())
	}
	if got := c.Params.Get("prompts"); !strings.Contains(got, "Open a ticket") || !strings.Contains(got, "Is anything down right now?") ||
		strings.Contains(got, "What can you do?") || c.Params.Get("thread_ts") != thread {
		t.Errorf("suggested prompts = %s in %s, want exactly the support skill's in the new thread", got, c.Params.Get("thread_ts"))
	}
	w.slack.DM(slacktest.Msg{User: "UALICE", Text: "Is anything down right now?\nI cannot deploy.", ThreadTS: thread})
	title, err := w.slack.WaitCall(waitCtx(t), "assistant.threads.setTitle", nil)
	if err != nil {
		t.Fatalf("the thread got no title: %v\n%s", err, p.output.String())
	}
	if got := title.Params.Get("title"); got != "Is anything down right now?" || title.Params.Get("thread_ts") != thread {
		t.Errorf("title = %q in %s, want the first question's first line in the thread", got, title.Params.Get("thread_ts"))
	}
	w.answerIn(t, "D0DM", thread, "Nothing is down.")
	p.stop(t)
}
