package slack

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/internal/intake/intaketest"
	"github.com/neobot/neobot/adapters/internal/statusline"
	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/skill"
)

func TestNewValidates(t *testing.T) {
	hub := intaketest.NewHub(intaketest.NewThreads())
	tests := []struct {
		name string
		opts Options
		want string // substring of the error, "" for success
	}{
		{"socket ok", Options{BotToken: "xoxb-1", AppToken: "xapp-1", Hub: hub}, ""},
		{"http ok", Options{BotToken: "xoxb-1", SigningSecret: "s", Mode: ModeHTTP, Hub: hub}, ""},
		{"user token", Options{BotToken: "xoxp-1", AppToken: "xapp-1", Hub: hub}, "SLACK_BOT_TOKEN"},
		{"no app token", Options{BotToken: "xoxb-1", Hub: hub}, "SLACK_APP_TOKEN"},
		{"no secret", Options{BotToken: "xoxb-1", Mode: ModeHTTP, Hub: hub}, "SLACK_SIGNING_SECRET"},
		{"bad mode", Options{BotToken: "xoxb-1", AppToken: "xapp-1", Mode: "rtm", Hub: hub}, "mode"},
		{"no hub", Options{BotToken: "xoxb-1", AppToken: "xapp-1"}, "Hub"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("New = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("New = %v, want an error naming %s", err, tt.want)
			}
		})
	}
}

func TestMentionAnsweredInThread(t *testing.T) {
	e := start(t, nil)
	e.hub.OnTurn(echo(e.a))
	d := e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "what is **2+2**?"})
	e.ack(d)
	in := e.hub.Wait(e.ctx, t, 1)
	want := core.Thread{Platform: "slack", Workspace: slacktest.TeamID, Channel: "C0GENERAL", ID: d.TS}
	if in.Thread != want || in.User != "UALICE" || in.Text != "what is **2+2**?" || in.EventID != d.EventID || in.DM {
		t.Errorf("Inbound = %+v, want thread %v, user UALICE, text without the mention, event %s", in, want, d.EventID)
	}
	m := e.botReply("C0GENERAL", d.TS, "echo: what is *2+2*?")
	if m.Text != "echo: what is *2+2*?" {
		t.Errorf("reply text = %q, want markdown converted to mrkdwn", m.Text)
	}
}

func TestFollowUpWithoutMention(t *testing.T) {
	e := start(t, nil)
	e.hub.OnTurn(echo(e.a))
	root := e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "hi"})
	e.botReply("C0GENERAL", root.TS, "echo: hi")

	// Chatter elsewhere: a top-level message and a reply in a thread Neo is not in.
	e.ack(e.slack.Message(slacktest.Msg{User: "UBOB", Text: "lunch?"}))
	other := e.slack.AddMessage(slacktest.Message{Channel: "C0GENERAL", User: "UBOB", Text: "root"})
	e.ack(e.slack.Message(slacktest.Msg{User: "UBOB", Text: "reply", ThreadTS: other.TS}))

	e.ack(e.slack.Message(slacktest.Msg{User: "UALICE", Text: "and 3+3?", ThreadTS: root.TS}))
	in := e.hub.Wait(e.ctx, t, 2)
	if in.Thread.ID != root.TS || in.Text != "and 3+3?" {
		t.Errorf("follow-up Inbound = %+v, want text %q in thread %s", in, "and 3+3?", root.TS)
	}
	e.botReply("C0GENERAL", root.TS, "echo: and 3+3?")
	e.idle()
	if n := len(e.hub.Journaled()); n != 2 {
		t.Errorf("hub got %d messages, want 2 (chatter outside Neo's threads ignored): %+v", n, e.hub.Journaled())
	}
}

