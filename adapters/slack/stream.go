package slack

import (
	"context"
	"encoding/json"

	"github.com/neobot/neobot/adapters/internal/live"
	"github.com/neobot/neobot/adapters/internal/mdsplit"
	"github.com/neobot/neobot/adapters/internal/statusline"
	"github.com/neobot/neobot/core"
)

// writingMark ends every message of an answer still being written, so a
// process that restarts mid-answer finds the unfinished messages and
// removes them (see Tidy) before the resumed turn answers again.
const writingMark = "\n_:writing_hand: writing…_"

// streamLimit keeps a message, a closing fence and the writing mark under
// the message limit.
const streamLimit = maxMessageChars - len(writingMark) - len("\n```")

// StreamAnswer shows an answer in thread t while it is written: with
// Slack's streaming methods wherever the workspace supports them, in the
// turn's message (nativeAnswer), else edited in place (editedAnswer).
func (a *Adapter) StreamAnswer(ctx context.Context, t core.Thread) (core.AnswerStream, error) {
	noStream := false
	_ = a.lines.With(t.Key(), func(st *statusline.Line[learned]) error {
		noStream = st.Ext.noStream
		return nil
	})
	b := a.steps.Get(t.Key())
	b.Lock()
	n := &nativeAnswer{a: a, t: t, b: b, first: len(b.msgs)}
	b.Unlock()
	user := ""
	if turn, ok := core.TurnFrom(ctx); ok {
		user = turn.Inbound.User
	}
	if noStream || user == "" && !assistantThread(t) {
		// A stream in a channel must name its reader; without a turn
		// there is nobody to name.
		n.fallback = a.editedAnswer(ctx, t)
	}
	return n, nil
}

// editedAnswer shows an answer in mrkdwn: the status message becomes the
// answer at once, then is edited in place at most once per StatusInterval
// (chat.update's rate limit allows about one a second); a long answer
// continues in new messages, and the last carries the feedback buttons.
func (a *Adapter) editedAnswer(ctx context.Context, t core.Thread) core.AnswerStream {
	rate, _ := a.feedbackTurn(ctx)
	return live.New(a.lines, t.Key(), threadMessages{a: a, t: t, rate: rate}, answerRender)
}

// answerRender renders answers in mrkdwn, split under the message limit.
var answerRender = live.Cut(mrkdwn, split, maxMessageChars, streamLimit, writing)

// threadMessages are a thread's answer messages, for live; the last
// carries the feedback buttons for turn rate ("" for none).
type threadMessages struct {
	a    *Adapter
	t    core.Thread
	rate string
}

var _ live.Finisher = threadMessages{}

func (m threadMessages) Post(ctx context.Context, content string) (string, error) {
	return m.a.postTS(ctx, m.t, textMessage(content))
}

// Edit shows content; no blocks, so a status message's block goes.
func (m threadMessages) Edit(ctx context.Context, ts, content string) error {
	return m.a.update(ctx, m.t.Channel, ts, message{text: content, blocks: noBlocks})
}

// PostLast posts the answer's last message: content with the feedback
// buttons under it.
func (m threadMessages) PostLast(ctx context.Context, content string) (string, error) {
	return m.a.postTS(ctx, m.t, m.last(content))
}

// EditLast edits a message into the answer's last one.
func (m threadMessages) EditLast(ctx context.Context, ts, content string) error {
	return m.a.update(ctx, m.t.Channel, ts, m.last(content))
}

// last renders the answer's last message: content as section blocks (a
// message with blocks shows only them) and the feedback buttons.
func (m threadMessages) last(content string) message {
	if m.rate == "" {
		return message{text: content, blocks: noBlocks}
	}
	return message{text: content, blocks: answerBlocks(content, m.rate)}
}

func (m threadMessages) Delete(ctx context.Context, ts string) error {
	return m.a.deleteMessage(ctx, m.t.Channel, ts)
}

// answerBlocks is a JSON array of section blocks showing content, mrkdwn
// (a section holds 3,000 characters), then the feedback block for turn
// rate; built by hand, as contextBlocks is.
func answerBlocks(content, rate string) string {
	out := make([]byte, 0, len(content)+600)
	out = append(out, '[')
	for _, piece := range split(content, maxSectionChars) {
		q, _ := json.Marshal(piece) // a string always encodes
		out = append(out, `{"type":"section","text":{"type":"mrkdwn","text":`...)
		out = append(out, q...)
		out = append(out, "}},"...)
	}
	fb := feedbackJSON(rate)
	out = append(out, fb[1:]...) // without its opening bracket
	return string(out)
}

// maxSectionChars is the most text a section block holds.
const maxSectionChars = 3000

// writing renders a piece of an unfinished answer: code blocks closed, and
// the writing mark.
func writing(piece string) string {
	if f := mdsplit.OpenFence(piece); f != "" {
		piece += "\n" + f
	}
	return piece + writingMark
}
