package slacktest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/neobot/neobot/adapters/slack/slacktest"
)

// TestStreamChunks: the chunks slack-go sends on the stream methods land
// on the message as Slack shows them: a plan title, task cards going
// through their statuses, markdown text; what Slack refuses is refused.
func TestStreamChunks(t *testing.T) {
	s := slacktest.New(t)
	api := slack.New("xoxb-test", slack.OptionAPIURL(s.APIURL()))
	ctx := context.Background()

	task := func(id, title string, status slack.TaskCardStatus, output string) slack.TaskUpdateChunk {
		c := slack.NewTaskUpdateChunk(id, title)
		c.Status, c.Output = status, output
		return c
	}
	_, ts, err := api.StartStreamContext(ctx, "D1", slack.MsgOptionTS("1.0"), slack.MsgOptionTaskDisplayMode(slack.TaskDisplayModePlan),
		slack.MsgOptionChunks(slack.NewPlanUpdateChunk("Rotate the key"), task("c1", "Read file (fs)", slack.TaskCardStatusInProgress, "")))
	if err != nil {
		t.Fatalf("StartStream = %v", err)
	}
	if _, _, err := api.AppendStreamContext(ctx, "D1", ts, slack.MsgOptionChunks(
		task("c1", "Read file (fs)", slack.TaskCardStatusComplete, "read 42 bytes"),
		task("c2", "Write file (fs)", slack.TaskCardStatusInProgress, ""))); err != nil {
		t.Fatalf("AppendStream = %v", err)
	}
	if _, _, err := api.StopStreamContext(ctx, "D1", ts, slack.MsgOptionChunks(
		task("c2", "Write file (fs)", slack.TaskCardStatusError, "permission denied"), slack.NewMarkdownTextChunk("Done."))); err != nil {
		t.Fatalf("StopStream = %v", err)
	}
	var m slacktest.Message
	for _, x := range s.Messages() {
		if x.TS == ts {
			m = x
		}
	}
	if m.Plan() != "Rotate the key" || m.Markdown != "Done." || m.Streaming {
		t.Errorf("message plan %q, markdown %q, streaming %v; want the plan, Done., stopped", m.Plan(), m.Markdown, m.Streaming)
	}
	got := fmt.Sprint(m.Tasks())
	want := "[{c1 Read file (fs) read 42 bytes [in_progress complete]} {c2 Write file (fs) permission denied [in_progress error]}]"
	if got != want {
		t.Errorf("Tasks() = %s\nwant %s", got, want)
	}

	for name, chunk := range map[string]slack.StreamChunk{
		"task without status": slack.NewTaskUpdateChunk("c3", "Read"),
		"task without title":  task("c3", " ", slack.TaskCardStatusComplete, ""),
		"source without text": slack.TaskUpdateChunk{Type: slack.StreamChunkTaskUpdate, ID: "c3", Title: "Read", Status: slack.TaskCardStatusComplete,
			Sources: []slack.TaskCardSource{{Type: "url", URL: "https://example.com"}}},
		"plan without title": slack.NewPlanUpdateChunk(""),
		"long markdown":      slack.NewMarkdownTextChunk(strings.Repeat("é", 12001)),
	} {
		_, _, err := api.StartStreamContext(ctx, "D1", slack.MsgOptionTS("1.0"), slack.MsgOptionChunks(chunk))
		if err == nil || !strings.Contains(err.Error(), "invalid_chunks") {
			t.Errorf("%s: StartStream = %v, want invalid_chunks", name, err)
		}
	}
}

// TestStopStreamBlocks: chat.stopStream's blocks, sent with slack-go as
// Slack documents them (a list of blocks shown at the bottom of the
// finished message), land on the message with the streamed text: the
// feedback buttons are found and clickable there. Blocks Slack refuses are
// refused, and the stream stays open.
func TestStopStreamBlocks(t *testing.T) {
	s := slacktest.New(t)
	api := slack.New("xoxb-test", slack.OptionAPIURL(s.APIURL()))
	ctx := context.Background()
	_, ts, err := api.StartStreamContext(ctx, "D1", slack.MsgOptionTS("1.0"), slack.MsgOptionChunks(slack.NewMarkdownTextChunk("The key ")))
	if err != nil {
		t.Fatalf("StartStream = %v", err)
	}
	bad := slack.NewContextActionsBlock("feedback", slack.NewButtonBlockElement("x", "y", slack.NewTextBlockObject(slack.PlainTextType, "No", false, false)))
	if _, _, err := api.StopStreamContext(ctx, "D1", ts, slack.MsgOptionBlocks(bad)); err == nil || !strings.Contains(err.Error(), "invalid_blocks") {
		t.Errorf("StopStream with a button in context_actions = %v, want invalid_blocks", err)
	}
	fb := slack.NewFeedbackButtonsBlockElement("rate",
		slack.NewFeedbackButton(slack.NewTextBlockObject(slack.PlainTextType, "Good answer", false, false), "up:E1"),
		slack.NewFeedbackButton(slack.NewTextBlockObject(slack.PlainTextType, "Bad answer", false, false), "down:E1"))
	if _, _, err := api.StopStreamContext(ctx, "D1", ts, slack.MsgOptionChunks(slack.NewMarkdownTextChunk("rotates.")),
		slack.MsgOptionBlocks(slack.NewContextActionsBlock("feedback", fb))); err != nil {
		t.Fatalf("StopStream with the feedback buttons = %v", err)
	}
	m, _ := s.MessageAt("D1", ts)
	got, ok := m.Feedback()
	if m.Streaming || m.Rendered() != "The key rotates." || !ok || got.PositiveValue != "up:E1" {
		t.Errorf("after StopStream: streaming %v, %q, feedback %+v %v; want stopped, the text and the buttons", m.Streaming, m.Rendered(), got, ok)
	}
}