func TestIgnored(t *testing.T) {
	tests := []struct {
		name string
		msg  slacktest.Msg
	}{
		{"own message", slacktest.Msg{User: slacktest.BotUserID, BotID: slacktest.BotID, Text: "hi", ChannelType: "im", Channel: "D1"}},
		{"other bot", slacktest.Msg{User: "UOTHERBOT", BotID: "BOTHER", Text: "hi", ChannelType: "im", Channel: "D1"}},
		{"edit", slacktest.Msg{User: "UALICE", Subtype: "message_changed", Text: "hi", ChannelType: "im", Channel: "D1"}},
		{"channel join", slacktest.Msg{User: "UALICE", Subtype: "channel_join", Text: "joined", ChannelType: "im", Channel: "D1"}},
	}
	e := start(t, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.ack(e.slack.Message(tt.msg))
			e.idle()
			if got := e.hub.Journaled(); len(got) != 0 {
				t.Errorf("hub got %+v, want nothing", got)
			}
		})
	}
}

func TestDM(t *testing.T) {
	e := start(t, nil)
	e.hub.OnTurn(func(ctx context.Context, in core.Inbound) {
		r := e.a.Reporter(in.Thread)
		_ = r.Status(ctx, "thinking…")
		_ = r.Say(ctx, "# Result\nall **good**")
	})
	d := e.slack.DM(slacktest.Msg{User: "UALICE", Text: "hello"})
	in := e.hub.Wait(e.ctx, t, 1)
	if !in.DM || in.Thread.Channel != "D0DM" || in.Thread.ID != d.TS || in.Text != "hello" {
		t.Errorf("DM Inbound = %+v, want DM in D0DM thread %s", in, d.TS)
	}
	// In a DM the status goes to the assistant pane and the answer is streamed.
	m, err := e.slack.WaitMessage(e.ctx, func(m slacktest.Message) bool {
		return m.FromBot() && m.ThreadTS == d.TS && !m.Streaming && m.Markdown != ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if m.Markdown != "# Result\nall **good**" {
		t.Errorf("streamed markdown = %q, want the answer as written", m.Markdown)
	}
	if c := e.slack.Calls("assistant.threads.setStatus"); len(c) != 1 || c[0].Params.Get("status") != "thinking…" {
		t.Errorf("setStatus calls = %+v, want one with the status", c)
	}
	if c := e.slack.Calls("assistant.threads.setTitle"); len(c) != 0 {
		t.Errorf("setTitle calls = %d for a top-level DM, want 0", len(c))
	}
}

func TestStreamFallsBackToPost(t *testing.T) {
	e := start(t, nil)
	e.hub.OnTurn(echo(e.a))
	e.slack.Script("chat.startStream", slacktest.Reply{Error: "not_supported"})
	d := e.slack.DM(slacktest.Msg{User: "UALICE", Text: "one"})
	e.botReply("D0DM", d.TS, "echo: one")
	// Streaming is not retried in the same thread.
	e.slack.DM(slacktest.Msg{User: "UALICE", Text: "two", ThreadTS: d.TS})
	e.botReply("D0DM", d.TS, "echo: two")
	if n := len(e.slack.Calls("chat.startStream")); n != 1 {
		t.Errorf("chat.startStream calls = %d, want 1", n)
	}
}

// TestAssistantPromptsFromSkill: the pane offers the prompts of the skill
// bound to direct messages.
func TestAssistantPromptsFromSkill(t *testing.T) {
	specs, err := skill.Parse([]byte(`{"desk": {"prompts": [{"title": "Open a ticket", "message": "Open a support ticket for me."}], "places": ["slack:dm"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	set, err := skill.Compile(specs, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := start(t, func(o *Options) { o.Skills = set })
	e.ack(e.slack.AssistantThreadStarted("UALICE", "D0DM", "1700000001.000001"))
	c, err := e.slack.WaitCall(e.ctx, "assistant.threads.setSuggestedPrompts", nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Params.Get("prompts"); !strings.Contains(p, "Open a ticket") || strings.Contains(p, "What can you do?") {
		t.Errorf("prompts = %s, want exactly the skill's", p)
	}
}

func TestAssistantThreadStarted(t *testing.T) {
	e := start(t, nil)
	e.hub.OnTurn(echo(e.a))
	e.ack(e.slack.AssistantThreadStarted("UALICE", "D0DM", "1700000001.000001"))
	c, err := e.slack.WaitCall(e.ctx, "assistant.threads.setSuggestedPrompts", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Params.Get("channel_id") != "D0DM" || c.Params.Get("thread_ts") != "1700000001.000001" || !strings.Contains(c.Params.Get("prompts"), "What can you do?") {
		t.Errorf("setSuggestedPrompts params = %v, want prompts for the thread", c.Params)
	}
	if strings.Contains(c.Params.Get("prompts"), "balance") {
		t.Errorf("default prompts %s assume a wallet; they must fit any team", c.Params.Get("prompts"))
	}
	// The first message names the thread.
	e.slack.DM(slacktest.Msg{User: "UALICE", Text: "Plan my week\nplease", ThreadTS: "1700000001.000001"})
	c, err = e.slack.WaitCall(e.ctx, "assistant.threads.setTitle", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Params.Get("title"); got != "Plan my week" {
		t.Errorf("title = %q, want %q", got, "Plan my week")
	}
}

func TestRetriedEventAnsweredOnce(t *testing.T) {
	e := start(t, nil)
	e.hub.OnTurn(echo(e.a))
	d := e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "once"})
	r := e.slack.Redeliver(d)
	e.ack(d)
	e.ack(r)
	e.botReply("C0GENERAL", d.TS, "echo: once")
	// Past the in-memory LRU (a restart forgets it), the hub's dedupe holds.
	e.a.seen.Forget(d.EventID)
	e.ack(e.slack.Redeliver(r))
	e.idle()
	e.hub.WaitTurns(t)
	if got := e.botMessages("C0GENERAL", d.TS); len(got) != 1 {
		t.Errorf("bot replied %d times, want once: %+v", len(got), got)
	}
	if n := len(e.hub.Journaled()); n != 1 {
		t.Errorf("hub accepted %d messages, want 1", n)
	}
}

func TestSubmitFailureTellsTheUser(t *testing.T) {
	e := start(t, nil)
	e.hub.FailNext(errBoom)
	d := e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "hi"})
	e.botReply("C0GENERAL", d.TS, "couldn't take that message")
	// The failed message's dedupe key is forgotten: the same event
	// delivered again (a retry, a resend) is taken, not dropped as seen.
	e.slack.Redeliver(d)
	if in := e.hub.Wait(e.ctx, t, 1); in.EventID != d.EventID {
		t.Errorf("Inbound after resend = %+v, want event %s", in, d.EventID)
	}
}

func TestHistoryFetchedOnceWhenMentionedMidThread(t *testing.T) {
	e := start(t, nil)
	root := e.slack.AddMessage(slacktest.Message{Channel: "C0GENERAL", User: "UBOB", Text: "the deploy failed &amp; rolled back"})
	e.slack.AddMessage(slacktest.Message{Channel: "C0GENERAL", User: "UCAROL", Text: "logs say OOM", ThreadTS: root.TS})
	e.slack.RateLimit("conversations.replies", 1, 0)
	d := e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "what happened?", ThreadTS: root.TS})
	in := e.hub.Wait(e.ctx, t, 1)
	want := "<@UBOB>: the deploy failed & rolled back\n<@UCAROL>: logs say OOM"
	if in.Context != want {
		t.Errorf("Inbound.Context = %q, want %q", in.Context, want)
	}
	if in.Thread.ID != root.TS {
		t.Errorf("thread = %s, want the existing thread %s", in.Thread.ID, root.TS)
	}
	// Once Neo is in the thread, the transcript is the store's: no more fetching.
	e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "and now?", ThreadTS: root.TS})
	if in := e.hub.Wait(e.ctx, t, 2); in.Context != "" {
		t.Errorf("second mention Context = %q, want empty", in.Context)
	}
	if n := len(e.slack.Calls("conversations.replies")); n != 2 { // one 429, one answer
		t.Errorf("conversations.replies calls = %d, want 2 (a 429 then the fetch)", n)
	}
	_ = d
}

func TestRateLimitedPostRetried(t *testing.T) {
	e := start(t, nil)
	e.hub.OnTurn(echo(e.a))
	e.slack.RateLimit("chat.postMessage", 2, 0)
	d := e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "busy?"})
	e.botReply("C0GENERAL", d.TS, "echo: busy?")
	if n := len(e.slack.Calls("chat.postMessage")); n != 3 {
		t.Errorf("chat.postMessage calls = %d, want 3 (two 429s, then the post)", n)
	}
}

func TestAllowlists(t *testing.T) {
	e := start(t, func(o *Options) {
		o.AllowUsers = []string{"UALICE"}
		o.AllowChannels = []string{"C0OK"}
	})
	e.hub.OnTurn(echo(e.a))
	tests := []struct {
		name, user, channel, want string
	}{
		{"user not allowed", "UMALLORY", "C0OK", "allowlist"},
		{"channel not allowed", "UALICE", "C0ELSEWHERE", "not enabled in this channel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := e.slack.Mention(slacktest.Msg{User: tt.user, Channel: tt.channel, Text: "hi"})
			m, err := e.slack.WaitMessage(e.ctx, func(m slacktest.Message) bool {
				return m.Ephemeral && m.Recipient == tt.user && m.Channel == tt.channel
			})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(m.Text, tt.want) {
				t.Errorf("ephemeral = %q, want it to mention %q", m.Text, tt.want)
			}
			e.idle()
			if got := e.botMessages(tt.channel, d.TS); len(got) != 0 {
				t.Errorf("visible replies = %+v, want none", got)
			}
		})
	}
	d := e.slack.Mention(slacktest.Msg{User: "UALICE", Channel: "C0OK", Text: "hi"})
	e.botReply("C0OK", d.TS, "echo: hi")
	if n := len(e.hub.Journaled()); n != 1 {
		t.Errorf("hub got %d messages, want only the allowed one", n)
	}
}

func TestFiles(t *testing.T) {
	e := start(t, func(o *Options) { o.MaxFileBytes = 64 })
	notes := e.slack.AddFile("notes.txt", "text/plain", []byte("buy milk"))
	big := e.slack.AddFile("big.txt", "text/plain", []byte(strings.Repeat("x", 100)))
	fake := e.slack.AddFile("cat.png", "image/png", []byte{0x89, 'P', 'N', 'G'}) // a PNG by name only
	dot := e.slack.AddFile("dot.jpg", "image/jpeg", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	pdf := e.slack.AddFile("plan.pdf", "application/pdf", []byte("%PDF-1.7"))
	e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "read these", Subtype: "", Files: []slacktest.File{notes, big, fake, dot, pdf}})
	in := e.hub.Wait(e.ctx, t, 1)
	if len(in.Files) != 5 || in.Files[0].Text != "buy milk" || in.Files[1].Text != "" || len(in.Files[2].Image) != 0 {
		t.Fatalf("Files = %+v, want notes.txt read and big.txt and cat.png declined", in.Files)
	}
	if f := in.Files[3]; len(f.Image) == 0 || f.MIMEType != "image/png" {
		t.Errorf("dot.jpg = %d bytes of %q, want the picture read as the PNG it is", len(f.Image), f.MIMEType)
	}
	for _, want := range []string{`"big.txt" (larger than the 64 bytes`, `"cat.png" (not a PNG, JPEG, GIF or WebP picture)`, `"plan.pdf" (I can only read text files)`} {
		if !strings.Contains(in.Text, want) {
			t.Errorf("Inbound.Text = %q, want it to say %s", in.Text, want)
		}
	}
	if c := e.slack.Calls("files"); len(c) != 3 || c[0].Token != "xoxb-test" {
		t.Errorf("file downloads = %+v, want three (the text and the two pictures), with the bot token", c)
	}
}

func TestStatusPlaceholderReplacedByAnswer(t *testing.T) {
	e := start(t, nil)
	e.hub.OnTurn(func(ctx context.Context, in core.Inbound) {
		r := e.a.Reporter(in.Thread)
		_ = r.Status(ctx, "searching…")
		_ = r.Status(ctx, "reading…")
		_ = r.Status(ctx, "writing…")
		_ = r.Say(ctx, "done")
		_ = r.Notice(ctx, "I used 2 tools")
	})
	d := e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "go"})
	e.botReply("C0GENERAL", d.TS, "I used 2 tools")
	e.hub.WaitTurns(t)
	got := e.botMessages("C0GENERAL", d.TS)
	if len(got) != 2 {
		t.Fatalf("bot messages = %+v, want the answer (in the edited placeholder) and the notice", got)
	}
	if got[0].Text != "done" || len(got[0].Blocks) > 2 || got[0].Edits == 0 {
		t.Errorf("first message = %+v, want the placeholder edited into the answer, status block removed", got[0])
	}
	if bt := got[1].BlockTypes(); len(bt) != 1 || bt[0] != "context" {
		t.Errorf("notice blocks = %v, want one context block", bt)
	}
	if n := len(e.slack.Calls("assistant.threads.setStatus")); n != 0 {
		t.Errorf("setStatus calls in a channel = %d, want 0", n)
	}
}

func TestLongAnswerSplit(t *testing.T) {
	e := start(t, nil)
	long := strings.Repeat("A paragraph of prose that goes on.\n\n", 80) + "```\n" + strings.Repeat("code line\n", 500) + "```\n"
	e.hub.OnTurn(func(ctx context.Context, in core.Inbound) { _ = e.a.Reporter(in.Thread).Say(ctx, long) })
	d := e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "long"})
	e.hub.Wait(e.ctx, t, 1)
	e.hub.WaitTurns(t)
	got := e.botMessages("C0GENERAL", d.TS)
	if len(got) < 3 {
		t.Fatalf("answer posted in %d messages, want it split in at least 3", len(got))
	}
	for i, m := range got {
		if len(m.Text) > maxMessageChars || strings.Count(m.Text, "```")%2 != 0 {
			t.Errorf("message %d: %d chars, %d fences; want <= %d chars and balanced fences", i, len(m.Text), strings.Count(m.Text, "```"), maxMessageChars)
		}
		if strings.Contains(m.Text, writingMark) {
			t.Errorf("message %d still marked as being written once the answer was said: %.80q…", i, m.Text)
		}
	}
	if first, last := got[0].Text, got[len(got)-1].Text; !strings.HasPrefix(first, "A paragraph") || !strings.HasSuffix(strings.TrimSpace(last), "code line\n```") {
		t.Errorf("answer runs %.40q… to …%q, want the whole answer", first, last[max(0, len(last)-40):])
	}
}

func TestStatusThrottled(t *testing.T) {
	tests := []struct {
		name        string
		interval    time.Duration
		wantUpdates int // chat.update calls before Say
	}{
		// Within the interval the latest status waits; Say replaces it.
		{"within interval", time.Hour, 0},
		// Past the interval every status edits the placeholder at once.
		{"past interval", time.Nanosecond, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := start(t, func(o *Options) { o.StatusInterval = tt.interval })
			th := core.Thread{Platform: Platform, Workspace: slacktest.TeamID, Channel: "C0GENERAL", ID: "1700000000.000009"}
			r := e.a.Reporter(th)
			for _, s := range []string{"one", "two", "three"} {
				if err := r.Status(e.ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			if n := len(e.slack.Calls("chat.postMessage")); n != 1 {
				t.Errorf("status messages posted = %d, want 1", n)
			}
			if n := len(e.slack.Calls("chat.update")); n != tt.wantUpdates {
				t.Errorf("status edits = %d, want %d", n, tt.wantUpdates)
			}
			if err := r.Say(e.ctx, "answer"); err != nil {
				t.Fatal(err)
			}
			got := e.botMessages(th.Channel, th.ID)
			if len(got) != 1 || got[0].Text != "answer" || len(got[0].BlockTypes()) != 0 {
				t.Errorf("thread = %+v, want one message: the answer", got)
			}
		})
	}
}

func TestOrderWithinThread(t *testing.T) {
	e := start(t, nil)
	root := e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "start"})
	e.hub.Wait(e.ctx, t, 1)
	const n = 20
	for i := range n {
		e.slack.Message(slacktest.Msg{User: "UALICE", Text: fmt.Sprint(i), ThreadTS: root.TS})
	}
	e.hub.Wait(e.ctx, t, n+1)
	for i, in := range e.hub.Journaled()[1:] {
		if in.Text != fmt.Sprint(i) {
			t.Fatalf("message %d reached the hub as %q, want %q (order kept per thread)", i, in.Text, fmt.Sprint(i))
		}
	}
}

// blockingThreads blocks ThreadKnown for one channel until released.
type blockingThreads struct {
	*intaketest.Threads
	channel string
	release chan struct{}
}

func (b *blockingThreads) ThreadKnown(ctx context.Context, t core.Thread) (bool, error) {
	if t.Channel == b.channel {
		<-b.release
	}
	return b.Threads.ThreadKnown(ctx, t)
}

func TestSlowThreadDoesNotBlockOthers(t *testing.T) {
	bt := &blockingThreads{Threads: intaketest.NewThreads(), channel: "C0SLOW", release: make(chan struct{})}
	e := start(t, func(o *Options) { o.Threads = bt })
	defer close(bt.release)
	// Acked only once journaled, which waits on its stuck thread lookup.
	e.slack.Mention(slacktest.Msg{User: "UALICE", Channel: "C0SLOW", Text: "slow", ThreadTS: "1600000000.000001"})
	fast := e.slack.Mention(slacktest.Msg{User: "UBOB", Channel: "C0FAST", Text: "fast"})
	e.ack(fast)
	if in := e.hub.Wait(e.ctx, t, 1); in.Text != "fast" {
		t.Errorf("first message through = %q, want the one whose thread is not stuck", in.Text)
	}
}

func TestReconnects(t *testing.T) {
	e := start(t, nil)
	e.hub.OnTurn(echo(e.a))
	e.slack.Disconnect()
	d := e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "still there?"})
	e.ack(d)
	e.botReply("C0GENERAL", d.TS, "echo: still there?")
	if n := e.slack.Connections(); n < 2 {
		t.Errorf("connections = %d, want a reconnect", n)
	}
}

