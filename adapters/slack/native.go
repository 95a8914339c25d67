package slack

import (
	"context"
	"strings"

	"github.com/neobot/neobot/adapters/internal/live"
	"github.com/neobot/neobot/adapters/internal/statusline"
	"github.com/neobot/neobot/core"
)

// streamMark opens every message of an answer streamed on its own (no
// task cards above it) while it is written, so a process that restarts
// mid-answer finds the unfinished messages and removes them (see Tidy).
// Close rewrites the messages without it.
const streamMark = "_:writing_hand: writing…_\n\n"

// nativeAnswer is an answer shown with Slack's streaming methods. After
// the turn's task cards it goes into their message (stepBoard): the
// words are appended as they come, the rest and the feedback buttons
// (chat.stopStream's blocks) when it is final, and the status message,
// kept above while the turn runs so a crash leaves a mark for Tidy, goes.
// Without cards it starts a streamed message of its own, marked as being
// written, in place of the status message; Close stops the stream and
// edits the message into exactly the final text, with the buttons. The
// first words show at once, later ones at most once per StatusInterval;
// a table is held back until it is whole (its columns are aligned once).
// Where the workspace or channel refuses streaming, the answer is edited
// in place instead (live), and the thread remembers not to try again.
type nativeAnswer struct {
	a *Adapter
	t core.Thread
	b *stepBoard

	written  strings.Builder
	sent     int    // bytes of written streamed
	shown    string // the markdown streamed for them, tables aligned
	first    int    // the first of b.msgs this answer started
	fallback core.AnswerStream
}

// Write appends text. The first words start or extend the stream at
// once; later ones are appended at the status line's pace.
func (n *nativeAnswer) Write(ctx context.Context, text string) error {
	if n.fallback != nil {
		return n.fallback.Write(ctx, text)
	}
	n.written.WriteString(text)
	b := n.b
	b.Lock()
	defer b.Unlock()
	if b.Ended() {
		return nil
	}
	if b.ts != "" && n.sent > 0 && !n.a.steps.Due(b) {
		return nil
	}
	ready := streamable(n.written.String())
	if ready <= n.sent {
		return nil
	}
	full := tables(n.written.String()[:ready])
	md := strings.TrimPrefix(full, n.shown)
	if b.ts == "" {
		head := cutRunes(md, maxStreamChars-len(streamMark))
		if err := n.a.startStream(ctx, n.t, b, markdownChunk(streamMark+head)); err != nil {
			n.a.log.Debug().Err(err).Str("thread", n.t.Key()).Msg("slack: streaming not available here; editing the answer in place")
			_ = n.a.lines.With(n.t.Key(), func(st *statusline.Line[learned]) error {
				st.Ext.noStream = true
				return nil
			})
			n.fallback = n.a.editedAnswer(ctx, n.t)
			return n.fallback.Write(ctx, n.written.String())
		}
		b.marked = true
		md = md[len(head):]
		if err := n.a.clearStatus(ctx, n.t, false); err != nil {
			return err
		}
	}
	if err := n.a.streamMarkdown(ctx, n.t, b, md, false, nil); err != nil {
		return err
	}
	n.sent, n.shown = ready, full
	return nil
}

// Close appends what the stream does not show yet of final and stops the
// stream with the feedback buttons; the status message goes. An answer
// that never streamed a word is said whole (Say): the status message
// becomes it in one edit.
func (n *nativeAnswer) Close(ctx context.Context, final string) error {
	if n.fallback != nil {
		n.a.steps.Take(n.t.Key())
		return n.fallback.Close(ctx, final)
	}
	b := n.b
	b.Lock()
	if b.ts == "" || n.sent == 0 {
		b.Unlock()
		return n.a.Say(ctx, n.t, final)
	}
	n.a.steps.Take(n.t.Key())
	defer b.Unlock()
	b.End()
	if b.marked {
		// An answer of its own: its messages are rewritten without the
		// mark, exactly the final text, the buttons on the last.
		if err := n.a.stopStream(ctx, n.t, b, nil); err != nil {
			return err
		}
		rate, _ := n.a.feedbackTurn(ctx)
		own := b.msgs[min(n.first, len(b.msgs)):]
		if err := live.Replace(ctx, threadMessages{a: n.a, t: n.t, rate: rate}, own, answerRender.Final(final)); err != nil {
			return err
		}
		return n.a.clearStatus(ctx, n.t, true)
	}
	target := tables(final)
	rest, ok := strings.CutPrefix(target, n.shown)
	if !ok && strings.TrimSpace(target) != strings.TrimSpace(n.shown) {
		// The stored answer differs from the words streamed after the
		// cards: the cards' message ends, and the answer is said whole.
		if err := n.a.stopStream(ctx, n.t, b, nil); err != nil {
			return err
		}
		return n.a.say(ctx, n.t, final)
	}
	if err := n.a.streamMarkdown(ctx, n.t, b, rest, true, n.a.feedbackBlocks(ctx)); err != nil {
		return err
	}
	return n.a.clearStatus(ctx, n.t, true)
}

// Abort takes the answer back: its streamed messages are deleted, unless
// the turn's task cards share the message; the words then stay between
// the cards, as the model said them before calling more tools.
func (n *nativeAnswer) Abort(ctx context.Context) error {
	if n.fallback != nil {
		return n.fallback.Abort(ctx)
	}
	b := n.b
	b.Lock()
	defer b.Unlock()
	n.written, n.sent, n.shown = strings.Builder{}, 0, ""
	if b.ts == "" || !b.marked {
		return nil // the cards' message keeps the words
	}
	first := n.a.stopStream(ctx, n.t, b, nil)
	if err := n.deleteOwn(ctx, b); err != nil && first == nil {
		first = err
	}
	return first
}

// deleteOwn deletes the streamed messages this answer started. b is
// locked.
func (n *nativeAnswer) deleteOwn(ctx context.Context, b *stepBoard) error {
	var first error
	for _, ts := range b.msgs[min(n.first, len(b.msgs)):] {
		if err := n.a.deleteMessage(ctx, n.t.Channel, ts); err != nil && first == nil {
			first = err
		}
	}
	b.msgs, b.marked = b.msgs[:min(n.first, len(b.msgs))], false
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
