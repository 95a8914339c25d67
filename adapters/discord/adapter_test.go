package discord

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/adaptertest"
	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/adapters/internal/intake/intaketest"
	"github.com/neobot/neobot/adapters/internal/statusline"
	"github.com/neobot/neobot/core"
)

func TestMentionStartsThread(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.hub.OnTurn(echo(e.a))
	e.discord.SetRoles("111", "R1", "R2")
	d := e.discord.Mention(discordtest.Msg{User: "111", Text: "what is up?\nsecond line"})

	in := e.hub.Wait(e.ctx, t, 1)
	want := core.Thread{Platform: Platform, Workspace: discordtest.GuildID, Channel: discordtest.ChannelID, ID: d.ID}
	if in.Thread != want {
		t.Errorf("Inbound.Thread = %v, want %v (a thread started from the mention)", in.Thread, want)
	}
	if in.Text != "what is up?\nsecond line" || in.User != "111" || in.EventID != d.ID || in.DM {
		t.Errorf("Inbound = %+v, want the text without the mention, user 111, event %s", in, d.ID)
	}
	if !slices.Equal(in.Roles, []string{"R1", "R2"}) {
		t.Errorf("Inbound.Roles = %v, want [R1 R2]", in.Roles)
	}
	th, ok := e.discord.Channel(d.ID)
	if !ok || th.Type != discordtest.ChannelThread || th.ParentID != discordtest.ChannelID || th.Name != "what is up?" {
		t.Errorf("thread = %+v, %v; want a thread named after the first line, in #general", th, ok)
	}
	e.botReply(d.ID, "echo: what is up?")
	if n := len(e.botMessages(discordtest.ChannelID)); n != 0 {
		t.Errorf("bot posted %d messages in the channel itself, want the answer in the thread only", n)
	}
	ids := e.discord.Identifies()
	if len(ids) != 1 || ids[0].Intents&int(Intents) != int(Intents) || ids[0].Token != "Bot test-token" {
		t.Errorf("identify = %+v, want token \"Bot test-token\" and intents %d (Message Content included)", ids, Intents)
	}
}

func TestThreadContinuesWithoutMention(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.hub.OnTurn(echo(e.a))
	d := e.discord.Mention(discordtest.Msg{User: "111", Text: "first"})
	e.botReply(d.ID, "echo: first")

	e.discord.Message(discordtest.Msg{User: "222", Channel: discordtest.ChannelID, Text: "chatter in the channel"})
	other := e.discord.AddThread(discordtest.ChannelID, "not ours")
	e.discord.Message(discordtest.Msg{User: "111", Channel: other.ID, Text: "chatter in a thread Neo is not in"})
	e.discord.Message(discordtest.Msg{User: "111", Channel: d.ID, Text: "second"})

	in := e.hub.Wait(e.ctx, t, 2)
	if in.Text != "second" || in.Thread.ID != d.ID || in.Thread.Channel != discordtest.ChannelID {
		t.Errorf("follow-up Inbound = %+v, want \"second\" in thread %s", in, d.ID)
	}
	e.botReply(d.ID, "echo: second")
	e.idle()
	if n := len(e.hub.Journaled()); n != 2 {
		t.Errorf("hub got %d messages, want 2 (chatter ignored)", n)
	}
}

func TestKnownThreadAcrossRestart(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	th := e.discord.AddThread(discordtest.ChannelID, "from before the restart")
	e.threads.Add(core.Thread{Platform: Platform, Workspace: discordtest.GuildID, Channel: discordtest.ChannelID, ID: th.ID})
	e.discord.Message(discordtest.Msg{User: "111", Channel: th.ID, Text: "still there?"})
	in := e.hub.Wait(e.ctx, t, 1)
	if in.Thread.ID != th.ID || in.Context != "" {
		t.Errorf("Inbound = %+v, want thread %s and no fetched context (the store has it)", in, th.ID)
	}
	e.discord.Message(discordtest.Msg{User: "111", Channel: th.ID, Text: "again"})
	e.hub.Wait(e.ctx, t, 2)
	// The thread and its parent (is it private?), each once.
	if n := len(e.discord.Calls("GET /channels/{channel}")); n != 2 {
		t.Errorf("GET /channels/{id} called %d times, want 2 (the thread and its parent, cached)", n)
	}
}