// TestStatusAfterUnansweredTurn checks that a turn ending without an answer
// (stopped, or failed: the hub posts a notice instead) leaves no stale
// "working" line, and that the next turn's answer lands below that notice
// rather than in the old placeholder above it.
func TestStatusAfterUnansweredTurn(t *testing.T) {
	e := start(t, func(o *Options) { o.StatusInterval = time.Hour })
	th := core.Thread{Platform: Platform, Workspace: slacktest.TeamID, Channel: "C0GENERAL", ID: "1700000000.000011"}
	r := e.a.Reporter(th)
	steps := []struct {
		name string
		do   func() error
	}{
		{"Status", func() error { return r.Status(e.ctx, "Thinking…") }},
		{"Notice", func() error { return r.Notice(e.ctx, "Stopped.") }},
		{"Status", func() error { return r.Status(e.ctx, "Thinking…") }},
		{"Say", func() error { return r.Say(e.ctx, "the answer") }},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s() = %v, want nil", s.name, err)
		}
	}
	var got []string
	for _, m := range e.botMessages(th.Channel, th.ID) {
		got = append(got, m.Rendered())
	}
	want := []string{"Stopped.", "the answer"}
	if !slices.Equal(got, want) {
		t.Errorf("thread after Status, Notice, Status, Say = %q, want %q", got, want)
	}
}

