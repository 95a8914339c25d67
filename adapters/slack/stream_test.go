package slack

import (
	"context"
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
// is removed before the resumed turn answers again, and Tidy says it found
// one; finished answers stay, and a thread holding only those is tidy.
func TestTidyRemovesUnfinishedAnswer(t *testing.T) {
	e := start(t, nil)
	th := core.Thread{Platform: Platform, Workspace: slacktest.TeamID, Channel: "C0GENERAL", ID: "1700000000.000022"}
	r := e.a.Reporter(th)
	if err := r.Say(e.ctx, "An earlier answer."); err != nil {
		t.Fatal(err)
	}
	if got := e.a.Tidy(e.ctx, th); got != "" {
		t.Errorf("Tidy = %q in a thread with only a finished answer, want none", got)
	}
	s, _ := r.(core.Streamer).StreamAnswer(e.ctx)
	if err := s.Write(e.ctx, "Half of an answer that a crash cut off"); err != nil {
		t.Fatal(err)
	}
	if e.a.Tidy(e.ctx, th) == "" {
		t.Errorf("Tidy found nothing with an unfinished answer in the thread, want it")
	}
	msgs := e.botMessages(th.Channel, th.ID)
	if len(msgs) != 1 || msgs[0].Text != "An earlier answer." {
		t.Errorf("after Tidy: %+v, want only the finished answer", msgs)
	}
}

// TestLongAnswerCutShortIsTidied: an answer of several messages cut short
// after its first leaves that message marked as still being written, so
// after a restart Tidy finds and removes it, and the resumed turn says the
// whole answer; a thread showing only the first part looked answered.
func TestLongAnswerCutShortIsTidied(t *testing.T) {
	e := start(t, nil)
	th := core.Thread{Platform: Platform, Workspace: slacktest.TeamID, Channel: "C0GENERAL", ID: "1700000000.000044"}
	r := e.a.Reporter(th)
	if err := r.Status(e.ctx, "Thinking…"); err != nil {
		t.Fatal(err)
	}
	e.slack.Script("chat.postMessage", slacktest.Reply{Error: "fatal_error"}) // the second part
	long := strings.Repeat("A paragraph of prose that goes on.\n\n", 200)
	if err := r.Say(e.ctx, long); err == nil {
		t.Fatal("Say = nil with its second message refused, want the error")
	}
	msgs := e.botMessages(th.Channel, th.ID)
	if len(msgs) != 1 || !strings.HasSuffix(msgs[0].Text, writingMark) {
		t.Fatalf("thread after the cut = %+v, want the first part, marked as being written", msgs)
	}
	if newest := e.a.Tidy(e.ctx, th); newest != msgs[0].TS {
		t.Errorf("Tidy = %q, want the marked first part %s", newest, msgs[0].TS)
	}
	if msgs := e.botMessages(th.Channel, th.ID); len(msgs) != 0 {
		t.Errorf("after Tidy: %+v, want the first part removed", msgs)
	}
}

// TestTidyReturnsTheNewestLeftover: Tidy deletes every leftover and
// returns the newest one's ts, which orders against the thread's messages
// (Before): the hub blames the leftover on the last message posted before
// it. An old orphaned status line once made a resumed turn say an answer
// already shown (TestClusterSlack).
func TestTidyReturnsTheNewestLeftover(t *testing.T) {
	e := start(t, nil)
	th := core.Thread{Platform: Platform, Workspace: slacktest.TeamID, Channel: "C0GENERAL", ID: "1700000000.000022"}
	// An earlier turn's status line, left behind, then a message.
	if err := e.a.Reporter(th).Status(e.ctx, "Thinking…"); err != nil {
		t.Fatal(err)
	}
	first := e.slack.Message(slacktest.Msg{User: "U1", Text: "and another thing", ThreadTS: th.ID, Channel: th.Channel})
	newest := e.a.Tidy(e.ctx, th)
	if newest == "" || !e.a.Before(newest, first.TS) {
		t.Errorf("Tidy = %q, want the status line, posted before the message %s", newest, first.TS)
	}
	if msgs := e.botMessages(th.Channel, th.ID); len(msgs) != 0 {
		t.Errorf("after Tidy: %+v, want the status line deleted", msgs)
	}
	// A status line left behind, a message, then that message's turn's.
	th = core.Thread{Platform: Platform, Workspace: slacktest.TeamID, Channel: "C0GENERAL", ID: "1700000000.000033"}
	r := e.a.Reporter(th)
	if err := r.Status(e.ctx, "Thinking…"); err != nil {
		t.Fatal(err)
	}
	second := e.slack.Message(slacktest.Msg{User: "U1", Text: "a question", ThreadTS: th.ID, Channel: th.Channel})
	if err := r.Say(e.ctx, ""); err != nil { // forgets the line, and leaves it
		t.Fatal(err)
	}
	if err := r.Status(e.ctx, "Thinking…"); err != nil {
		t.Fatal(err)
	}
	if msgs := e.botMessages(th.Channel, th.ID); len(msgs) != 2 {
		t.Fatalf("before Tidy: %+v, want two status lines", msgs)
	}
	newest = e.a.Tidy(e.ctx, th)
	if newest == "" || e.a.Before(newest, second.TS) {
		t.Errorf("Tidy = %q, want the newer status line, posted after the message %s", newest, second.TS)
	}
	if msgs := e.botMessages(th.Channel, th.ID); len(msgs) != 0 {
		t.Errorf("after Tidy: %+v, want both status lines deleted", msgs)
	}
}

// TestParseTSOrders: Slack timestamps compare as the times they are, as
// Before compares a leftover with a message.
func TestParseTSOrders(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"1700000000.000200", "1700000000.000100", true},
		{"1700000000.000100", "1700000000.000200", false},
		{"1700000000.000100", "1700000000.000100", false},
		{"1700000001.000000", "1700000000.999999", true},
		{"999999999.000001", "1000000000.000000", false},
		{"1700000000.1", "1700000000.000100", true},
	} {
		if got := parseTS(tt.a).After(parseTS(tt.b)); got != tt.want {
			t.Errorf("parseTS(%s).After(parseTS(%s)) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// inTurn is a context of a turn started by user in thread th.
func inTurn(e *env, th core.Thread, user string) context.Context {
	return core.WithTurn(e.ctx, &core.Turn{Inbound: core.Inbound{Thread: th, User: user}})
}

// TestNativeStreamedAnswer: where Slack streams, the first words start a
// chat.startStream for the requester at once (the status message goes),
// later words are appended at the status line's pace, and Close stops the
// stream and leaves exactly the final text without the writing mark.
func TestNativeStreamedAnswer(t *testing.T) {
	e := start(t, func(o *Options) { o.StatusInterval = time.Hour })
	th := core.Thread{Platform: Platform, Workspace: slacktest.TeamID, Channel: "C0GENERAL", ID: "1700000000.000031"}
	r := e.a.Reporter(th)
	if err := r.Status(e.ctx, "Thinking…"); err != nil {
		t.Fatal(err)
	}
	ctx := inTurn(e, th, "UALICE")
	s, err := r.(core.Streamer).StreamAnswer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"Here is **the plan**.", " First, rotate the key."} {
		if err := s.Write(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	starts := e.slack.Calls("chat.startStream")
	if len(starts) != 1 {
		t.Fatalf("chat.startStream calls = %d, want 1", len(starts))
	}
	if p := starts[0].Params; p.Get("recipient_user_id") != "UALICE" || p.Get("recipient_team_id") != slacktest.TeamID ||
		p.Get("thread_ts") != th.ID || !strings.Contains(p.Get("chunks"), `"text":"_:writing_hand: writing…_\n\nHere is **the plan**."`) {
		t.Errorf("chat.startStream params = %v, want the requester, the thread and the first words, marked", p)
	}
	if n := len(e.slack.Calls("chat.appendStream")); n != 0 {
		t.Errorf("chat.appendStream calls within the interval = %d, want 0", n)
	}
	msgs := e.botMessages(th.Channel, th.ID)
	if len(msgs) != 1 || !msgs[0].Streaming {
		t.Fatalf("while streaming: %+v, want the status message gone and one streaming answer", msgs)
	}
	final := "Here is **the plan**. First, rotate the key. Done."
	if err := s.Close(ctx, final); err != nil {
		t.Fatal(err)
	}
	msgs = e.botMessages(th.Channel, th.ID)
	if len(msgs) != 1 || msgs[0].Streaming || msgs[0].Rendered() != mrkdwn(final) {
		t.Errorf("after Close: %+v, want one stopped message saying exactly the final text", msgs)
	}
	e.a.Tidy(e.ctx, th)
	if got := e.botMessages(th.Channel, th.ID); len(got) != 1 {
		t.Errorf("Tidy removed a finished streamed answer: %+v", got)
	}
}

// TestNativeStreamPacedAndLong: appends come at most once per interval;
// a long answer continues in new streaming messages, each under Slack's
// 12,000 characters, and Close splits the final text over them.
func TestNativeStreamPacedAndLong(t *testing.T) {
	e := start(t, func(o *Options) { o.StatusInterval = time.Nanosecond })
	th := core.Thread{Platform: Platform, Workspace: slacktest.TeamID, Channel: "C0GENERAL", ID: "1700000000.000032"}
	ctx := inTurn(e, th, "UALICE")
	s, _ := e.a.Reporter(th).(core.Streamer).StreamAnswer(ctx)
	var final strings.Builder
	line := strings.Repeat("rotate the key, ", 30) + "\n"
	for range 60 {
		final.WriteString(line)
		if err := s.Write(ctx, line); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(e.slack.Calls("chat.startStream")); n < 2 {
		t.Errorf("chat.startStream calls = %d for %d characters, want the answer continued in a new message", n, final.Len())
	}
	if len(e.slack.Calls("chat.appendStream")) == 0 {
		t.Error("nothing was appended")
	}
	if err := s.Close(ctx, final.String()); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for _, m := range e.botMessages(th.Channel, th.ID) {
		if m.Streaming || strings.Contains(m.Rendered(), "writing…") || len(m.Rendered()) > maxStreamChars {
			t.Errorf("closed message %.40q…: streaming %v, %d bytes", m.Rendered(), m.Streaming, len(m.Rendered()))
		}
		got.WriteString(m.Rendered())
	}
	if strings.ReplaceAll(got.String(), "\n", "") != strings.ReplaceAll(final.String(), "\n", "") {
		t.Errorf("closed answer has %d bytes, want the final %d", got.Len(), final.Len())
	}
}

// TestNativeStreamFallsBackAndTidies: a workspace that refuses streaming
// gets the answer edited in place, and the thread does not try streaming
// again; an unfinished streamed answer left by a crash is removed by Tidy;
// Abort deletes what was streamed.
func TestNativeStreamFallsBackAndTidies(t *testing.T) {
	e := start(t, func(o *Options) { o.StatusInterval = time.Hour })
	th := core.Thread{Platform: Platform, Workspace: slacktest.TeamID, Channel: "C0GENERAL", ID: "1700000000.000033"}
	ctx := inTurn(e, th, "UALICE")
	e.slack.Script("chat.startStream", slacktest.Reply{Error: "not_allowed_token_type"})
	r := e.a.Reporter(th)
	s, _ := r.(core.Streamer).StreamAnswer(ctx)
	if err := s.Write(ctx, "Edited in place instead."); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx, "Edited in place instead."); err != nil {
		t.Fatal(err)
	}
	if msgs := e.botMessages(th.Channel, th.ID); len(msgs) != 1 || msgs[0].Rendered() != "Edited in place instead." {
		t.Errorf("after the fallback: %+v", msgs)
	}
	s, _ = r.(core.Streamer).StreamAnswer(ctx)
	_ = s.Write(ctx, "Second answer.")
	_ = s.Close(ctx, "Second answer.")
	if n := len(e.slack.Calls("chat.startStream")); n != 1 {
		t.Errorf("chat.startStream calls = %d, want 1: the thread learned streaming is refused", n)
	}

	crash := core.Thread{Platform: Platform, Workspace: slacktest.TeamID, Channel: "C0GENERAL", ID: "1700000000.000034"}
	ctx = inTurn(e, crash, "UALICE")
	s, _ = e.a.Reporter(crash).(core.Streamer).StreamAnswer(ctx)
	if err := s.Write(ctx, "Half of an answer that a crash cut off"); err != nil {
		t.Fatal(err)
	}
	e.a.Tidy(e.ctx, crash)
	if msgs := e.botMessages(crash.Channel, crash.ID); len(msgs) != 0 {
		t.Errorf("after Tidy: %+v, want the unfinished streamed answer gone", msgs)
	}

	aborted := core.Thread{Platform: Platform, Workspace: slacktest.TeamID, Channel: "C0GENERAL", ID: "1700000000.000035"}
	ctx = inTurn(e, aborted, "UALICE")
	s, _ = e.a.Reporter(aborted).(core.Streamer).StreamAnswer(ctx)
	_ = s.Write(ctx, "Let me check the files first")
	if err := s.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	if msgs := e.botMessages(aborted.Channel, aborted.ID); len(msgs) != 0 {
		t.Errorf("after Abort: %+v, want nothing left", msgs)
	}
}

// TestNativeShortAnswerSaidWhole: an answer that ends before any word was
// streamed (shorter than the agent's hold-back) is said whole: the status
// message becomes it in one edit, with no stream started.
func TestNativeShortAnswerSaidWhole(t *testing.T) {
	e := start(t, func(o *Options) { o.StatusInterval = time.Hour })
	th := core.Thread{Platform: Platform, Workspace: slacktest.TeamID, Channel: "C0GENERAL", ID: "1700000000.000036"}
	r := e.a.Reporter(th)
	if err := r.Status(e.ctx, "Thinking…"); err != nil {
		t.Fatal(err)
	}
	ctx := inTurn(e, th, "UALICE")
	s, _ := r.(core.Streamer).StreamAnswer(ctx)
	if err := s.Close(ctx, "Yes."); err != nil {
		t.Fatal(err)
	}
	msgs := e.botMessages(th.Channel, th.ID)
	if len(msgs) != 1 || msgs[0].Rendered() != "Yes." {
		t.Errorf("after Close: %+v, want the status message turned into the answer", msgs)
	}
	if n := len(e.slack.Calls("chat.startStream")) + len(e.slack.Calls("chat.delete")); n != 0 {
		t.Errorf("%d stream starts and deletes for an answer said whole, want none", n)
	}
}
