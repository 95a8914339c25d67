package slack

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core"
)

// rates is a Rater that keeps nothing: the adapter shows feedback buttons.
type rates struct{}

func (rates) Rate(context.Context, core.Rating) error { return nil }

// ratedTurn is a context for a turn of user in th, with an event to rate.
func ratedTurn(e *env, th core.Thread, user string) context.Context {
	return core.WithTurn(e.ctx, &core.Turn{Inbound: core.Inbound{Thread: th, User: user, EventID: "Ev1"}})
}

// TestOneMessagePerAnswer: a turn's task cards, its streamed answer and
// the feedback buttons are one message: the cards' stream goes on with
// the answer's words, and chat.stopStream ends it with the buttons as its
// blocks; the status message kept above while the turn ran goes.
func TestOneMessagePerAnswer(t *testing.T) {
	e := start(t, func(o *Options) { o.StatusInterval = time.Second; o.Rater = rates{} })
	th := core.Thread{Platform: Platform, Workspace: slacktest.TeamID, Channel: "C0GENERAL", ID: "1700000000.000041"}
	ctx := ratedTurn(e, th, "UALICE")
	r := e.a.Reporter(th)
	if err := r.Status(ctx, "Thinking…"); err != nil {
		t.Fatal(err)
	}
	st := r.(core.Stepper)
	for _, s := range []core.Step{
		{ID: "c1", Plan: "rotate the key", Title: "Read file (fs)", State: core.StepRunning},
		{ID: "c1", Plan: "rotate the key", Title: "Read file (fs)", State: core.StepDone, Output: "42 bytes"},
		{ID: "c2", Plan: "rotate the key", Title: "Memory recall", State: core.StepRunning},
		{ID: "c2", Plan: "rotate the key", Title: "Memory recall", State: core.StepDone},
	} {
		if err := st.Step(ctx, s); err != nil {
			t.Fatal(err)
		}
		if err := r.Status(ctx, "Thinking more…"); err != nil {
			t.Fatal(err)
		}
	}
	s, err := r.(core.Streamer).StreamAnswer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"The key was rotated ", "on Monday."} {
		if err := s.Write(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(ctx, "The key was rotated on Monday. Next: Friday."); err != nil {
		t.Fatal(err)
	}
	msgs := e.botMessages(th.Channel, th.ID)
	if len(msgs) != 1 {
		t.Fatalf("bot messages = %+v, want one", msgs)
	}
	m := msgs[0]
	fb, ok := m.Feedback()
	if m.Streaming || len(m.Tasks()) != 2 || m.Markdown != "The key was rotated on Monday. Next: Friday." || !ok || fb.PositiveValue != "up:Ev1" {
		t.Errorf("message: streaming %v, tasks %+v, markdown %q, feedback %+v %v; want the cards, the answer and the buttons",
			m.Streaming, m.Tasks(), m.Markdown, fb, ok)
	}
	if n := len(e.slack.Calls("chat.startStream")); n != 1 {
		t.Errorf("chat.startStream calls = %d, want 1: one stream for the turn", n)
	}
}

// TestEditedAnswerCarriesButtons: where the answer is not streamed, the
// status message is edited into it with the feedback buttons: one post
// and one update, one message.
func TestEditedAnswerCarriesButtons(t *testing.T) {
	e := start(t, func(o *Options) { o.Rater = rates{} })
	th := core.Thread{Platform: Platform, Workspace: slacktest.TeamID, Channel: "C0GENERAL", ID: "1700000000.000042"}
	ctx := ratedTurn(e, th, "UALICE")
	r := e.a.Reporter(th)
	if err := r.Status(ctx, "Thinking…"); err != nil {
		t.Fatal(err)
	}
	if err := r.Say(ctx, "Yes, **every** ninety days."); err != nil {
		t.Fatal(err)
	}
	msgs := e.botMessages(th.Channel, th.ID)
	if len(msgs) != 1 {
		t.Fatalf("bot messages = %+v, want one", msgs)
	}
	fb, ok := msgs[0].Feedback()
	if msgs[0].Rendered() != "Yes, *every* ninety days." || !ok || fb.NegativeValue != "down:Ev1" {
		t.Errorf("answer %q, feedback %+v %v; want the answer with the buttons", msgs[0].Rendered(), fb, ok)
	}
	var calls []string
	for _, c := range e.slack.Calls("") {
		if strings.HasPrefix(c.Method, "chat.") {
			calls = append(calls, c.Method)
		}
	}
	if strings.Join(calls, " ") != "chat.postMessage chat.update" {
		t.Errorf("calls = %v, want one post and one update", calls)
	}
}

// TestFeedbackJSON: the feedback block built by hand is slack-go's
// encoding of feedbackBlock.
func TestFeedbackJSON(t *testing.T) {
	want, err := json.Marshal([]slack.Block{feedbackBlock(`Ev"1`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := feedbackJSON(`Ev"1`); got != string(want) {
		t.Errorf("feedbackJSON = %s\nwant %s", got, want)
	}
}