// TestStatusAfterRunStartsNoGoroutine checks that a throttled status from a
// turn still running after Run returned (the hub's shutdown grace) starts
// no flush goroutine: Run already waited for its goroutines, so nobody
// would own it.
func TestStatusAfterRunStartsNoGoroutine(t *testing.T) {
	s := slacktest.New(t)
	a, err := New(Options{BotToken: "xoxb-test", AppToken: "xapp-test", APIURL: s.APIURL(),
		Hub: intaketest.NewHub(intaketest.NewThreads()), StatusInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := a.Run(ctx); err != nil {
		t.Fatalf("Run(cancelled) = %v, want nil", err)
	}
	th := core.Thread{Platform: Platform, Workspace: slacktest.TeamID, Channel: "C0GENERAL", ID: "1700000000.000012"}
	r := a.Reporter(th)
	for _, text := range []string{"one", "two"} {
		if err := r.Status(t.Context(), text); err != nil {
			t.Fatalf("Status(%q) = %v, want nil", text, err)
		}
	}
	var scheduled bool
	_ = a.lines.With(th.Key(), func(l *statusline.Line[learned]) error {
		scheduled = l.Scheduled()
		return nil
	})
	if scheduled {
		t.Error("Status after Run returned scheduled a flush goroutine, want none")
	}
	if err := r.Say(t.Context(), "answer"); err != nil {
		t.Fatal(err)
	}
}

// TestHistoryNearestTheMention: mentioned at the end of a 400-message
// thread, Neo's context is the thread's first message and the messages
// just before the mention, paged through, not the oldest replies.
func TestHistoryNearestTheMention(t *testing.T) {
	e := start(t, nil)
	root := e.slack.AddMessage(slacktest.Message{Channel: "C0GENERAL", User: "UBOB", Text: "incident: checkout is down"})
	for i := 1; i <= 400; i++ {
		e.slack.AddMessage(slacktest.Message{Channel: "C0GENERAL", User: "UCAROL", Text: fmt.Sprintf("update %03d", i), ThreadTS: root.TS})
	}
	e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "where are we?", ThreadTS: root.TS})
	e.slack.AddMessage(slacktest.Message{Channel: "C0GENERAL", User: "UCAROL", Text: "after the mention", ThreadTS: root.TS})
	in := e.hub.Wait(e.ctx, t, 1)
	for _, want := range []string{"<@UBOB>: incident: checkout is down\n…\n", "update 351", "<@UCAROL>: update 400"} {
		if !strings.Contains(in.Context, want) {
			t.Errorf("Context lacks %q:\n%.300s…", want, in.Context)
		}
	}
	for _, gone := range []string{"update 001", "update 350", "after the mention", "where are we?"} {
		if strings.Contains(in.Context, gone) {
			t.Errorf("Context holds %q, which is not among the messages nearest the mention", gone)
		}
	}
	if n := len(e.slack.Calls("conversations.replies")); n != 3 {
		t.Errorf("conversations.replies calls = %d, want 3 pages of 200", n)
	}
}