func TestMentionInExistingThreadFetchesContext(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	th := e.discord.AddThread(discordtest.ChannelID, "planning")
	e.discord.Message(discordtest.Msg{User: "111", Channel: th.ID, Text: "we should ship friday"})
	e.discord.Message(discordtest.Msg{User: "222", Channel: th.ID, Text: "agreed"})
	d := e.discord.Mention(discordtest.Msg{User: "111", Channel: th.ID, Text: "summarize please"})
	in := e.hub.Wait(e.ctx, t, 1)
	if in.Thread.ID != th.ID || in.Thread.Channel != discordtest.ChannelID || in.EventID != d.ID {
		t.Errorf("Inbound.Thread = %v, want the existing thread %s under #general", in.Thread, th.ID)
	}
	want := "<@111>: we should ship friday\n<@222>: agreed"
	if in.Context != want {
		t.Errorf("Inbound.Context = %q, want %q", in.Context, want)
	}
	if n := len(e.discord.Calls("POST /channels/{channel}/messages/{message}/threads")); n != 0 {
		t.Errorf("started %d threads inside a thread, want 0", n)
	}
}

func TestDM(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.hub.OnTurn(echo(e.a))
	d := e.discord.DM(discordtest.Msg{User: "333", Text: "hello in private"})
	in := e.hub.Wait(e.ctx, t, 1)
	want := core.Thread{Platform: Platform, Workspace: DMWorkspace, Channel: d.ChannelID, ID: d.ChannelID}
	if in.Thread != want || !in.DM || in.Text != "hello in private" {
		t.Errorf("Inbound = %+v, want a DM in thread %v", in, want)
	}
	e.botReply(d.ChannelID, "echo: hello in private")
}

func TestIgnored(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.discord.Mention(discordtest.Msg{User: "444", Bot: true, Text: "another bot"})
	e.discord.Mention(discordtest.Msg{User: discordtest.BotUserID, Text: "myself"})
	e.discord.Mention(discordtest.Msg{User: "111", Type: 18, Text: "thread created"})
	e.discord.DM(discordtest.Msg{User: "444", Bot: true, Text: "a bot's DM"})
	d := e.discord.Mention(discordtest.Msg{User: "111", Text: "a person"})
	e.discord.Mention(discordtest.Msg{User: "111", Text: "a person", ID: d.ID}) // redelivered after a resume
	e.hub.Wait(e.ctx, t, 1)
	e.idle()
	if got := e.hub.Journaled(); len(got) != 1 || got[0].EventID != d.ID {
		t.Errorf("hub got %+v, want only the person's message, once", got)
	}
}

func TestAllowlists(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *Options) {
		o.AllowUsers = []string{"111", "222"}
		o.AllowChannels = []string{discordtest.ChannelID}
	})
	other := e.discord.AddChannel("random")
	cases := []struct {
		name  string
		send  func() discordtest.Delivery
		reply string // a refusal's words, "" when accepted
	}{
		{"user not allowed", func() discordtest.Delivery {
			return e.discord.Mention(discordtest.Msg{User: "999", Text: "hi"})
		}, "allowlist"},
		{"channel not allowed", func() discordtest.Delivery {
			return e.discord.Mention(discordtest.Msg{User: "111", Channel: other.ID, Text: "hi"})
		}, "not enabled in this channel"},
		{"DM of an allowed user", func() discordtest.Delivery {
			return e.discord.DM(discordtest.Msg{User: "222", Text: "hi"})
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(e.hub.Journaled())
			d := c.send()
			if c.reply == "" {
				e.hub.Wait(e.ctx, t, before+1)
				return
			}
			m := e.botReply(d.ChannelID, c.reply)
			if m.ReferenceID != d.ID {
				t.Errorf("refusal replies to %q, want the message %s", m.ReferenceID, d.ID)
			}
			e.idle()
			if len(e.hub.Journaled()) != before {
				t.Errorf("a refused message reached the hub")
			}
		})
	}
}

