package slacktest_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/neobot/neobot/adapters/slack/slacktest"
)

// TestFeedbackButtons: a context_actions block of feedback_buttons built
// with slack-go is kept and found; a click on one delivers the action
// slack-go reads as feedback_buttons with the clicked button's value; a
// malformed one is refused as Slack refuses it.
func TestFeedbackButtons(t *testing.T) {
	s := slacktest.New(t)
	api := slack.New("xoxb-test", slack.OptionAPIURL(s.APIURL()))
	ctx := context.Background()
	fb := slack.NewFeedbackButtonsBlockElement("rate",
		slack.NewFeedbackButton(slack.NewTextBlockObject(slack.PlainTextType, "Good answer", false, false), "up:E1"),
		slack.NewFeedbackButton(slack.NewTextBlockObject(slack.PlainTextType, "Bad answer", false, false), "down:E1"))
	_, ts, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("Was this helpful?", false),
		slack.MsgOptionBlocks(slack.NewContextActionsBlock("feedback", fb)))
	if err != nil {
		t.Fatalf("PostMessage = %v", err)
	}
	var m slacktest.Message
	for _, x := range s.Messages() {
		if x.TS == ts {
			m = x
		}
	}
	got, ok := m.Feedback()
	if !ok || got.PositiveValue != "up:E1" || got.NegativeValue != "down:E1" || got.ActionID != "rate" || got.BlockID != "feedback" {
		t.Fatalf("Feedback() = %+v, %v", got, ok)
	}

	d := s.ClickFeedback("U1", m, false)
	var cb slack.InteractionCallback
	if err := json.Unmarshal(d.Payload, &cb); err != nil {
		t.Fatalf("slack-go cannot read the click: %v", err)
	}
	acts := cb.ActionCallback.BlockActions
	if len(acts) != 1 || acts[0].Type != "feedback_buttons" || acts[0].Value != "down:E1" || acts[0].ActionID != "rate" || cb.User.ID != "U1" {
		t.Errorf("the click reads as %+v by %s, want feedback_buttons down:E1 by U1", acts, cb.User.ID)
	}

	bad := slack.NewFeedbackButtonsBlockElement("rate",
		slack.NewFeedbackButton(slack.NewTextBlockObject(slack.PlainTextType, "Good", false, false), ""), nil)
	_, _, err = api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false), slack.MsgOptionBlocks(slack.NewContextActionsBlock("", bad)))
	if err == nil || !strings.Contains(err.Error(), "invalid_blocks") {
		t.Errorf("feedback buttons without a value or a negative button = %v, want invalid_blocks", err)
	}
}
