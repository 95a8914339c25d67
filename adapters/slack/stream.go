package slack

import (
	"context"

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

// StreamAnswer shows an answer while it is written: with Slack's
// streaming methods wherever the workspace supports them (see
// nativeAnswer), else edited in place (editedAnswer).
func (r reporter) StreamAnswer(ctx context.Context) (core.AnswerStream, error) {
	noStream := false
	_ = r.a.lines.With(r.t.Key(), func(st *statusline.Line[learned]) error {
		noStream = st.Ext.noStream
		return nil
	})
	n := &nativeAnswer{r: r}
	if turn, ok := core.TurnFrom(ctx); ok {
		n.user = turn.Inbound.User
	}
	if noStream || n.user == "" && !assistantThread(r.t) {
		// A stream in a channel must name its reader; without a turn
		// there is nobody to name.
		return r.closing(r.editedAnswer()), nil
	}
	return r.closing(n), nil
}

// editedAnswer shows an answer in mrkdwn: the status message becomes the
// answer at once, then is edited in place at most once per StatusInterval
// (chat.update's rate limit allows about one a second); a long answer
// continues in new messages.
func (r reporter) editedAnswer() core.AnswerStream {
	return live.New(r.a.lines, r.t.Key(), threadMessages{a: r.a, t: r.t}, answerRender)
}

// answerRender renders answers in mrkdwn, split under the message limit.
var answerRender = live.Render{
	Final:   func(text string) []string { return split(mrkdwn(text), maxMessageChars) },
	Writing: func(text string) []string { return split(mrkdwn(text), streamLimit) },
	Mark:    writing,
}

// threadMessages are a thread's answer messages, for live.
type threadMessages struct {
	a *Adapter
	t core.Thread
}

func (m threadMessages) Post(ctx context.Context, content string) (string, error) {
	return m.a.postTS(ctx, m.t, textMessage(content))
}

// Edit shows content; no blocks, so a status message's block goes.
func (m threadMessages) Edit(ctx context.Context, ts, content string) error {
	return m.a.update(ctx, m.t.Channel, ts, message{text: content, blocks: noBlocks})
}

func (m threadMessages) Delete(ctx context.Context, ts string) error {
	return m.a.deleteMessage(ctx, m.t.Channel, ts)
}

// writing renders a piece of an unfinished answer: code blocks closed, and
// the writing mark.
func writing(piece string) string {
	if f := mdsplit.OpenFence(piece); f != "" {
		piece += "\n" + f
	}
	return piece + writingMark
}