// TestMentionCopyIgnored: Slack sends a mention twice to an app subscribed
// to both events, as app_mention and as message, with different event IDs;
// it must start one turn, in a channel and in a thread alike.
func TestMentionCopyIgnored(t *testing.T) {
	e := start(t, nil)
	root := e.slack.AddMessage(slacktest.Message{Channel: "C0GENERAL", User: "UBOB", Text: "a thread"})
	e.threads.Add(core.Thread{Platform: Platform, Workspace: slacktest.TeamID, Channel: "C0GENERAL", ID: root.TS})
	e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "top level"})
	e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "in the thread", ThreadTS: root.TS})
	e.slack.Message(slacktest.Msg{User: "UALICE", Text: "a follow-up without a mention", ThreadTS: root.TS})
	// The follow-up queues behind the thread's mention and its copy: once
	// it is journaled, the copy has been dealt with.
	for n := 1; e.hub.Wait(e.ctx, t, n).Text != "a follow-up without a mention"; n++ {
	}
	e.idle()
	var texts []string
	for _, in := range e.hub.Journaled() {
		texts = append(texts, in.Text)
	}
	if len(texts) != 3 {
		t.Errorf("journaled %d messages %q, want 3: each mention once, and the follow-up", len(texts), texts)
	}
}

// TestStatusWithoutAssistant: in a workspace without the assistant
// feature, a DM's status line falls back to a status message, and the
// answer replaces it.
func TestStatusWithoutAssistant(t *testing.T) {
	e := start(t, nil)
	e.slack.DisableAssistant()
	e.hub.OnTurn(func(ctx context.Context, in core.Inbound) {
		r := e.a.Reporter(in.Thread)
		_ = r.Status(ctx, "Thinking…")
		_ = r.Say(ctx, "echo: "+in.Text)
	})
	d := e.slack.DM(slacktest.Msg{User: "UALICE", Text: "hi"})
	e.botReply("D0DM", d.TS, "echo: hi")
	if n := len(e.slack.Calls("assistant.threads.setStatus")); n != 1 {
		t.Errorf("setStatus calls = %d, want one try", n)
	}
	msgs := e.botMessages("D0DM", d.TS)
	if len(msgs) != 1 || msgs[0].Rendered() != "echo: hi" {
		t.Errorf("thread = %+v, want the status message turned into the answer", msgs)
	}
}