func TestAttachments(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *Options) { o.MaxFileBytes = 64 })
	notes := e.discord.AddFile("notes.md", "text/markdown; charset=utf-8", []byte("# Notes\nship it"))
	big := e.discord.AddFile("big.txt", "text/plain", []byte(strings.Repeat("x", 65)))
	img := e.discord.AddFile("cat.png", "image/png", []byte{0x89, 'P', 'N', 'G'}) // a PNG by name only
	gif := e.discord.AddFile("dot.gif", "image/gif", []byte("GIF89a\x01\x00\x01\x00"))
	e.discord.Mention(discordtest.Msg{User: "111", Text: "read these", Files: []discordtest.File{notes, big, img, gif}})
	in := e.hub.Wait(e.ctx, t, 1)
	if len(in.Files) != 4 || in.Files[0].Text != "# Notes\nship it" || in.Files[1].Text != "" || len(in.Files[2].Image) != 0 {
		t.Fatalf("Inbound.Files = %+v, want notes.md read, big.txt and cat.png declined", in.Files)
	}
	if f := in.Files[3]; len(f.Image) == 0 || f.MIMEType != "image/gif" {
		t.Errorf("dot.gif = %d bytes of %q, want the picture read", len(f.Image), f.MIMEType)
	}
	for _, want := range []string{`"big.txt" (larger than the 64 bytes I can read)`, `"cat.png" (not a PNG, JPEG, GIF or WebP picture)`} {
		if !strings.Contains(in.Text, want) {
			t.Errorf("Inbound.Text = %q, want it to say %s", in.Text, want)
		}
	}
	if n := len(e.discord.Calls("GET /attachments/{id}/{name}")); n != 3 {
		t.Errorf("downloaded %d attachments, want 3 (the text and the two pictures)", n)
	}
}

func TestStatusThenAnswer(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *Options) { o.StatusInterval = time.Hour })
	th := e.discord.AddThread(discordtest.ChannelID, "status")
	thread := core.Thread{Platform: Platform, Workspace: discordtest.GuildID, Channel: discordtest.ChannelID, ID: th.ID}
	r := e.a.Reporter(thread)
	ctx := e.ctx
	if err := r.Status(ctx, "searching files…"); err != nil {
		t.Fatal(err)
	}
	if err := r.Status(ctx, "reading notes.md…"); err != nil { // within the interval: held back
		t.Fatal(err)
	}
	msgs := e.botMessages(th.ID)
	if len(msgs) != 1 || msgs[0].Content != "-# ⏳ searching files…" || msgs[0].Edits != 0 {
		t.Fatalf("after two quick statuses: %+v, want one subtext status message, not yet edited", msgs)
	}
	if n := len(e.discord.Calls("POST /channels/{channel}/typing")); n != 2 {
		t.Errorf("typing indicator sent %d times, want once per status", n)
	}
	if err := r.Say(ctx, "Here it is."); err != nil {
		t.Fatal(err)
	}
	if err := r.Notice(ctx, "stopped\nas asked"); err != nil {
		t.Fatal(err)
	}
	msgs = e.botMessages(th.ID)
	if len(msgs) != 2 || msgs[0].Content != "Here it is." || msgs[1].Content != "-# stopped\n-# as asked" {
		t.Errorf("thread = %+v, want the status replaced by the answer, then the notice as subtext", msgs)
	}
	var allowed struct {
		Parse []string `json:"parse"`
	}
	_ = json.Unmarshal(msgs[1].AllowedMentions, &allowed)
	if len(allowed.Parse) != 0 {
		t.Errorf("notice allowed mentions %v, want none", allowed.Parse)
	}
}

func TestLongAnswerSplitsUnderLimit(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	th := e.discord.AddThread(discordtest.ChannelID, "long")
	thread := core.Thread{Platform: Platform, Workspace: discordtest.GuildID, Channel: discordtest.ChannelID, ID: th.ID}
	if err := e.a.Reporter(thread).Say(e.ctx, adaptertest.LongAnswer()); err != nil {
		t.Fatalf("Say(long answer) = %v (the fake refuses content over 2,000 characters)", err)
	}
	msgs := e.botMessages(th.ID)
	if len(msgs) < 3 {
		t.Fatalf("long answer posted as %d messages, want several", len(msgs))
	}
	for i, m := range msgs {
		if strings.Count(m.Content, "```")%2 != 0 {
			t.Errorf("message %d breaks a code block:\n%s", i, m.Content)
		}
	}
}

