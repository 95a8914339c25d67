package slacktest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/neobot/neobot/adapters/slack/slacktest"
)

// TestAssistantMethods: slack-go's setTitle and setSuggestedPrompts go
// through as Slack takes them, and what Slack refuses is refused: no
// title, no prompts, a prompt without a message, more than four.
func TestAssistantMethods(t *testing.T) {
	s := slacktest.New(t)
	api := slack.New("xoxb-test", slack.OptionAPIURL(s.APIURL()))
	ctx := context.Background()
	if err := api.SetAssistantThreadsTitleContext(ctx, slack.AssistantThreadsSetTitleParameters{ChannelID: "D1", ThreadTS: "1.1", Title: "Plan my week"}); err != nil {
		t.Errorf("setTitle = %v", err)
	}
	if err := api.SetAssistantThreadsTitleContext(ctx, slack.AssistantThreadsSetTitleParameters{ChannelID: "D1", ThreadTS: "1.1"}); err == nil || !strings.Contains(err.Error(), "invalid_arguments") {
		t.Errorf("setTitle without a title = %v, want invalid_arguments", err)
	}
	prompts := func(n int, msg string) slack.AssistantThreadsSetSuggestedPromptsParameters {
		p := slack.AssistantThreadsSetSuggestedPromptsParameters{ChannelID: "D1", ThreadTS: "1.1"}
		for range n {
			p.AddPrompt("Open a ticket", msg)
		}
		return p
	}
	if err := api.SetAssistantThreadsSuggestedPromptsContext(ctx, prompts(2, "Open a support ticket")); err != nil {
		t.Errorf("setSuggestedPrompts = %v", err)
	}
	for name, p := range map[string]slack.AssistantThreadsSetSuggestedPromptsParameters{
		"none": prompts(0, "x"), "five": prompts(5, "x"), "no message": prompts(1, ""),
	} {
		if err := api.SetAssistantThreadsSuggestedPromptsContext(ctx, p); err == nil || !strings.Contains(err.Error(), "invalid_arguments") {
			t.Errorf("setSuggestedPrompts with %s = %v, want invalid_arguments", name, err)
		}
	}
}
