package slack

import (
	"context"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/neobot/neobot/adapters/internal/statusline"
	"github.com/neobot/neobot/core"
)

// streamMark opens every message of an answer still streaming, so a
// process that restarts mid-answer finds the unfinished messages and
// removes them (see Tidy). Close rewrites the messages without it.
const streamMark = "_:writing_hand: writing…_\n\n"

// nativeAnswer is an answer shown with Slack's streaming methods:
// chat.startStream at the first words, chat.appendStream at most once per
// StatusInterval, chat.stopStream and one chat.update per message at the
// end, which puts in exactly the stored answer. Where the workspace or
// channel refuses streaming, it falls back to the answer edited in place
// (live), and the thread remembers not to try again.
type nativeAnswer struct {
	r    reporter
	user string // the recipient, required when streaming in channels

	written  strings.Builder
	sent     int       // bytes of written already streamed
	msgs     []string  // the answer's messages, in order
	curLen   int       // bytes streamed into the last message
	active   bool      // the last message is still streaming
	last     time.Time // the last start or append
	fallback core.AnswerStream
}

// Write appends text. The first words start the stream at once; later
// ones are appended at the status line's pace.
func (n *nativeAnswer) Write(ctx context.Context, text string) error {
	if n.fallback != nil {
		return n.fallback.Write(ctx, text)
	}
	n.written.WriteString(text)
	if len(n.msgs) == 0 {
		if err := n.startFirst(ctx); err != nil {
			n.r.a.log.Debug().Err(err).Str("thread", n.r.t.Key()).Msg("slack: streaming not available here; editing the answer in place")
			_ = n.r.a.lines.With(n.r.t.Key(), func(st *statusline.Line[learned]) error {
				st.Ext.noStream = true
				return nil
			})
			n.fallback = n.r.editedAnswer()
			return n.fallback.Write(ctx, n.written.String())
		}
		return nil
	}
	if time.Since(n.last) < n.r.a.opts.StatusInterval {
		return nil
	}
	return n.flush(ctx)
}

// startFirst starts the answer's first message in place of the status
// message, which goes.
func (n *nativeAnswer) startFirst(ctx context.Context) error {
	if err := n.start(ctx, n.written.String()); err != nil {
		return err
	}
	n.sent = n.written.Len()
	return n.r.a.lines.With(n.r.t.Key(), func(st *statusline.Line[learned]) error {
		if placeholder := st.Clear(); placeholder != "" {
			return n.r.a.deleteMessage(ctx, n.r.t.Channel, placeholder)
		}
		return nil
	})
}

// start opens a new streaming message showing text.
func (n *nativeAnswer) start(ctx context.Context, text string) error {
	t := n.r.t
	opts := []slack.MsgOption{slack.MsgOptionTS(t.ID), slack.MsgOptionMarkdownText(streamMark + text)}
	if n.user != "" {
		opts = append(opts, slack.MsgOptionRecipientTeamID(t.Workspace), slack.MsgOptionRecipientUserID(n.user))
	}
	var ts string
	err := n.r.a.retry(ctx, "chat.startStream", func(ctx context.Context) (err error) {
		_, ts, err = n.r.a.api.StartStreamContext(ctx, t.Channel, opts...)
		return err
	})
	if err != nil {
		return err
	}
	n.msgs, n.curLen, n.active, n.last = append(n.msgs, ts), len(streamMark)+len(text), true, time.Now()
	return nil
}

