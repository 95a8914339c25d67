package main

import (
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// streamingAnswer is long enough to take a few seconds at 40 tokens/s.
const streamingAnswer = "Rotating the deploy key takes three steps. First, create the new key in the vault and " +
	"give it the deploy role. Second, update the CI secret and run one deploy to prove it works. Third, revoke " +
	"the old key and note the date in the runbook, so the next rotation in ninety days starts from a clean slate."

// streamModel answers the main model's calls with replies in order (the
// tests stream them at about 40 tokens/s, with reasoning both in the
// reasoning field and inline) and the cheap model's with no facts.
func streamModel(t *testing.T, srv *llmtest.Server, replies ...llmtest.Reply) {
	t.Helper()
	var mu sync.Mutex
	srv.Handle(func(r llmtest.Request) llmtest.Reply {
		if r.Model == cheapModel {
			return llmtest.Text(`{"facts":[]}`)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(replies) == 0 {
			t.Errorf("model called once more than scripted")
			return llmtest.Reply{Status: 500, Body: `{"error":{"message":"script exhausted"}}`}
		}
		next := replies[0]
		replies = replies[1:]
		return next
	})
}

// finishedAnswer waits for the bot's reply in thread channel/threadTS that
// shows want and is no longer being written. The last paced edit can show
// the whole text still marked as being written, just before the closing
// edit takes the mark off, so the text alone does not say it is finished.
func (w *slackWorld) finishedAnswer(t *testing.T, channel, threadTS, want string) slacktest.Message {
	t.Helper()
	w.answerIn(t, channel, threadTS, want)
	m, err := w.slack.WaitMessage(waitCtx(t), func(m slacktest.Message) bool {
		return m.FromBot() && !m.Ephemeral && m.Channel == channel && (m.ThreadTS == threadTS || m.TS == threadTS) &&
			strings.Contains(m.Rendered(), want) && !strings.Contains(m.Rendered(), "writing…") && !m.Streaming
	})
	if err != nil {
		t.Fatalf("the finished answer still says it is being written: %v\nthread: %+v", err, w.slack.Thread(channel, threadTS))
	}
	return m
}

// finishedAnswer is the Discord world's: the bot's message in channel
// that shows want and is no longer marked as being written.
func (w *discordWorld) finishedAnswer(t *testing.T, channel, want string) discordtest.Message {
	t.Helper()
	w.answerIn(t, channel, want)
	m, err := w.discord.WaitMessage(waitCtx(t), func(m discordtest.Message) bool {
		return m.FromBot() && !m.Ephemeral && m.ChannelID == channel && strings.Contains(m.Content, want) &&
			!strings.Contains(m.Content, "writing…")
	})
	if err != nil {
		t.Fatalf("the finished answer still says it is being written: %v\nmessages: %+v", err, w.discord.Messages())
	}
	return m
}

// secretAnswer is streamingAnswer with reasoning the user must never see.
func secretAnswer() llmtest.Reply {
	return llmtest.Thinking("REASONING-FIELD check the vault first", "<think>REASONING-INLINE musing</think>"+streamingAnswer).
		Streamed(4, 25*time.Millisecond)
}

// TestSlackStreamsAnswer: with the built binary, the answer shows in the
// thread while the model writes it, through Slack's streaming methods
// where the workspace has them, else edited in place; appended or edited
// no faster than once a second, never showing reasoning, and ending as
// exactly one complete answer.
func TestSlackStreamsAnswer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		native bool
		grows  string // the call that grows the answer
		least  int    // how often it is called at least, at 40 tokens/s for 2 s
	}{{"streaming methods", true, "chat.appendStream", 1}, {"edited in place", false, "chat.update", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			w := newSlackWorld(t)
			if !tc.native {
				w.slack.Script("chat.startStream", slacktest.Reply{Error: "not_allowed_token_type"})
			}
			streamModel(t, w.model, llmtest.Text("Hello!"), secretAnswer())
			p := w.start(t, 1)
			warm := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "hello"})
			w.answerIn(t, "C0GENERAL", warm.TS, "Hello!")

			mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "how do I rotate the deploy key?"})
			if _, err := w.slack.WaitCall(waitCtx(t), tc.grows, func(c slacktest.Call) bool {
				return c.Params.Get("ts") != "" && (strings.Contains(c.Params.Get("text"), "writing…") || c.Method == "chat.appendStream")
			}); err != nil {
				t.Fatalf("the answer never grew while being written: %v\n%s", err, p.output.String())
			}
			final := w.finishedAnswer(t, "C0GENERAL", mention.TS, "starts from a clean slate.")
			if got := botAnswers(w, "Rotating the deploy key"); got != 1 {
				t.Errorf("the answer is in the thread %d times, want once", got)
			}
			if tc.native && !strings.HasPrefix(final.Rendered(), "Rotating the deploy key") {
				t.Errorf("streamed answer = %.60q, want the answer itself", final.Rendered())
			}

			var grows []time.Time
			for _, c := range w.slack.Calls("") {
				for _, v := range c.Params {
					if s := strings.Join(v, " "); strings.Contains(s, "REASONING") || strings.Contains(s, "think>") {
						t.Errorf("%s sent reasoning to Slack: %q", c.Method, v)
					}
				}
				if c.Method == tc.grows && c.Params.Get("ts") == final.TS {
					grows = append(grows, c.At)
				}
			}
			if len(grows) < tc.least {
				t.Errorf("the answer grew %d times through %s, want it to grow while written", len(grows), tc.grows)
			}
			sort.Slice(grows, func(i, j int) bool { return grows[i].Before(grows[j]) })
			for i := range grows {
				n := 0
				for _, e := range grows[i:] {
					if e.Sub(grows[i]) < time.Second {
						n++
					}
				}
				if n > 2 { // one paced call a second, and the closing one
					t.Errorf("%d %s calls within one second from call %d, over the pace", n, tc.grows, i)
				}
			}
			p.stop(t)
		})
	}
}

