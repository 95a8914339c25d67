package slacktest

import (
	"encoding/json"
	"testing"

	"github.com/slack-go/slack"
)

// TestViewsOpenAndSubmit: a modal opened with slack-go's OpenView is kept
// with its inputs; a trigger opens one view only; a submission reads back
// through slack-go's InteractionCallback as Slack's does.
func TestViewsOpenAndSubmit(t *testing.T) {
	s := New(t)
	api := slack.New("xoxb-test", slack.OptionAPIURL(s.APIURL()))
	ctx := testCtx(t)
	name := slack.NewPlainTextInputBlockElement(nil, "v")
	name.InitialValue = "Ada"
	size := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, nil, "v",
		slack.NewOptionBlockObject("s", slack.NewTextBlockObject(slack.PlainTextType, "Small", false, false), nil),
		slack.NewOptionBlockObject("m", slack.NewTextBlockObject(slack.PlainTextType, "Medium", false, false), nil))
	view := slack.ModalViewRequest{
		Type: slack.VTModal, CallbackID: "form", PrivateMetadata: "tok",
		Title:  slack.NewTextBlockObject(slack.PlainTextType, "Question", false, false),
		Submit: slack.NewTextBlockObject(slack.PlainTextType, "Send", false, false),
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			slack.NewInputBlock("name", slack.NewTextBlockObject(slack.PlainTextType, "Name", false, false), nil, name),
			slack.NewInputBlock("size", slack.NewTextBlockObject(slack.PlainTextType, "Size", false, false), nil, size),
		}},
	}
	resp, err := api.OpenViewContext(ctx, "trigger-1", view)
	if err != nil || resp.ID == "" {
		t.Fatalf("OpenView = %+v, %v", resp, err)
	}
	if _, err := api.OpenViewContext(ctx, "trigger-1", view); err == nil {
		t.Error("a second OpenView with the same trigger succeeded, want expired_trigger_id")
	}
	if _, err := api.OpenViewContext(ctx, "nope", view); err == nil {
		t.Error("OpenView with a made-up trigger succeeded, want invalid_trigger_id")
	}
	views := s.Views()
	if len(views) != 1 || len(views[0].Inputs) != 2 || views[0].Inputs[0].Initial != "Ada" || views[0].Inputs[1].Type != "static_select" {
		t.Fatalf("Views = %+v, want the modal with its two inputs", views)
	}

	d := s.Submit("U1", views[0], map[string]string{"size": "m"})
	var cb slack.InteractionCallback
	if err := json.Unmarshal(d.Payload, &cb); err != nil {
		t.Fatal(err)
	}
	vals := cb.View.State.Values
	if cb.Type != slack.InteractionTypeViewSubmission || cb.User.ID != "U1" || cb.View.PrivateMetadata != "tok" || cb.View.CallbackID != "form" {
		t.Errorf("submission = %s by %s, metadata %q; want view_submission by U1 with tok", cb.Type, cb.User.ID, cb.View.PrivateMetadata)
	}
	if vals["name"]["v"].Value != "Ada" || vals["size"]["v"].SelectedOption.Value != "m" {
		t.Errorf("submitted values = %+v, want name Ada (initial) and size m", vals)
	}
}
