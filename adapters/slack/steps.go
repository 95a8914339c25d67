package slack

import (
	"context"
	"errors"
	"strings"

	"github.com/slack-go/slack"

	"github.com/neobot/neobot/adapters/internal/progress"
	"github.com/neobot/neobot/adapters/internal/statusline"
	"github.com/neobot/neobot/core"
)

// errNoRecipient: a stream in a channel must name its reader, and no
// turn names one.
var errNoRecipient = errors.New("slack: no reader to stream to in this channel")

// stepBoards are the threads' turn messages, one per turn that streams.
type stepBoards = progress.Boards[stepBoard, *stepBoard]

// stepBoard is one turn's answer message, streamed with Slack's chunks:
// the turn's task cards (a plan_update, then task_updates), the answer's
// words as they come (markdown_text), and, when the answer is final, the
// feedback buttons (chat.stopStream's blocks, shown at the bottom of the
// finished message). chat.startStream opens it at the first step or the
// first words, chat.appendStream adds what came since at most once per
// StatusInterval, chat.stopStream ends it. An answer too long for one
// message continues in new streamed messages; the buttons go on the last.
// Where Slack refuses the stream, the steps show on the status line and
// the answer is edited in place (live).
type stepBoard struct {
	progress.Board
	msgs    []string // the streamed messages, in order; the last is open while ts != ""
	ts      string   // the open stream; "" when none is
	length  int      // markdown bytes streamed into the open message
	cards   bool     // the open message shows task cards: it is never taken back
	marked  bool     // the open message is an answer of its own, marked as being written
	noCards bool     // streaming refused: the status line shows the steps
	pending []slack.StreamChunk
}

// Step shows a tool call as a task card in the message of thread t's
// turn.
func (a *Adapter) Step(ctx context.Context, t core.Thread, s core.Step) error {
	b := a.steps.Open(t.Key())
	if b == nil {
		return nil
	}
	defer b.Unlock()
	if b.noCards {
		return a.stepStatus(ctx, t, s)
	}
	task := slack.TaskUpdateChunk{Type: slack.StreamChunkTaskUpdate, ID: s.ID, Title: s.Title,
		Status: slack.TaskCardStatus(s.State), Output: s.Output}
	if b.ts == "" {
		if err := a.startStream(ctx, t, b, slack.NewPlanUpdateChunk(s.Plan), task); err != nil {
			a.log.Debug().Err(err).Str("thread", t.Key()).Msg("slack: no task cards here; steps go on the status line")
			b.noCards = true
			return a.stepStatus(ctx, t, s)
		}
		b.cards = true
		return nil
	}
	b.cards = true
	b.pending = append(b.pending, task)
	return a.steps.Show(ctx, t.Key(), b, func(ctx context.Context) error {
		if b.Ended() || b.ts == "" {
			return nil // the stream ended with the updates still waiting
		}
		return a.flushSteps(ctx, t, b)
	})
}

// stepStatus shows a step on the status line, where task cards are not
// available.
func (a *Adapter) stepStatus(ctx context.Context, t core.Thread, s core.Step) error {
	if s.State != core.StepRunning {
		return nil
	}
	return a.Status(ctx, t, s.Title+"…")
}

// startStream opens a streamed message in the thread with chunks, for
// the turn's requester. b is locked.
func (a *Adapter) startStream(ctx context.Context, t core.Thread, b *stepBoard, chunks ...slack.StreamChunk) error {
	user := ""
	if turn, ok := core.TurnFrom(ctx); ok {
		user = turn.Inbound.User
	}
	if user == "" && !assistantThread(t) {
		return errNoRecipient
	}
	opts := []slack.MsgOption{slack.MsgOptionTS(t.ID), slack.MsgOptionTaskDisplayMode(slack.TaskDisplayModePlan),
		slack.MsgOptionChunks(chunks...)}
	if user != "" {
		opts = append(opts, slack.MsgOptionRecipientTeamID(t.Workspace), slack.MsgOptionRecipientUserID(user))
	}
	var ts string
	err := a.retry(ctx, "chat.startStream", func(ctx context.Context) (err error) {
		_, ts, err = a.api.StartStreamContext(ctx, t.Channel, opts...)
		return err
	})
	if err != nil {
		return err
	}
	b.ts, b.msgs, b.cards, b.length = ts, append(b.msgs, ts), false, markdownLen(chunks)
	b.Shown()
	if b.marked { // a long answer of its own goes on, marked too
		b.length += len(streamMark)
	}
	return nil
}

// markdownLen is the length of the chunks' markdown text.
func markdownLen(chunks []slack.StreamChunk) int {
	n := 0
	for _, c := range chunks {
		if m, ok := c.(slack.MarkdownTextChunk); ok {
			n += len(m.Text)
		}
	}
	return n
}

// markdownChunk is a markdown_text chunk of text.
func markdownChunk(text string) slack.StreamChunk {
	return slack.MarkdownTextChunk{Type: slack.StreamChunkMarkdownText, Text: text}
}

