package slacktest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestWebAPIRecordsAndStores(t *testing.T) {
	s := New(t)
	api := slack.New("xoxb-test", slack.OptionAPIURL(s.APIURL()))
	ctx := testCtx(t)
	ch, ts, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("hello", false), slack.MsgOptionTS("1.0"))
	if err != nil || ch != "C1" || ts == "" {
		t.Fatalf("PostMessage = %s, %s, %v; want C1, a ts, nil", ch, ts, err)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", ts, slack.MsgOptionText("edited", false)); err != nil {
		t.Fatalf("UpdateMessage = %v", err)
	}
	m, ok := s.MessageAt("C1", ts)
	if !ok || m.Text != "edited" || m.Edits != 1 || m.ThreadTS != "1.0" || !m.FromBot() {
		t.Errorf("stored message = %+v, want the edited bot reply in thread 1.0", m)
	}
	if c := s.Calls("chat.postMessage"); len(c) != 1 || c[0].Params.Get("text") != "hello" || c[0].Token != "xoxb-test" {
		t.Errorf("Calls(chat.postMessage) = %+v, want one with its params and token", c)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", "9.9", slack.MsgOptionText("x", false)); err == nil || !strings.Contains(err.Error(), "message_not_found") {
		t.Errorf("UpdateMessage(unknown ts) = %v, want message_not_found", err)
	}
}

func TestScriptedReplies(t *testing.T) {
	s := New(t)
	api := slack.New("xoxb-test", slack.OptionAPIURL(s.APIURL()))
	ctx := testCtx(t)
	s.RateLimit("auth.test", 1, 7*time.Second)
	s.Script("auth.test", Reply{Error: "fatal_error"})
	_, err := api.AuthTestContext(ctx)
	if rl, ok := errors.AsType[*slack.RateLimitedError](err); !ok || rl.RetryAfter != 7*time.Second {
		t.Errorf("first auth.test = %v, want a rate limit of 7s", err)
	}
	if _, err := api.AuthTestContext(ctx); err == nil || !strings.Contains(err.Error(), "fatal_error") {
		t.Errorf("second auth.test = %v, want fatal_error", err)
	}
	if r, err := api.AuthTestContext(ctx); err != nil || r.UserID != BotUserID || r.TeamID != TeamID {
		t.Errorf("third auth.test = %+v, %v; want the bot", r, err)
	}
}