// TestRetryAckedAfterTheFirstDelivery: Slack's retry of a message whose
// first delivery is still on its way to the journal is acked only once
// the first delivery is: acked earlier, a crash before the journal
// commit would lose the message, with nothing left for Slack to retry.
func TestRetryAckedAfterTheFirstDelivery(t *testing.T) {
	bt := &blockingThreads{Threads: intaketest.NewThreads(), channel: "C0SLOW", release: make(chan struct{})}
	e := start(t, func(o *Options) { o.Threads = bt })
	var once sync.Once
	release := func() { once.Do(func() { close(bt.release) }) }
	defer release()
	first := e.slack.Mention(slacktest.Msg{User: "UALICE", Channel: "C0SLOW", Text: "slow", ThreadTS: "1600000000.000001"})
	retry := e.slack.Redeliver(first)
	// The reader handles one envelope after another: once a later one is
	// acked, the retry has been handled too.
	e.ack(e.slack.Mention(slacktest.Msg{User: "UBOB", Channel: "C0FAST", Text: "fast"}))
	acks := e.slack.Acks()
	if _, ok := acks[retry.EnvelopeID]; ok {
		t.Fatal("the retry was acked while the first delivery was not journaled yet")
	}
	release()
	a1, a2 := e.ack(first), e.ack(retry)
	if a2.At.Before(a1.At) {
		t.Errorf("retry acked at %v, before the first delivery (%v)", a2.At, a1.At)
	}
	if in := e.hub.Wait(e.ctx, t, 2); in.Text != "slow" {
		t.Errorf("second message through = %q, want the slow one, once", in.Text)
	}
}