// flush streams what was written since the last append; past a message's
// limit the answer continues in a new streaming message (Close splits the
// final text properly).
func (n *nativeAnswer) flush(ctx context.Context) error {
	pending := n.written.String()[n.sent:]
	for pending != "" {
		room := maxStreamChars - n.curLen
		if len(pending) > room {
			head := cutRunes(pending, room)
			if head != "" {
				if err := n.appendText(ctx, head); err != nil {
					return err
				}
			}
			if err := n.stop(ctx); err != nil {
				return err
			}
			rest := pending[len(head):]
			if err := n.start(ctx, cutRunes(rest, maxStreamChars-len(streamMark))); err != nil {
				return err
			}
			n.sent += len(head) + n.curLen - len(streamMark)
			pending = n.written.String()[n.sent:]
			continue
		}
		if err := n.appendText(ctx, pending); err != nil {
			return err
		}
		n.sent += len(pending)
		pending = ""
	}
	return nil
}

func (n *nativeAnswer) appendText(ctx context.Context, text string) error {
	ts := n.msgs[len(n.msgs)-1]
	err := n.r.a.retry(ctx, "chat.appendStream", func(ctx context.Context) error {
		_, _, err := n.r.a.api.AppendStreamContext(ctx, n.r.t.Channel, ts, slack.MsgOptionMarkdownText(text))
		return err
	})
	if err == nil {
		n.curLen += len(text)
		n.last = time.Now()
	}
	return err
}

// stop ends the last message's stream, if it is still streaming.
func (n *nativeAnswer) stop(ctx context.Context) error {
	if !n.active {
		return nil
	}
	ts := n.msgs[len(n.msgs)-1]
	n.active = false
	return n.r.a.retry(ctx, "chat.stopStream", func(ctx context.Context) error {
		_, _, err := n.r.a.api.StopStreamContext(ctx, n.r.t.Channel, ts)
		return err
	})
}

// Close ends the stream and makes the answer's messages say exactly
// final, without the writing mark: edited, added to or removed.
func (n *nativeAnswer) Close(ctx context.Context, final string) error {
	if n.fallback != nil {
		return n.fallback.Close(ctx, final)
	}
	if len(n.msgs) == 0 {
		// Nothing streamed (a short answer): said whole, the status
		// message becomes the answer in one edit.
		return n.r.a.say(ctx, n.r.t, final)
	}
	return n.r.a.lines.Finish(n.r.t.Key(), func(st *statusline.Line[learned]) error {
		placeholder := st.Clear()
		if err := n.stop(ctx); err != nil {
			return err
		}
		pieces := split(final, maxStreamChars)
		if strings.TrimSpace(final) == "" {
			pieces = nil
		}
		for i, p := range pieces {
			if i < len(n.msgs) {
				if err := n.r.a.update(ctx, n.r.t.Channel, n.msgs[i], message{markdown: p}); err != nil {
					return err
				}
				continue
			}
			if err := n.r.a.post(ctx, n.r.t, message{markdown: p}); err != nil {
				return err
			}
		}
		for _, ts := range n.msgs[min(len(pieces), len(n.msgs)):] {
			if err := n.r.a.deleteMessage(ctx, n.r.t.Channel, ts); err != nil {
				return err
			}
		}
		if placeholder != "" { // a status shown after the stream started
			return n.r.a.deleteMessage(ctx, n.r.t.Channel, placeholder)
		}
		return nil
	})
}

// Abort takes the answer back: its messages are deleted.
func (n *nativeAnswer) Abort(ctx context.Context) error {
	if n.fallback != nil {
		return n.fallback.Abort(ctx)
	}
	first := n.stop(ctx)
	for _, ts := range n.msgs {
		if err := n.r.a.deleteMessage(ctx, n.r.t.Channel, ts); err != nil && first == nil {
			first = err
		}
	}
	n.msgs, n.written, n.sent, n.curLen = nil, strings.Builder{}, 0, 0
	return first
}

// deleteMessage deletes the message at ts in channel.
func (a *Adapter) deleteMessage(ctx context.Context, channel, ts string) error {
	return a.retry(ctx, "chat.delete", func(ctx context.Context) error {
		_, _, err := a.api.DeleteMessageContext(ctx, channel, ts)
		return err
	})
}

// cutRunes returns the longest prefix of s of at most n bytes that ends on
// a rune boundary.
func cutRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