// TestSlackStreamCrash: neobot is killed (SIGKILL) while an answer is
// half written; after the restart the thread holds exactly one complete
// answer, and nothing half written.
func TestSlackStreamCrash(t *testing.T) {
	w := newSlackWorld(t)
	slow := llmtest.Text(streamingAnswer).Streamed(4, 40*time.Millisecond)
	streamModel(t, w.model, llmtest.Text("Hello!"), slow, llmtest.Text(streamingAnswer))
	p1 := w.start(t, 1)
	warm := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "hello"})
	w.answerIn(t, "C0GENERAL", warm.TS, "Hello!")
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "how do I rotate the deploy key?"})
	if _, err := w.slack.WaitCall(waitCtx(t), "chat.appendStream", nil); err != nil {
		t.Fatalf("the answer never started: %v", err)
	}
	p1.kill()

	p2 := w.start(t, 2)
	w.finishedAnswer(t, "C0GENERAL", mention.TS, "starts from a clean slate.")
	for _, m := range w.slack.Thread("C0GENERAL", mention.TS) {
		if m.FromBot() && (strings.Contains(m.Rendered(), "writing…") || m.Streaming) {
			t.Errorf("a half-written answer is left in the thread: %.60q", m.Rendered())
		}
	}
	if got := botAnswers(w, "Rotating the deploy key"); got != 1 {
		t.Errorf("the answer is in the thread %d times, want exactly once", got)
	}
	p2.stop(t)
}

// TestDiscordStreamsAnswer: as TestSlackStreamsAnswer, on Discord: the
// answer grows in place in the mention's thread, at most one edit a
// second, never showing reasoning.
func TestDiscordStreamsAnswer(t *testing.T) {
	w := newDiscordWorld(t)
	streamModel(t, w.model, llmtest.Text("Hello!"), secretAnswer())
	p := w.start(t, 1)
	warm := w.discord.Mention(discordtest.Msg{User: "111", Text: "hello"})
	w.answerIn(t, warm.ID, "Hello!")

	mention := w.discord.Mention(discordtest.Msg{User: "111", Text: "how do I rotate the deploy key?"})
	if _, err := w.discord.WaitCall(waitCtx(t), "PATCH /channels/{channel}/messages/{message}", func(c discordtest.Call) bool {
		return strings.Contains(string(c.Body), "Rotating the deploy key") && strings.Contains(string(c.Body), "writing")
	}); err != nil {
		t.Fatalf("the answer never showed while being written: %v\n%s", err, p.output.String())
	}
	final := w.finishedAnswer(t, mention.ID, "starts from a clean slate.")
	if got := discordAnswers(w, "Rotating the deploy key"); got != 1 {
		t.Errorf("the answer is in the thread %d times, want once", got)
	}
	var edits []time.Time
	for _, c := range w.discord.Calls("") {
		if s := string(c.Body); strings.Contains(s, "REASONING") || strings.Contains(s, "think\\u003e") || strings.Contains(s, "think>") {
			t.Errorf("%s sent reasoning to Discord: %.120s", c.Route, s)
		}
		if c.Route == "PATCH /channels/{channel}/messages/{message}" && strings.HasSuffix(c.Path, "/"+final.ID) {
			edits = append(edits, c.At)
		}
	}
	// At least the edit that showed it being written (waited for above)
	// and the finished answer. How many edits fit between them depends on
	// the machine's pace, not on the bot: a loaded CI machine saw two.
	if len(edits) < 2 {
		t.Errorf("the answer was edited %d times, want it to grow in place", len(edits))
	}
	for i := range edits {
		n := 0
		for _, e := range edits[i:] {
			if e.Sub(edits[i]) < time.Second {
				n++
			}
		}
		if n > 2 {
			t.Errorf("%d edits of the answer within one second from edit %d, over the pace", n, i)
		}
	}
	p.stop(t)
}
