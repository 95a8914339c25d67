package slack

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/neobot/neobot/adapters/internal/live"
	"github.com/neobot/neobot/core"
)

var _ core.Stepper = reporter{}

// errNoRecipient: a stream in a channel must name its reader, and no
// turn names one.
var errNoRecipient = errors.New("slack: no reader to stream to in this channel")

// stepBoards are the threads' step messages, one per turn while it calls
// tools.
type stepBoards struct {
	mu sync.Mutex
	m  map[string]*stepBoard // by thread key
}

// stepBoard is one turn's steps, shown as task cards in a message streamed
// with Slack's chunks: chat.startStream at the first step with the turn's
// plan_update, then chat.appendStream of the task_updates that came since,
// at most once per StatusInterval, and chat.stopStream when the turn
// answers. Where Slack refuses the stream, the steps show on the status
// line instead.
type stepBoard struct {
	mu      sync.Mutex
	ts      string // the streamed message; "" before the first step
	noCards bool   // streaming refused: the status line shows the steps
	pending []slack.StreamChunk
	last    time.Time   // the last stream call
	timer   *time.Timer // a paced append waiting
	ended   bool
}

func (b *stepBoards) get(key string) *stepBoard {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[string]*stepBoard{}
	}
	s := b.m[key]
	if s == nil {
		s = &stepBoard{}
		b.m[key] = s
	}
	return s
}

func (b *stepBoards) take(key string) *stepBoard {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.m[key]
	delete(b.m, key)
	return s
}

// Step shows a tool call as a task card in the turn's step message.
func (r reporter) Step(ctx context.Context, s core.Step) error {
	b := r.a.steps.get(r.t.Key())
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended {
		return nil
	}
	if b.noCards {
		return r.stepStatus(ctx, s)
	}
	task := slack.TaskUpdateChunk{Type: slack.StreamChunkTaskUpdate, ID: s.ID, Title: s.Title,
		Status: slack.TaskCardStatus(s.State), Output: s.Output}
	if b.ts == "" {
		if err := r.startSteps(ctx, b, s.Plan, task); err != nil {
			r.a.log.Debug().Err(err).Str("thread", r.t.Key()).Msg("slack: no task cards here; steps go on the status line")
			b.noCards = true
			return r.stepStatus(ctx, s)
		}
		return nil
	}
	b.pending = append(b.pending, task)
	wait := r.a.opts.StatusInterval - time.Since(b.last)
	if wait <= 0 {
		return r.flushSteps(ctx, b)
	}
	if b.timer == nil {
		b.timer = time.AfterFunc(wait, func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.timer = nil
			if b.ended {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), submitTimeout)
			defer cancel()
			if err := r.flushSteps(ctx, b); err != nil {
				r.a.log.Warn().Err(err).Str("thread", r.t.Key()).Msg("slack: show steps")
			}
		})
	}
	return nil
}

// stepStatus shows a step on the status line, where task cards are not
// available.
func (r reporter) stepStatus(ctx context.Context, s core.Step) error {
	if s.State != core.StepRunning {
		return nil
	}
	return r.a.status(ctx, r.t, s.Title+"…")
}

// startSteps opens the step message with the turn's plan and first task.
func (r reporter) startSteps(ctx context.Context, b *stepBoard, plan string, task slack.TaskUpdateChunk) error {
	user := ""
	if turn, ok := core.TurnFrom(ctx); ok {
		user = turn.Inbound.User
	}
	if user == "" && !assistantThread(r.t) {
		return errNoRecipient
	}
	opts := []slack.MsgOption{slack.MsgOptionTS(r.t.ID), slack.MsgOptionTaskDisplayMode(slack.TaskDisplayModePlan),
		slack.MsgOptionChunks(slack.NewPlanUpdateChunk(plan), task)}
	if !assistantThread(r.t) {
		opts = append(opts, slack.MsgOptionRecipientTeamID(r.t.Workspace), slack.MsgOptionRecipientUserID(user))
	}
	var ts string
	err := r.a.retry(ctx, "chat.startStream", func(ctx context.Context) (err error) {
		_, ts, err = r.a.api.StartStreamContext(ctx, r.t.Channel, opts...)
		return err
	})
	if err != nil {
		return err
	}
	b.ts, b.last = ts, time.Now()
	return nil
}

// flushSteps appends the task updates that came since the last call.
// b.mu is held.
func (r reporter) flushSteps(ctx context.Context, b *stepBoard) error {
	if len(b.pending) == 0 {
		return nil
	}
	chunks := b.pending
	b.pending = nil
	b.last = time.Now()
	return r.a.retry(ctx, "chat.appendStream", func(ctx context.Context) error {
		_, _, err := r.a.api.AppendStreamContext(ctx, r.t.Channel, b.ts, slack.MsgOptionChunks(chunks...))
		return err
	})
}

// endSteps ends the turn's step message, if it has one, with the updates
// still waiting: the cards stay in the thread above the answer.
func (r reporter) endSteps(ctx context.Context) {
	b := r.a.steps.take(r.t.Key())
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ended = true
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	if b.ts == "" {
		return
	}
	var opts []slack.MsgOption
	if len(b.pending) > 0 {
		opts = append(opts, slack.MsgOptionChunks(b.pending...))
		b.pending = nil
	}
	err := r.a.retry(ctx, "chat.stopStream", func(ctx context.Context) error {
		_, _, err := r.a.api.StopStreamContext(ctx, r.t.Channel, b.ts, opts...)
		return err
	})
	if err != nil {
		r.a.log.Warn().Err(err).Str("thread", r.t.Key()).Msg("slack: end the steps")
	}
}

// closing wraps an answer stream so the turn's steps end before the
// answer is final and the feedback buttons come after it.
func (r reporter) closing(s core.AnswerStream) core.AnswerStream {
	return live.Closing{AnswerStream: s, Before: r.endSteps, After: r.offerFeedback}
}
