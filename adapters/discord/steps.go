package discord

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/neobot/neobot/adapters/internal/perthread"
	"github.com/neobot/neobot/adapters/internal/statusline"
	"github.com/neobot/neobot/core"
)

var _ core.Stepper = reporter{}

// stepBoards are the threads' progress messages, one per turn while it
// calls tools.
type stepBoards = perthread.Map[stepBoard]

// stepBoard is one turn's progress message: a line per tool call, edited
// in place at most once per StatusInterval. It takes the place of the
// turn's status message, so the answer comes below it.
type stepBoard struct {
	mu      sync.Mutex
	id      string // the progress message; "" before the first step
	plan    string
	order   []string // step IDs in the order they started
	steps   map[string]core.Step
	shown   string      // the content last sent
	last    time.Time   // the last send or edit
	timer   *time.Timer // a paced edit waiting
	ended   bool
	handed  bool // the answer took the message over: it is no longer the steps'
	channel string
}

// stepMarks are how a step's state shows.
var stepMarks = map[core.StepState]string{core.StepRunning: "⏳", core.StepDone: "✅", core.StepFailed: "❌"}

// render is the progress message: the plan, then one line per step.
// b.mu is held.
func (b *stepBoard) render() string {
	var s strings.Builder
	s.WriteString("-# " + inert(oneLine(b.plan, 100)) + "\n")
	for _, id := range b.order {
		st := b.steps[id]
		s.WriteString(stepMarks[st.State] + " " + inert(oneLine(st.Title, 80)))
		if st.Output != "" {
			s.WriteString(" — " + inert(oneLine(st.Output, core.MaxStepOutput)))
		}
		s.WriteString("\n")
	}
	out := strings.TrimRight(s.String(), "\n")
	if r := []rune(out); len(r) > sayLimit {
		out = string(r[:sayLimit-1]) + "…"
	}
	return out
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}

// Step shows a tool call as a line of the turn's progress message.
func (r reporter) Step(ctx context.Context, s core.Step) error {
	b := r.a.steps.Get(r.t.Key())
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended {
		return nil
	}
	if _, ok := b.steps[s.ID]; !ok {
		b.order = append(b.order, s.ID)
	}
	if b.steps == nil {
		b.steps = map[string]core.Step{}
	}
	b.steps[s.ID], b.plan, b.channel = s, s.Plan, r.t.ID
	if b.id == "" {
		return r.startSteps(ctx, b)
	}
	wait := r.a.opts.StatusInterval - time.Since(b.last)
	if wait <= 0 {
		return r.showSteps(ctx, b)
	}
	r.schedule(b, wait)
	return nil
}

// startSteps makes the turn's status message the progress message, or
// posts one. b.mu is held.
func (r reporter) startSteps(ctx context.Context, b *stepBoard) error {
	content := b.render()
	return r.a.lines.With(r.t.Key(), func(st *statusline.Line[struct{}]) error {
		if placeholder := st.Clear(); placeholder != "" {
			if err := r.a.edit(ctx, &discordgo.MessageEdit{Channel: r.t.ID, ID: placeholder, Content: &content}); err == nil {
				b.id, b.shown, b.last = placeholder, content, time.Now()
				return nil
			}
		}
		m, err := r.a.send(ctx, r.t.ID, &discordgo.MessageSend{Content: content, AllowedMentions: &discordgo.MessageAllowedMentions{}})
		if err != nil {
			return err
		}
		b.id, b.shown, b.last = m.ID, content, time.Now()
		return nil
	})
}

// showSteps edits the progress message, if it changed. b.mu is held.
func (r reporter) showSteps(ctx context.Context, b *stepBoard) error {
	content := b.render()
	if content == b.shown {
		return nil
	}
	b.shown, b.last = content, time.Now()
	return r.a.edit(ctx, &discordgo.MessageEdit{Channel: b.channel, ID: b.id, Content: &content})
}

// schedule shows the steps once the pace allows. b.mu is held.
func (r reporter) schedule(b *stepBoard, wait time.Duration) {
	if b.timer != nil {
		return
	}
	b.timer = time.AfterFunc(wait, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.timer = nil
		if b.handed {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), submitTimeout)
		defer cancel()
		if err := r.showSteps(ctx, b); err != nil {
			r.a.log.Warn().Err(err).Str("thread", r.t.Key()).Msg("discord: show steps")
		}
	})
}

// endSteps ends the turn's progress message: its last state shows now,
// or as soon as the pace allows.
func (r reporter) endSteps(ctx context.Context) {
	b := r.a.steps.Take(r.t.Key())
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ended = true
	if b.id == "" || b.timer != nil {
		return // the timer shows the last state
	}
	if wait := r.a.opts.StatusInterval - time.Since(b.last); wait > 0 {
		r.schedule(b, wait)
		return
	}
	if err := r.showSteps(ctx, b); err != nil {
		r.a.log.Warn().Err(err).Str("thread", r.t.Key()).Msg("discord: show steps")
	}
}

// handOver gives the turn's progress message, if it has one, to the
// thread's status line when the answer starts: the answer replaces the
// progress lines in that message, one message for the whole turn.
func (r reporter) handOver(ctx context.Context) {
	b := r.a.steps.Take(r.t.Key())
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ended, b.handed = true, true
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	if b.id == "" {
		return
	}
	_ = r.a.lines.With(r.t.Key(), func(st *statusline.Line[struct{}]) error {
		if placeholder := st.Clear(); placeholder != "" && placeholder != b.id {
			if err := r.a.s.ChannelMessageDelete(r.t.ID, placeholder, call(ctx)); err != nil {
				r.a.log.Warn().Err(err).Str("thread", r.t.Key()).Msg("discord: delete status message")
			}
		}
		st.Posted(b.id)
		return nil
	})
}

// showsSteps reports whether thread key's progress message is showing:
// the status line then stays in it, with no message of its own.
func showsSteps(b *stepBoards, key string) bool {
	s := b.Peek(key)
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id != "" && !s.ended
}