func TestSocketModeHelloEnvelopeAck(t *testing.T) {
	s := New(t)
	s.PingInterval = 10 * time.Millisecond
	ctx := testCtx(t)
	d := s.Mention(Msg{User: "UALICE", Text: "queued before connect"})

	api := slack.New("xoxb-test", slack.OptionAPIURL(s.APIURL()), slack.OptionAppLevelToken("xapp-test"))
	_, wsURL, err := api.StartSocketModeContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ws, _, err := websocket.DefaultDialer.DialContext(ctx, wsURL, http.Header{"Origin": {"https://api.slack.com"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	pinged := make(chan struct{}, 1)
	ws.SetPingHandler(func(string) error {
		select {
		case pinged <- struct{}{}:
		default:
		}
		return nil
	})
	var frames []map[string]any
	for len(frames) < 2 {
		var f map[string]any
		if err := ws.ReadJSON(&f); err != nil {
			t.Fatal(err)
		}
		frames = append(frames, f)
	}
	if frames[0]["type"] != "hello" || frames[1]["type"] != "events_api" || frames[1]["envelope_id"] != d.EnvelopeID {
		t.Fatalf("frames = %v, want hello then the queued envelope %s", frames, d.EnvelopeID)
	}
	payload, _ := json.Marshal(frames[1]["payload"])
	if !strings.Contains(string(payload), `"type":"app_mention"`) || !strings.Contains(string(payload), d.EventID) {
		t.Errorf("payload = %s, want an app_mention with event %s", payload, d.EventID)
	}
	if err := ws.WriteJSON(map[string]string{"envelope_id": d.EnvelopeID}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WaitAck(ctx, d); err != nil {
		t.Error(err)
	}
	var copyFrame map[string]any // Slack also sends the mention as a message event
	if err := ws.ReadJSON(&copyFrame); err != nil {
		t.Fatal(err)
	}
	copyPayload, _ := json.Marshal(copyFrame["payload"])
	if !strings.Contains(string(copyPayload), `"type":"message"`) || strings.Contains(string(copyPayload), d.EventID) {
		t.Errorf("second envelope payload = %s, want the same message as a message event with its own event ID", copyPayload)
	}
	go func() { // ping handlers run inside reads
		for {
			if _, _, err := ws.ReadMessage(); err != nil {
				return
			}
		}
	}()
	select {
	case <-pinged:
	case <-ctx.Done():
		t.Error("no websocket ping from the server")
	}
}

func TestSignVerifiesWithSlackGo(t *testing.T) {
	body := []byte(`{"type":"event_callback"}`)
	req, err := NewEventRequest("http://127.0.0.1/slack/events", "secret", time.Now(), body)
	if err != nil {
		t.Fatal(err)
	}
	sv, err := slack.NewSecretsVerifier(req.Header, "secret")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = sv.Write(body)
	if err := sv.Ensure(); err != nil {
		t.Errorf("slack-go rejects our signature: %v", err)
	}
}

func TestMessageHelpers(t *testing.T) {
	blocks := json.RawMessage(`[{"type":"section","text":{"type":"mrkdwn","text":"Question?"}},
		{"type":"context","elements":[{"type":"mrkdwn","text":"note"}]},
		{"type":"actions","block_id":"b","elements":[{"type":"button","action_id":"a0","value":"tok:0","style":"primary","text":{"type":"plain_text","text":"yes"}}]}]`)
	m := Message{Blocks: blocks, Text: "fallback"}
	if got := m.Rendered(); got != "Question?\nnote" {
		t.Errorf("Rendered() = %q, want the section and context text", got)
	}
	if b := m.Buttons(); len(b) != 1 || b[0].Value != "tok:0" || b[0].Text != "yes" || b[0].Style != "primary" {
		t.Errorf("Buttons() = %+v, want the yes button", b)
	}
	if got := (Message{Text: "plain"}).Rendered(); got != "plain" {
		t.Errorf("Rendered() without blocks = %q, want the text", got)
	}
}

// TestRepliesPage: conversations.replies pages as Slack does, checked with
// slack-go's own client: limit, cursor, has_more, latest, and the parent
// first.
func TestRepliesPage(t *testing.T) {
	s := New(t)
	api := slack.New("xoxb-test", slack.OptionAPIURL(s.APIURL()))
	ctx := testCtx(t)
	root := s.AddMessage(Message{Channel: "C1", User: "U1", Text: "root"})
	var replies []string
	for i := range 5 {
		replies = append(replies, s.AddMessage(Message{Channel: "C1", User: "U2", Text: string(rune('a' + i)), ThreadTS: root.TS}).TS)
	}
	var texts []string
	cursor, pages := "", 0
	for {
		msgs, more, next, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
			ChannelID: "C1", Timestamp: root.TS, Limit: 2, Cursor: cursor, Latest: replies[3]})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, m := range msgs {
			texts = append(texts, m.Text)
		}
		if !more {
			break
		}
		cursor = next
	}
	if got := strings.Join(texts, ","); got != "root,a,b,c" || pages != 2 {
		t.Errorf("paged replies = %s in %d pages, want root,a,b,c (latest excludes d) in 2", got, pages)
	}
	if _, _, _, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
		ChannelID: "C1", Timestamp: root.TS, Cursor: "bogus"}); err == nil || !strings.Contains(err.Error(), "invalid_cursor") {
		t.Errorf("a bad cursor = %v, want invalid_cursor", err)
	}
}

// TestUpdateKeepsBlocks: as Slack does, chat.update keeps a message's
// blocks when the update sends none, and an explicit empty list removes
// them; checked with slack-go's client.
func TestUpdateKeepsBlocks(t *testing.T) {
	s := New(t)
	api := slack.New("xoxb-test", slack.OptionAPIURL(s.APIURL()))
	ctx := testCtx(t)
	block := slack.NewContextBlock("status", slack.NewTextBlockObject(slack.MarkdownType, "working", false, false))
	_, ts, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("working", false), slack.MsgOptionBlocks(block))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", ts, slack.MsgOptionText("text only", false)); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.MessageAt("C1", ts); !strings.Contains(string(m.Blocks), `"status"`) {
		t.Errorf("after an update without blocks: blocks %s, want the status block kept", m.Blocks)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", ts, slack.MsgOptionText("answer", false), slack.MsgOptionBlocks()); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.MessageAt("C1", ts); len(m.Blocks) != 0 && string(m.Blocks) != "[]" {
		t.Errorf("after an update with an empty block list: blocks %s, want none", m.Blocks)
	}
}

