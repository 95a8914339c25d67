package discord

import (
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/core"
)

// TestStreamedAnswer: the status message becomes the answer, marked as
// being written; with a long pace only the first piece shows before the
// end; past the limit the answer continues in a new message with its code
// block closed; Close leaves exactly the final text, unmarked.
func TestStreamedAnswer(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *Options) { o.StatusInterval = time.Hour })
	th := e.discord.AddThread(discordtest.ChannelID, "stream")
	thread := core.Thread{Platform: Platform, Workspace: discordtest.GuildID, Channel: discordtest.ChannelID, ID: th.ID}
	r := e.a.Reporter(thread)
	if err := r.Status(e.ctx, "thinking…"); err != nil {
		t.Fatal(err)
	}
	s, err := r.(core.Streamer).StreamAnswer(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Abort(e.ctx) }) // a failed test leaves no edit held back for an hour
	for _, p := range []string{"Here is the plan. ", "First, rotate the key. "} {
		if err := s.Write(e.ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	msgs := e.botMessages(th.ID)
	if len(msgs) != 1 || msgs[0].Content != "Here is the plan."+writingMark {
		t.Fatalf("after two pieces within the interval: %+v, want the status message showing the first piece, marked", msgs)
	}
	code := "\n\n```go\n" + strings.Repeat("fmt.Println(\"rotate\")\n", 120) + "```\n"
	if err := s.Write(e.ctx, code); err != nil {
		t.Fatal(err)
	}
	msgs = e.botMessages(th.ID)
	if len(msgs) < 2 {
		t.Fatalf("past the limit: %d messages, want the answer continued in more", len(msgs))
	}
	for i, m := range msgs {
		if strings.Count(m.Content, "```")%2 != 0 || !strings.HasSuffix(m.Content, writingMark) || len([]rune(m.Content)) > maxMessageChars {
			t.Errorf("message %d while writing = %.80q…, want code blocks closed, the mark, and under the limit", i, m.Content)
		}
	}
	final := "Here is the plan. First, rotate the key." + code + "\nDone."
	if err := s.Close(e.ctx, final); err != nil {
		t.Fatal(err)
	}
	msgs = e.botMessages(th.ID)
	var got strings.Builder
	for _, m := range msgs {
		if strings.Contains(m.Content, writingMark) {
			t.Errorf("a closed answer still says it is being written: %.80q", m.Content)
		}
		got.WriteString(m.Content)
	}
	if !strings.HasPrefix(got.String(), "Here is the plan.") || !strings.HasSuffix(got.String(), "Done.") {
		t.Errorf("closed answer = %q…, want the final text", got.String()[:80])
	}
}

func TestStreamAbortDeletes(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	th := e.discord.AddThread(discordtest.ChannelID, "abort")
	thread := core.Thread{Platform: Platform, Workspace: discordtest.GuildID, Channel: discordtest.ChannelID, ID: th.ID}
	r := e.a.Reporter(thread)
	s, _ := r.(core.Streamer).StreamAnswer(e.ctx)
	if err := s.Write(e.ctx, "Let me check the files first."); err != nil {
		t.Fatal(err)
	}
	if len(e.botMessages(th.ID)) != 1 {
		t.Fatalf("nothing shown while writing")
	}
	if err := s.Abort(e.ctx); err != nil {
		t.Fatal(err)
	}
	if msgs := e.botMessages(th.ID); len(msgs) != 0 {
		t.Errorf("after Abort: %+v, want the words taken back", msgs)
	}
	if err := r.Say(e.ctx, "The answer."); err != nil {
		t.Fatal(err)
	}
	if msgs := e.botMessages(th.ID); len(msgs) != 1 || msgs[0].Content != "The answer." {
		t.Errorf("after Say: %+v", msgs)
	}
}

// TestTidyRemovesUnfinishedAnswer: after a crash mid-answer, the resumed
// turn's Tidy removes the half-written messages and the status line, and
// keeps everything else.
func TestTidyRemovesUnfinishedAnswer(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	th := e.discord.AddThread(discordtest.ChannelID, "crash")
	thread := core.Thread{Platform: Platform, Workspace: discordtest.GuildID, Channel: discordtest.ChannelID, ID: th.ID}
	r := e.a.Reporter(thread)
	if err := r.Say(e.ctx, "An earlier answer."); err != nil {
		t.Fatal(err)
	}
	if err := r.Status(e.ctx, "thinking…"); err != nil {
		t.Fatal(err)
	}
	s, _ := r.(core.Streamer).StreamAnswer(e.ctx)
	if err := s.Write(e.ctx, "Half of an answer that the crash cut off"); err != nil {
		t.Fatal(err)
	}
	if e.a.Tidy(e.ctx, thread) == "" { // as the hub does before a resumed turn
		t.Errorf("Tidy found nothing with a status line and an unfinished answer in the thread, want them")
	}
	msgs := e.botMessages(th.ID)
	if len(msgs) != 1 || msgs[0].Content != "An earlier answer." {
		t.Errorf("after Tidy: %+v, want only the finished answer", msgs)
	}
}