// TestStatusFallbackRemembered: once setStatus has failed in a thread,
// that thread's later status lines, in this turn and the next ones, go to
// a status message without asking Slack again, and each answer replaces
// its turn's status message.
func TestStatusFallbackRemembered(t *testing.T) {
	e := start(t, nil)
	e.slack.DisableAssistant()
	e.hub.OnTurn(func(ctx context.Context, in core.Inbound) {
		r := e.a.Reporter(in.Thread)
		for _, s := range []string{"Thinking…", "Reading files…"} {
			_ = r.Status(ctx, s)
		}
		_ = r.Say(ctx, "echo: "+in.Text)
	})
	d := e.slack.DM(slacktest.Msg{User: "UALICE", Text: "hi"})
	e.botReply("D0DM", d.TS, "echo: hi")
	e.slack.DM(slacktest.Msg{User: "UALICE", Text: "again", ThreadTS: d.TS})
	e.botReply("D0DM", d.TS, "echo: again")
	if n := len(e.slack.Calls("assistant.threads.setStatus")); n != 1 {
		t.Errorf("setStatus calls = %d, want one try for the thread", n)
	}
	var got []string
	for _, m := range e.botMessages("D0DM", d.TS) {
		got = append(got, m.Rendered())
	}
	if !slices.Equal(got, []string{"echo: hi", "echo: again"}) {
		t.Errorf("thread = %q, want each status message turned into its answer", got)
	}
}