// TestStrictAsSlack: calls Slack refuses are refused here too, seen through
// slack-go: the wrong token, a message with nothing in it, an ephemeral
// without its user, missing assistant arguments, a stream in a channel
// without its recipient or over 12,000 characters, and assistant methods
// where the feature is off.
func TestStrictAsSlack(t *testing.T) {
	s := New(t)
	ctx := testCtx(t)
	bot := slack.New("xoxb-test", slack.OptionAPIURL(s.APIURL()))
	user := slack.New("xoxp-user", slack.OptionAPIURL(s.APIURL()))
	anon := slack.New("", slack.OptionAPIURL(s.APIURL()))
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"user token", func() error {
			_, _, err := user.PostMessageContext(ctx, "C1", slack.MsgOptionText("hi", false))
			return err
		}, "invalid_auth"},
		{"no token", func() error {
			_, _, err := anon.PostMessageContext(ctx, "C1", slack.MsgOptionText("hi", false))
			return err
		}, "not_authed"},
		{"socket mode with a bot token", func() error { _, _, err := bot.StartSocketModeContext(ctx); return err }, "not_allowed_token_type"},
		{"no text", func() error {
			_, _, err := bot.PostMessageContext(ctx, "C1", slack.MsgOptionText("", false))
			return err
		}, "no_text"},
		{"ephemeral without user", func() error {
			_, err := bot.PostEphemeralContext(ctx, "C1", "", slack.MsgOptionText("psst", false))
			return err
		}, "user_not_found"},
		{"status without thread", func() error {
			return bot.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{ChannelID: "D1", Status: "thinking"})
		}, "invalid_arguments"},
		{"channel stream without recipient", func() error {
			_, _, err := bot.StartStreamContext(ctx, "C1", slack.MsgOptionTS("1.0"), slack.MsgOptionMarkdownText("hi"))
			return err
		}, "missing_recipient"},
		{"stream over 12,000 characters", func() error {
			_, _, err := bot.StartStreamContext(ctx, "D1", slack.MsgOptionTS("1.0"), slack.MsgOptionMarkdownText(strings.Repeat("é", 12001)))
			return err
		}, "msg_too_long"},
	}
	for _, tt := range tests {
		if err := tt.call(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %s", tt.name, err, tt.want)
		}
	}
	if _, _, err := bot.StartStreamContext(ctx, "C1", slack.MsgOptionTS("1.0"), slack.MsgOptionMarkdownText("hi"),
		slack.MsgOptionRecipientTeamID(TeamID), slack.MsgOptionRecipientUserID("UALICE")); err != nil {
		t.Errorf("a channel stream naming its recipient: %v", err)
	}
	params := slack.AssistantThreadsSetStatusParameters{ChannelID: "D1", ThreadTS: "1.0", Status: "thinking"}
	if err := bot.SetAssistantThreadsStatusContext(ctx, params); err != nil {
		t.Errorf("setStatus: %v", err)
	}
	s.DisableAssistant()
	if err := bot.SetAssistantThreadsStatusContext(ctx, params); err == nil || !strings.Contains(err.Error(), "access_denied") {
		t.Errorf("setStatus with the assistant off: %v, want access_denied", err)
	}
}