// flushSteps appends the task updates that came since the last call,
// then chunks. b is locked.
func (a *Adapter) flushSteps(ctx context.Context, t core.Thread, b *stepBoard, chunks ...slack.StreamChunk) error {
	chunks = append(b.pending, chunks...)
	if len(chunks) == 0 {
		return nil
	}
	b.pending = nil
	b.Shown()
	err := a.retry(ctx, "chat.appendStream", func(ctx context.Context) error {
		_, _, err := a.api.AppendStreamContext(ctx, t.Channel, b.ts, slack.MsgOptionChunks(chunks...))
		return err
	})
	if err == nil {
		b.length += markdownLen(chunks)
	}
	return err
}

// stopStream ends the open stream with the updates still waiting, then
// chunks, and blocks at the bottom of the finished message. b is locked.
func (a *Adapter) stopStream(ctx context.Context, t core.Thread, b *stepBoard, blocks []slack.Block, chunks ...slack.StreamChunk) error {
	b.Stop()
	if b.ts == "" {
		return nil
	}
	ts := b.ts
	chunks = append(b.pending, chunks...)
	b.pending, b.ts = nil, ""
	var opts []slack.MsgOption
	if len(chunks) > 0 {
		opts = append(opts, slack.MsgOptionChunks(chunks...))
	}
	if len(blocks) > 0 {
		opts = append(opts, slack.MsgOptionBlocks(blocks...))
	}
	return a.retry(ctx, "chat.stopStream", func(ctx context.Context) error {
		_, _, err := a.api.StopStreamContext(ctx, t.Channel, ts, opts...)
		return err
	})
}

// streamMarkdown streams markdown (tables already aligned) into the
// turn's open message, at once; past a message's limit the answer
// continues in new streamed messages. With end, the last message is
// finished too, blocks (the feedback buttons) at its bottom. b is locked.
func (a *Adapter) streamMarkdown(ctx context.Context, t core.Thread, b *stepBoard, markdown string, end bool, blocks []slack.Block) error {
	for {
		if room := maxStreamChars - b.length; len(markdown) <= room {
			var chunks []slack.StreamChunk
			if strings.TrimSpace(markdown) != "" {
				chunks = append(chunks, markdownChunk(markdown))
			}
			if end {
				return a.stopStream(ctx, t, b, blocks, chunks...)
			}
			return a.flushSteps(ctx, t, b, chunks...)
		}
		head := fitting(markdown, maxStreamChars-b.length)
		var chunks []slack.StreamChunk
		if strings.TrimSpace(head) != "" {
			chunks = append(chunks, markdownChunk(head))
		}
		if err := a.stopStream(ctx, t, b, nil, chunks...); err != nil {
			return err
		}
		rest := strings.TrimLeft(markdown[len(head):], "\n")
		mark, room := "", maxStreamChars
		if b.marked {
			mark, room = streamMark, maxStreamChars-len(streamMark)
		}
		first := fitting(rest, room)
		if first == "" {
			first = cutRunes(rest, room)
		}
		if err := a.startStream(ctx, t, b, markdownChunk(mark+first)); err != nil {
			return err
		}
		markdown = rest[len(first):]
	}
}

// fitting returns the longest start of markdown that split would make a
// message of at most room bytes, "" when none fits.
func fitting(markdown string, room int) string {
	if room <= 0 {
		return ""
	}
	head := split(markdown, room)[0]
	if len(head) > room || !strings.HasPrefix(markdown, head) {
		return cutRunes(markdown, room)
	}
	return head
}

// endSteps ends the turn's message, if it has one, without an answer: the
// cards stay in the thread, and a notice follows.
func (a *Adapter) endSteps(ctx context.Context, t core.Thread) {
	b := a.steps.End(t.Key())
	if b == nil {
		return
	}
	defer b.Unlock()
	if err := a.stopStream(ctx, t, b, nil); err != nil {
		a.log.Warn().Err(err).Str("thread", t.Key()).Msg("slack: end the steps")
	}
}

// sayInSteps says text, a whole answer, in the turn's message when the
// turn's cards opened one, with the feedback buttons, and reports whether
// it did. The status line goes once the message is finished.
func (a *Adapter) sayInSteps(ctx context.Context, t core.Thread, text string) (bool, error) {
	b := a.steps.End(t.Key())
	if b == nil {
		return false, nil
	}
	defer b.Unlock()
	if b.ts == "" {
		return false, nil
	}
	if err := a.streamMarkdown(ctx, t, b, tables(text), true, a.feedbackBlocks(ctx)); err != nil {
		return true, err
	}
	return true, a.clearStatus(ctx, t, true)
}

// feedbackBlocks are the blocks that end the turn's answer: the feedback
// buttons, when there is a turn to rate.
func (a *Adapter) feedbackBlocks(ctx context.Context) []slack.Block {
	if id, ok := a.feedbackTurn(ctx); ok {
		return []slack.Block{feedbackBlock(id)}
	}
	return nil
}

// clearStatus deletes the thread's status message, if one shows; with
// finish the turn's status line ends too: its message says all now.
func (a *Adapter) clearStatus(ctx context.Context, t core.Thread, finish bool) error {
	clear := func(st *statusline.Line[learned]) error {
		if placeholder := st.Clear(); placeholder != "" {
			return a.deleteMessage(ctx, t.Channel, placeholder)
		}
		return nil
	}
	if finish {
		return a.lines.Finish(t.Key(), clear)
	}
	return a.lines.With(t.Key(), clear)
}
