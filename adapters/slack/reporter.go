package slack

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/slack-go/slack"

	"github.com/neobot/neobot/adapters/internal/live"
	"github.com/neobot/neobot/adapters/internal/mdsplit"
	"github.com/neobot/neobot/adapters/internal/speak"
	"github.com/neobot/neobot/adapters/internal/statusline"
	"github.com/neobot/neobot/core"
)

// maxStreamChars bounds one chat.startStream/appendStream markdown_text,
// under the 12,000 characters of a markdown block.
const maxStreamChars = 10000

// Reporter returns how Neo speaks in thread t: Status as the assistant
// pane's status line (assistant.threads.setStatus) in DMs, else one
// placeholder message edited in place at most once per StatusInterval;
// Say as thread replies converted to mrkdwn and split under Slack's
// limits, streamed in DMs where the workspace supports it, replacing the
// placeholder; Notice as a context block, which retires the placeholder.
func (a *Adapter) Reporter(t core.Thread) core.Reporter {
	return speak.Reporter[*Adapter]{P: a, T: t}
}

// Say says a whole answer in thread t in one message with the feedback
// buttons under it: the turn's streamed message when its task cards opened
// one, else the status message edited into it (or, in an assistant thread,
// one stream started and stopped).
func (a *Adapter) Say(ctx context.Context, t core.Thread, text string) error {
	if said, err := a.sayInSteps(ctx, t, text); said {
		return err
	}
	return a.say(ctx, t, text)
}

// Notice ends the turn's message in thread t, if its task cards opened
// one, then posts text as a context block below it.
func (a *Adapter) Notice(ctx context.Context, t core.Thread, text string) error {
	a.endSteps(ctx, t)
	return a.notice(ctx, t, text)
}

// learned is what Slack taught the reporter about a thread: a feature
// found missing there, worth remembering after the turn so the next one
// does not try it again.
type learned struct {
	noAssistant bool // setStatus failed here: use the placeholder
	noStream    bool // chat.startStream failed here: post instead
}

func (l learned) worthKeeping() bool { return l.noAssistant || l.noStream }

// newStatusLines returns the reporter's per-thread status lines; their
// timers end by Run's return.
func newStatusLines(a *Adapter) *statusline.Lines[learned] {
	return statusline.New(statusline.Options[learned]{
		Interval:     a.opts.StatusInterval,
		FlushTimeout: submitTimeout,
		FlushFailed: func(thread string, err error) {
			a.log.Warn().Err(err).Str("thread", thread).Msg("slack: update status")
		},
		Keep: learned.worthKeeping,
	})
}

// assistantThread reports whether t may be an assistant-pane thread: only
// DMs can be.
func assistantThread(t core.Thread) bool { return strings.HasPrefix(t.Channel, "D") }

// Status shows text in thread t: on the assistant pane's status line in
// a DM where Slack offers one, else in the status message, posted or
// edited at the pace.
func (a *Adapter) Status(ctx context.Context, t core.Thread, text string) error {
	return a.lines.With(t.Key(), func(st *statusline.Line[learned]) error {
		if assistantThread(t) && !st.Ext.noAssistant && st.ID() == "" {
			err := a.retry(ctx, "assistant.threads.setStatus", func(ctx context.Context) error {
				return a.api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{
					ChannelID: t.Channel, ThreadTS: t.ID, Status: text})
			})
			if err == nil {
				return nil
			}
			a.log.Debug().Err(err).Str("thread", t.Key()).Msg("slack: no assistant status here; using a status message")
			st.Ext.noAssistant = true
		}
		if st.ID() == "" {
			ts, err := a.postTS(ctx, t, statusMessage(text))
			if err != nil {
				return err
			}
			st.Posted(ts)
			return nil
		}
		return st.Update(ctx, text, func(ctx context.Context, ts, text string) error {
			return a.update(ctx, t.Channel, ts, statusMessage(text))
		})
	})
}

// statusMessage renders a status line as a small grey context block.
func statusMessage(text string) message {
	line := "_" + escape(strings.TrimSpace(text)) + "_"
	return message{text: text, blocks: contextBlocks("status", ":hourglass_flowing_sand: "+line)}
}