// TestSocketModeRedeliversUnacked: an event envelope not acked within
// AckTimeout comes again, as Slack retries: same event, new envelope,
// retry_attempt 1, retry_reason timeout.
func TestSocketModeRedeliversUnacked(t *testing.T) {
	s := New(t)
	s.AckTimeout = 20 * time.Millisecond
	ctx := testCtx(t)
	api := slack.New("xoxb-test", slack.OptionAPIURL(s.APIURL()), slack.OptionAppLevelToken("xapp-test"))
	_, wsURL, err := api.StartSocketModeContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ws, _, err := websocket.DefaultDialer.DialContext(ctx, wsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	var hello map[string]any
	if err := ws.ReadJSON(&hello); err != nil || hello["type"] != "hello" {
		t.Fatalf("first frame = %v, %v", hello, err)
	}
	d := s.Event(map[string]any{"type": "app_mention", "user": "UALICE", "text": "hi", "channel": "C1", "ts": "1.0"})
	for {
		var f map[string]any
		if err := ws.ReadJSON(&f); err != nil {
			t.Fatal(err)
		}
		payload, _ := json.Marshal(f["payload"])
		if !strings.Contains(string(payload), d.EventID) {
			continue
		}
		if f["envelope_id"] == d.EnvelopeID {
			continue // the first delivery, deliberately not acked
		}
		if f["retry_attempt"] != float64(1) || f["retry_reason"] != "timeout" {
			t.Errorf("redelivery = %v, want retry_attempt 1 for a timeout", f)
		}
		if err := ws.WriteJSON(map[string]any{"envelope_id": f["envelope_id"]}); err != nil {
			t.Fatal(err)
		}
		return
	}
}

// TestSocketModeSpreadsAcrossConnections: an app with two Socket Mode
// connections open gets its events on both, as Slack spreads them; Via
// pins deliveries to one; a closed connection gets nothing.
func TestSocketModeSpreadsAcrossConnections(t *testing.T) {
	s := New(t)
	ctx := testCtx(t)
	api := slack.New("xoxb-test", slack.OptionAPIURL(s.APIURL()), slack.OptionAppLevelToken("xapp-test"))
	type frame struct {
		conn int
		id   string
	}
	frames := make(chan frame, 64)
	dial := func(n int) *websocket.Conn {
		_, wsURL, err := api.StartSocketModeContext(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ws, _, err := websocket.DefaultDialer.DialContext(ctx, wsURL, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.Close() })
		var hello map[string]any
		if err := ws.ReadJSON(&hello); err != nil || hello["type"] != "hello" {
			t.Fatalf("first frame = %v, %v; want hello", hello, err)
		}
		go func() {
			for {
				var f map[string]any
				if ws.ReadJSON(&f) != nil {
					return
				}
				id, _ := f["envelope_id"].(string)
				frames <- frame{n, id}
			}
		}()
		return ws
	}
	one, two := dial(1), dial(2)
	if s.Live() != 2 || s.Connections() != 2 {
		t.Fatalf("Live = %d, Connections = %d; want both open", s.Live(), s.Connections())
	}
	next := func() frame {
		t.Helper()
		select {
		case f := <-frames:
			return f
		case <-ctx.Done():
			t.Fatal("no envelope arrived")
			return frame{}
		}
	}
	// A DM has no copy event: one envelope per delivery. Both
	// connections get some of twenty.
	var perConn [3]int
	for range 20 {
		s.DM(Msg{User: "UALICE", Text: "spread"})
	}
	for range 20 {
		perConn[next().conn]++
	}
	if perConn[1] == 0 || perConn[2] == 0 {
		t.Errorf("connections 1 and 2 got %d and %d of 20 events, want some on each", perConn[1], perConn[2])
	}
	s.Via(1)
	for range 3 {
		d := s.DM(Msg{User: "UALICE", Text: "pinned"})
		if f := next(); f != (frame{1, d.EnvelopeID}) {
			t.Errorf("Via(1): got %+v, want %s on connection 1", f, d.EnvelopeID)
		}
		if err := one.WriteJSON(map[string]string{"envelope_id": d.EnvelopeID}); err != nil {
			t.Fatal(err)
		}
		if ack, err := s.WaitAck(ctx, d); err != nil || ack.Conn != 1 {
			t.Errorf("ack = %+v, %v; want it from connection 1", ack, err)
		}
	}
	s.Via(0)
	one.Close()
	if err := s.wait(ctx, func() bool { return len(s.live) == 1 }); err != nil {
		t.Fatalf("the closed connection stays live: %v", err)
	}
	for range 3 {
		d := s.DM(Msg{User: "UALICE", Text: "after close"})
		if f := next(); f != (frame{2, d.EnvelopeID}) {
			t.Errorf("after connection 1 closed: got %+v, want %s on connection 2", f, d.EnvelopeID)
		}
	}
	_ = two
}

// TestWatch: a watcher sees every message the bot posts or edits, as it
// lands, without scanning.
func TestWatch(t *testing.T) {
	s := New(t)
	seen := make(chan Message, 4)
	s.Watch(func(m Message) { seen <- m })
	api := slack.New("xoxb-test", slack.OptionAPIURL(s.APIURL()))
	ctx := testCtx(t)
	_, ts, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("first", false))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", ts, slack.MsgOptionText("second", false)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"first", "second"} {
		if m := <-seen; m.TS != ts || m.Text != want {
			t.Errorf("watched %q at %s, want %q at %s", m.Text, m.TS, want, ts)
		}
	}
}