func TestRateLimitHonoured(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.hub.OnTurn(echo(e.a))
	e.discord.RateLimit("POST /channels/{channel}/messages", 2, 20*time.Millisecond)
	d := e.discord.Mention(discordtest.Msg{User: "111", Text: "busy"})
	e.botReply(d.ID, "echo: busy")
	// The fake stores the message before it records the call that made it.
	if _, err := e.discord.WaitCall(e.ctx, "POST /channels/{channel}/messages", func(c discordtest.Call) bool {
		return c.Status == http.StatusOK
	}); err != nil {
		t.Fatal(err)
	}
	var statuses []int
	for _, c := range e.discord.Calls("POST /channels/{channel}/messages") {
		statuses = append(statuses, c.Status)
	}
	if !slices.Equal(statuses, []int{http.StatusTooManyRequests, http.StatusTooManyRequests, http.StatusOK}) {
		t.Errorf("message posts answered %v, want two 429s then the retry's 200", statuses)
	}
}

func TestSubmitFailureApologises(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.hub.FailNext(errBoom)
	d := e.discord.Mention(discordtest.Msg{User: "111", Text: "hello"})
	e.botReply(d.ID, "couldn't take that message")
	// The same message delivered again (a resumed session) is taken.
	e.discord.Mention(discordtest.Msg{User: "111", Text: "hello", ID: d.ID})
	if in := e.hub.Wait(e.ctx, t, 1); in.EventID != d.ID || in.Thread.ID != d.ID {
		t.Errorf("redelivered Inbound = %+v, want event %s in its thread", in, d.ID)
	}
}

func TestReconnectResumes(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.discord.Disconnect()
	d := e.discord.Mention(discordtest.Msg{User: "111", Text: "after the drop"}) // queued until the client is back
	if in := e.hub.Wait(e.ctx, t, 1); in.EventID != d.ID {
		t.Errorf("Inbound after reconnect = %+v, want event %s", in, d.ID)
	}
	if c := e.discord.Connections(); c != 2 {
		t.Errorf("gateway connections = %d, want 2", c)
	}
}

func TestBadTokenFailsRun(t *testing.T) {
	t.Parallel()
	s := discordtest.New(t)
	s.RequireToken("right")
	a, err := New(Options{Token: "wrong", APIURL: s.URL(), Hub: intaketest.NewHub(intaketest.NewThreads())})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Run(ctx); err == nil || !strings.Contains(err.Error(), "DISCORD_BOT_TOKEN") {
		t.Errorf("Run with a wrong token = %v, want an error naming DISCORD_BOT_TOKEN", err)
	}
}

func TestNewValidates(t *testing.T) {
	hub := intaketest.NewHub(intaketest.NewThreads())
	cases := []struct {
		name string
		opts Options
		want string
	}{
		{"no token", Options{Hub: hub}, "DISCORD_BOT_TOKEN"},
		{"no hub", Options{Token: "t"}, "Hub"},
		{"bad URL", Options{Token: "t", Hub: hub, APIURL: "ftp://x"}, "not an http(s) URL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := New(c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("New(%s) = %v, want an error mentioning %q", c.name, err, c.want)
			}
		})
	}
	if _, err := New(Options{Token: "Bot t", Hub: hub}); err != nil {
		t.Errorf("New with a \"Bot \"-prefixed token = %v, want it accepted", err)
	}
}

// TestStatusAfterRunStartsNoGoroutine checks that a throttled status from a
// turn still running after Run returned (the hub's shutdown grace) starts
// no flush goroutine: Run already waited for its goroutines, so nobody
// would own it.
func TestStatusAfterRunStartsNoGoroutine(t *testing.T) {
	t.Parallel()
	s := discordtest.New(t)
	a, err := New(Options{Token: "t", APIURL: s.URL(), Hub: intaketest.NewHub(intaketest.NewThreads()),
		StatusInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := a.Run(ctx); err != nil {
		t.Fatalf("Run(cancelled) = %v, want nil", err)
	}
	th := s.AddThread(discordtest.ChannelID, "late")
	thread := core.Thread{Platform: Platform, Workspace: discordtest.GuildID, Channel: discordtest.ChannelID, ID: th.ID}
	r := a.Reporter(thread)
	for _, text := range []string{"one", "two"} {
		if err := r.Status(t.Context(), text); err != nil {
			t.Fatalf("Status(%q) = %v, want nil", text, err)
		}
	}
	var scheduled bool
	_ = a.lines.With(thread.Key(), func(l *statusline.Line[struct{}]) error {
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