// contextBlocks is a JSON array of one context block holding one mrkdwn
// text, byte for byte as slack-go encodes slack.NewContextBlock, but
// without reflection: every turn posts one.
func contextBlocks(id, text string) string {
	qid, _ := json.Marshal(id) // a string always encodes
	qtext, _ := json.Marshal(text)
	out := make([]byte, 0, len(qid)+len(qtext)+64)
	out = append(out, `[{"type":"context","block_id":`...)
	out = append(out, qid...)
	out = append(out, `,"elements":[{"type":"mrkdwn","text":`...)
	out = append(out, qtext...)
	return string(append(out, "}]}]"...))
}

// say says text, a whole answer, with no stream of the turn open.
func (a *Adapter) say(ctx context.Context, t core.Thread, text string) error {
	rate, _ := a.feedbackTurn(ctx)
	return a.lines.Finish(t.Key(), func(st *statusline.Line[learned]) error {
		placeholder := st.Clear()
		if strings.TrimSpace(text) == "" {
			return nil
		}
		if assistantThread(t) && placeholder == "" && !st.Ext.noStream {
			err := a.stream(ctx, t, text, rate)
			if err == nil {
				return nil
			}
			a.log.Debug().Err(err).Str("thread", t.Key()).Msg("slack: streaming not available; posting")
			st.Ext.noStream = true
		}
		return live.Say(ctx, threadMessages{a: a, t: t, rate: rate}, answerRender, placeholder, text)
	})
}

// stream posts text with chat.startStream/appendStream/stopStream, which
// Slack renders from standard markdown, with the feedback buttons for
// turn rate ("" for none) at the bottom.
func (a *Adapter) stream(ctx context.Context, t core.Thread, text, rate string) error {
	parts := split(tables(text), maxStreamChars)
	var ts string
	err := a.retry(ctx, "chat.startStream", func(ctx context.Context) (err error) {
		_, ts, err = a.api.StartStreamContext(ctx, t.Channel,
			slack.MsgOptionTS(t.ID), slack.MsgOptionMarkdownText(parts[0]))
		return err
	})
	if err != nil {
		return err
	}
	for _, p := range parts[1:] {
		if err := a.retry(ctx, "chat.appendStream", func(ctx context.Context) error {
			_, _, err := a.api.AppendStreamContext(ctx, t.Channel, ts, slack.MsgOptionMarkdownText("\n\n"+p))
			return err
		}); err != nil {
			return err
		}
	}
	var opts []slack.MsgOption
	if rate != "" {
		opts = append(opts, slack.MsgOptionBlocks(feedbackBlock(rate)))
	}
	return a.retry(ctx, "chat.stopStream", func(ctx context.Context) error {
		_, _, err := a.api.StopStreamContext(ctx, t.Channel, ts, opts...)
		return err
	})
}

// notice posts text as a context block. A status placeholder showing in the
// thread is deleted first: a notice often ends a turn that gives no answer
// (stopped, failed), whose "working" line would otherwise stay forever and
// be edited into the next turn's answer, above this notice. Mid-turn, the
// next Status simply posts a fresh placeholder below the notice.
func (a *Adapter) notice(ctx context.Context, t core.Thread, text string) error {
	body := mdsplit.Clip(mrkdwn(text), 3000, mdsplit.Bytes) // a context element's limit
	return a.lines.Finish(t.Key(), func(st *statusline.Line[learned]) error {
		if placeholder := st.Clear(); placeholder != "" {
			if err := a.deleteMessage(ctx, t.Channel, placeholder); err != nil {
				a.log.Warn().Err(err).Str("thread", t.Key()).Msg("slack: delete status message")
			}
		}
		return a.post(ctx, t, message{text: text, blocks: contextBlocks("notice", body)})
	})
}

// post replies in the thread.
func (a *Adapter) post(ctx context.Context, t core.Thread, m message) error {
	_, err := a.postTS(ctx, t, m)
	return err
}

