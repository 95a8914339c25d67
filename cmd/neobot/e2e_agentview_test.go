package main

import (
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// TestSlackBothExperiencesAnswerDM: with the built binary, an app
// installed with the assistant view and one installed with the agent view
// (the only one Slack gives new apps) both answer a DM in its thread,
// offer the DM skill's prompts where each shows them, and title the
// thread.
func TestSlackBothExperiencesAnswerDM(t *testing.T) {
	for _, tc := range []struct {
		name       string
		experience slacktest.Experience
	}{
		{"assistant view", slacktest.AssistantView},
		{"agent view", slacktest.AgentView},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newSlackWorld(t)
			w.slack.SetExperience(tc.experience)
			streamModel(t, w.model, llmtest.Text("Nothing is down."))
			p := w.start(t, 1)
			ctx := waitCtx(t)
			msg := slacktest.Msg{User: "UALICE", Channel: "D0DM", Text: "Is anything down?"}
			var promptsThread string
			if tc.experience == slacktest.AssistantView {
				// Slack opens the thread and posts its root.
				root := w.slack.AddMessage(slacktest.Message{Channel: "D0DM", User: "UALICE", Text: "New chat"})
				w.slack.AssistantThreadStarted("UALICE", "D0DM", root.TS)
				msg.ThreadTS, promptsThread = root.TS, root.TS
			} else {
				w.slack.AppHomeOpened("UALICE", "D0DM", "messages")
			}
			if _, err := w.slack.WaitCall(ctx, "assistant.threads.setSuggestedPrompts", nil); err != nil {
				t.Fatalf("no suggested prompts: %v\n%s", err, p.output.String())
			}
			if got, ok := w.slack.SuggestedPrompts("D0DM", promptsThread); !ok || len(got.Prompts) == 0 {
				t.Errorf("Alice sees no suggested prompts (thread %q)", promptsThread)
			}
			d := w.slack.DM(msg)
			thread := msg.ThreadTS
			if thread == "" {
				thread = d.TS // the agent view: a top-level message starts its thread
			}
			w.finishedAnswer(t, "D0DM", thread, "Nothing is down.")
			if _, err := w.slack.WaitCall(ctx, "assistant.threads.setTitle", nil); err != nil {
				t.Fatalf("no thread title: %v\n%s", err, p.output.String())
			}
			if got := w.slack.ThreadTitle("D0DM", thread); got != "Is anything down?" {
				t.Errorf("thread title = %q, want the question", got)
			}
			p.stop(t)
		})
	}
}

// TestSlackAgentViewContext: what a person has open beside Neo's DM
// (app_context_changed) reaches the model as context of their turn, by
// the channel's name.
func TestSlackAgentViewContext(t *testing.T) {
	w := newSlackWorld(t)
	w.slack.SetExperience(slacktest.AgentView)
	w.slack.SetChannelName("C0LAUNCH", "launch")
	streamModel(t, w.model, llmtest.Text("It is about the launch."))
	p := w.start(t, 1)
	if _, err := w.slack.WaitAck(waitCtx(t), w.slack.AppContextChanged("UALICE", "D0DM", slacktest.ChannelEntity("C0LAUNCH"))); err != nil {
		t.Fatal(err)
	}
	d := w.slack.DM(slacktest.Msg{User: "UALICE", Channel: "D0DM", Text: "What is this channel about?"})
	w.finishedAnswer(t, "D0DM", d.TS, "It is about the launch.")
	reqs := mainRequests(w.model)
	if len(reqs) == 0 {
		t.Fatalf("the model was never called\n%s", p.output.String())
	}
	var system string
	for _, m := range reqs[0].Messages {
		if m.Role == llm.RoleSystem {
			system += m.Content
		}
	}
	if !strings.Contains(system, "They are looking at: channel #launch (C0LAUNCH)") {
		t.Errorf("system block does not say what Alice is looking at:\n%s", system)
	}
	p.stop(t)
}