// TestForgetThreadAndUnrecorded: a long benchmark can drop a finished
// thread's messages and stop the fake keeping calls; the other threads,
// and the calls made before, stay.
func TestForgetThreadAndUnrecorded(t *testing.T) {
	s := New(t)
	api := slack.New("xoxb-test", slack.OptionAPIURL(s.APIURL()))
	ctx := testCtx(t)
	post := func(channel, thread, text string) string {
		t.Helper()
		_, ts, err := api.PostMessageContext(ctx, channel, slack.MsgOptionText(text, false), slack.MsgOptionTS(thread))
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	post("C1", "1.0", "in thread 1.0")
	kept := post("C1", "2.0", "in thread 2.0")
	post("C2", "1.0", "same ts, another channel")
	s.Unrecorded()
	post("C1", "1.0", "after Unrecorded")
	s.ForgetThread("C1", "1.0")
	if got := len(s.Thread("C1", "1.0")); got != 0 {
		t.Errorf("thread C1/1.0 holds %d messages after ForgetThread, want 0", got)
	}
	if len(s.Thread("C1", "2.0")) != 1 || len(s.Thread("C2", "1.0")) != 1 {
		t.Errorf("other threads lost messages: C1/2.0 %d, C2/1.0 %d", len(s.Thread("C1", "2.0")), len(s.Thread("C2", "1.0")))
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", kept, slack.MsgOptionText("edited", false)); err != nil {
		t.Errorf("update of a kept message after ForgetThread = %v (the index must follow)", err)
	}
	if n := len(s.Calls("chat.postMessage")); n != 3 {
		t.Errorf("calls kept = %d, want the 3 made before Unrecorded", n)
	}
}

// TestUnrecordedAcksAge: an Unrecorded server keeps each ack for one to
// two generations, then lets it go, so a long benchmark's fake does not
// grow with every ack; a server that records keeps every ack.
func TestUnrecordedAcksAge(t *testing.T) {
	s := New(t)
	keep := func(id string, turn bool) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if turn { // a generation has passed
			s.ackTurn = time.Now().Add(-2 * s.ackAge)
		}
		s.keepAckLocked(Ack{EnvelopeID: id})
	}
	has := func(id string) bool {
		_, ok := s.Acks()[id]
		return ok
	}
	keep("recorded", true)
	s.Unrecorded()
	keep("a", false)
	keep("b", true)
	if !has("a") || !has("b") || !has("recorded") {
		t.Fatalf("acks after one generation = %v, want a, b and the one before Unrecorded", s.Acks())
	}
	keep("c", true)
	if has("a") || has("recorded") || !has("b") || !has("c") {
		t.Errorf("acks after two generations = %v, want only b and c", s.Acks())
	}
}

// TestWaitAckOrClose: a click acked is acked; a click whose connection
// closes unacked is ErrUnacked, and not sent again (Slack redelivers
// events, not interactions).
func TestWaitAckOrClose(t *testing.T) {
	s := New(t)
	ctx := testCtx(t)
	dial := func() *websocket.Conn {
		api := slack.New("xoxb-test", slack.OptionAPIURL(s.APIURL()), slack.OptionAppLevelToken("xapp-test"))
		_, wsURL, err := api.StartSocketModeContext(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ws, _, err := websocket.DefaultDialer.DialContext(ctx, wsURL, nil)
		if err != nil {
			t.Fatal(err)
		}
		var hello map[string]any
		if err := ws.ReadJSON(&hello); err != nil || hello["type"] != "hello" {
			t.Fatalf("first frame = %v, %v", hello, err)
		}
		return ws
	}
	ws := dial()
	if err := s.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	msg := s.AddMessage(Message{Channel: "C1", User: BotUserID, Text: "approve?"})
	acked := s.Click("UALICE", msg, 0)
	var f map[string]any
	if err := ws.ReadJSON(&f); err != nil || f["envelope_id"] != acked.EnvelopeID || acked.Conn != 1 {
		t.Fatalf("frame = %v, %v; want the click's envelope through connection 1 (got %d)", f, err, acked.Conn)
	}
	if err := ws.WriteJSON(map[string]any{"envelope_id": acked.EnvelopeID}); err != nil {
		t.Fatal(err)
	}
	if a, err := s.WaitAckOrClose(ctx, acked); err != nil || a.Conn != 1 {
		t.Errorf("WaitAckOrClose of the acked click = %+v, %v; want its ack from connection 1", a, err)
	}
	lost := s.Click("UALICE", msg, 0)
	if err := ws.ReadJSON(&f); err != nil || f["envelope_id"] != lost.EnvelopeID {
		t.Fatalf("frame = %v, %v; want the second click", f, err)
	}
	ws.Close()
	if _, err := s.WaitAckOrClose(ctx, lost); !errors.Is(err, ErrUnacked) {
		t.Errorf("WaitAckOrClose of the click whose connection closed = %v, want ErrUnacked", err)
	}
	// A connection opened later gets nothing of it.
	again := dial()
	defer again.Close()
	next := s.Click("UALICE", msg, 0)
	if err := again.ReadJSON(&f); err != nil || f["envelope_id"] != next.EnvelopeID {
		t.Errorf("the next frame = %v, %v; want the next click, the lost one not sent again", f, err)
	}
}
