package slack

import (
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core"
)

// TestStreamedAnswer: the status message becomes the answer at once,
// marked as being written and without its status block; later pieces
// within the interval wait; a long answer continues in new messages with
// code blocks closed; Close leaves exactly the final text; a Tidy after a
// crash would find nothing left to remove.
func TestStreamedAnswer(t *testing.T) {
	e := start(t, func(o *Options) { o.StatusInterval = time.Hour })
	th := core.Thread{Platform: Platform, Workspace: slacktest.TeamID, Channel: "C0GENERAL", ID: "1700000000.000021"}
	r := e.a.Reporter(th)
	if err := r.Status(e.ctx, "Thinking…"); err != nil {
		t.Fatal(err)
	}
	s, err := r.(core.Streamer).StreamAnswer(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Abort(e.ctx) }) // a failed test leaves no edit held back for an hour
	for _, p := range []string{"Here is **the plan**.", " First, rotate the key."} {
		if err := s.Write(e.ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	msgs := e.botMessages(th.Channel, th.ID)
	if len(msgs) != 1 || msgs[0].Text != "Here is *the plan*."+writingMark || (len(msgs[0].Blocks) != 0 && string(msgs[0].Blocks) != "[]") {
		t.Fatalf("after two pieces within the interval: %+v, want the status message showing the first piece in mrkdwn, marked", msgs)
	}
	code := "\n\n```go\n" + strings.Repeat("fmt.Println(\"rotate the key\")\n", 200) + "```\n"
	if err := s.Write(e.ctx, code); err != nil {
		t.Fatal(err)
	}
	msgs = e.botMessages(th.Channel, th.ID)
	if len(msgs) < 2 {
		t.Fatalf("past the limit: %d messages, want the answer continued", len(msgs))
	}
	for i, m := range msgs {
		if strings.Count(m.Text, "```")%2 != 0 || !strings.HasSuffix(m.Text, writingMark) || len(m.Text) > maxMessageChars {
			t.Errorf("message %d while writing = %.60q…, want code blocks closed, the mark, and under the limit", i, m.Text)
		}
	}
	final := "Here is **the plan**. First, rotate the key." + code + "\nDone."
	if err := s.Close(e.ctx, final); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for _, m := range e.botMessages(th.Channel, th.ID) {
		if strings.Contains(m.Text, "writing…") {
			t.Errorf("a closed answer still says it is being written: %.60q", m.Text)
		}
		got.WriteString(m.Text)
	}
	if !strings.HasPrefix(got.String(), "Here is *the plan*. First") || !strings.HasSuffix(got.String(), "Done.") {
		t.Errorf("closed answer = %.80q…, want the final text", got.String())
	}
}

// TestTidyRemovesUnfinishedAnswer: a half-written answer left by a crash
// is removed before the resumed turn answers again; finished answers stay.
func TestTidyRemovesUnfinishedAnswer(t *testing.T) {
	e := start(t, nil)
	th := core.Thread{Platform: Platform, Workspace: slacktest.TeamID, Channel: "C0GENERAL", ID: "1700000000.000022"}
	r := e.a.Reporter(th)
	if err := r.Say(e.ctx, "An earlier answer."); err != nil {
		t.Fatal(err)
	}
	s, _ := r.(core.Streamer).StreamAnswer(e.ctx)
	if err := s.Write(e.ctx, "Half of an answer that a crash cut off"); err != nil {
		t.Fatal(err)
	}
	e.a.Tidy(e.ctx, th)
	msgs := e.botMessages(th.Channel, th.ID)
	if len(msgs) != 1 || msgs[0].Text != "An earlier answer." {
		t.Errorf("after Tidy: %+v, want only the finished answer", msgs)
	}
}