// postTS replies in the thread and returns the new message's ts.
func (a *Adapter) postTS(ctx context.Context, t core.Thread, m message) (string, error) {
	var ts string
	err := a.retry(ctx, "chat.postMessage", func(ctx context.Context) (err error) {
		ts, err = a.chat(ctx, t.Channel, t.ID, "", m)
		return err
	})
	return ts, err
}

// update edits the message at ts in channel into m.
func (a *Adapter) update(ctx context.Context, channel, ts string, m message) error {
	return a.retry(ctx, "chat.update", func(ctx context.Context) error {
		_, err := a.chat(ctx, channel, "", ts, m)
		return err
	})
}

// ephemeral tells user something only they see, in the thread when there is one.
func (a *Adapter) ephemeral(ctx context.Context, channel, user, threadTS, text string) {
	a.postEphemeral(ctx, channel, user, threadTS, "ephemeral reply", slack.MsgOptionText(text, false))
}

// postEphemeral posts a message of opts only user sees, in the thread
// when there is one; a failure is logged as what failed.
func (a *Adapter) postEphemeral(ctx context.Context, channel, user, threadTS, what string, opts ...slack.MsgOption) {
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	err := a.retry(ctx, "chat.postEphemeral", func(ctx context.Context) error {
		_, err := a.api.PostEphemeralContext(ctx, channel, user, opts...)
		return err
	})
	if err != nil {
		a.log.Warn().Err(err).Str("channel", channel).Msg("slack: " + what)
	}
}

// Tidy deletes the status messages and unfinished answers Neo left in
// thread t: a turn cut short by a crash never edited its "Thinking…" line
// into an answer, nor finished an answer it was writing, and a resumed
// turn posts its own (conversation.Tidier). It returns the newest one's
// ts, "" when there was none. A thread it cannot read counts as tidy.
func (a *Adapter) Tidy(ctx context.Context, t core.Thread) (newest string) {
	me := a.me()
	if me.BotID == "" { // a turn resumed before Run has connected
		auth, err := a.api.AuthTestContext(ctx)
		if err != nil {
			a.log.Warn().Err(err).Str("thread", t.Key()).Msg("slack: look for stale status messages")
			return ""
		}
		me = identity{UserID: auth.UserID, BotID: auth.BotID, TeamID: auth.TeamID}
		a.self.CompareAndSwap(nil, &me)
	}
	var msgs []slack.Message
	err := a.retry(ctx, "conversations.replies", func(ctx context.Context) (err error) {
		msgs, _, _, err = a.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
			ChannelID: t.Channel, Timestamp: t.ID, Limit: 200,
		})
		return err
	})
	if err != nil {
		a.log.Warn().Err(err).Str("thread", t.Key()).Msg("slack: look for stale status messages")
		return ""
	}
	for _, m := range msgs {
		if m.BotID != me.BotID || !isStatusMessage(m) && !strings.HasSuffix(m.Text, writingMark) && !strings.HasPrefix(m.Text, streamMark) {
			continue
		}
		if newest == "" || a.Before(newest, m.Timestamp) {
			newest = m.Timestamp
		}
		if err := a.deleteMessage(ctx, t.Channel, m.Timestamp); err != nil {
			a.log.Warn().Err(err).Str("thread", t.Key()).Msg("slack: delete a stale status message")
		}
	}
	return newest
}

// Before reports whether Slack message a was posted before b, by their
// ts (conversation.Tidier).
func (*Adapter) Before(a, b string) bool { return parseTS(a).Before(parseTS(b)) }

// isStatusMessage reports whether m is a status line statusMessage posted.
func isStatusMessage(m slack.Message) bool {
	for _, b := range m.Blocks.BlockSet {
		if c, ok := b.(*slack.ContextBlock); ok && c.BlockID == "status" {
			return true
		}
	}
	return false
}

// PrivateNotice tells user text in an ephemeral message only they see, in
// thread t (core.PrivateNoticer).
func (a *Adapter) PrivateNotice(ctx context.Context, t core.Thread, user, text string) error {
	a.ephemeral(ctx, t.Channel, user, t.ID, text)
	return nil
}
