package slack

import (
	"net/http"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core"
)

// TestChatSendsWhatSlackReads: a post and an update carry the bot token
// and exactly the fields given; Slack's answer gives the new message's ts.
func TestChatSendsWhatSlackReads(t *testing.T) {
	e := start(t, nil)
	th := core.Thread{Channel: "C0GENERAL", ID: "1700000000.000100"}
	ts, err := e.a.postTS(e.ctx, th, statusMessage("Thinking…"))
	if err != nil {
		t.Fatalf("postTS = %v", err)
	}
	post := e.slack.Calls("chat.postMessage")[0]
	if post.Token != "xoxb-test" {
		t.Errorf("token = %q, want the bot token", post.Token)
	}
	for key, want := range map[string]string{
		"channel": "C0GENERAL", "thread_ts": th.ID, "text": "Thinking…",
		"blocks": contextBlocks("status", ":hourglass_flowing_sand: _Thinking…_"),
	} {
		if got := post.Params.Get(key); got != want {
			t.Errorf("chat.postMessage %s = %q, want %q", key, got, want)
		}
	}
	if ts == "" || ts != e.slack.Messages()[0].TS {
		t.Fatalf("postTS = %q, want the posted message's ts", ts)
	}

	if err := e.a.update(e.ctx, th.Channel, ts, message{text: "the answer", blocks: noBlocks}); err != nil {
		t.Fatalf("update = %v", err)
	}
	upd := e.slack.Calls("chat.update")[0]
	if upd.Params.Get("ts") != ts || upd.Params.Has("thread_ts") || upd.Params.Get("blocks") != "[]" {
		t.Errorf("chat.update params = %v, want ts %s, blocks [], no thread_ts", upd.Params, ts)
	}
	if m := e.slack.Messages()[0]; m.Text != "the answer" || string(m.Blocks) != "[]" {
		t.Errorf("message after update = %q with %d blocks, want the answer and no blocks", m.Text, m.Blocks)
	}
}

// TestChatErrors: what Slack refuses comes back as an error naming the
// method and Slack's reason, for the caller to log or act on.
func TestChatErrors(t *testing.T) {
	tests := []struct {
		name  string
		reply slacktest.Reply
		want  string
	}{
		{"refused", slacktest.Reply{Error: "channel_not_found"}, "chat.postMessage: channel_not_found"},
		{"server error", slacktest.Reply{Status: http.StatusInternalServerError}, "chat.postMessage: slack server error: 500"},
		{"rate limited past the retries", slacktest.Reply{Status: http.StatusTooManyRequests}, "chat.postMessage: slack rate limit exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := start(t, nil)
			replies := []slacktest.Reply{tt.reply}
			if tt.reply.Status == http.StatusTooManyRequests {
				replies = []slacktest.Reply{tt.reply, tt.reply, tt.reply, tt.reply, tt.reply, tt.reply}
			}
			e.slack.Script("chat.postMessage", replies...)
			_, err := e.a.postTS(e.ctx, core.Thread{Channel: "C0GENERAL", ID: "1700000000.000100"}, textMessage("hi"))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("postTS = %v, want an error with %q", err, tt.want)
			}
			if n := len(e.slack.Messages()); n != 0 {
				t.Errorf("%d messages posted, want none", n)
			}
		})
	}
}
