package discord

import (
	"context"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/neobot/neobot/adapters/internal/progress"
	"github.com/neobot/neobot/adapters/internal/statusline"
	"github.com/neobot/neobot/core"
)

// stepBoards are the threads' progress messages, one per turn while it
// calls tools.
type stepBoards = progress.Boards[stepBoard, *stepBoard]

// stepBoard is one turn's progress message: a line per tool call, edited
// in place at most once per StatusInterval. It takes the place of the
// turn's status message, so the answer comes below it.
type stepBoard struct {
	progress.Board
	id      string // the progress message; "" before the first step
	plan    string
	order   []string // step IDs in the order they started
	steps   map[string]core.Step
	shown   string // the content last sent
	handed  bool   // the answer took the message over: it is no longer the steps'
	channel string
}

// stepMarks are how a step's state shows.
var stepMarks = map[core.StepState]string{core.StepRunning: "⏳", core.StepDone: "✅", core.StepFailed: "❌"}

// render is the progress message: the plan, then one line per step.
// b is locked.
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

// Step shows a tool call as a line of the progress message of thread t's
// turn.
func (a *Adapter) Step(ctx context.Context, t core.Thread, s core.Step) error {
	b := a.steps.Open(t.Key())
	if b == nil {
		return nil
	}
	defer b.Unlock()
	if _, ok := b.steps[s.ID]; !ok {
		b.order = append(b.order, s.ID)
	}
	if b.steps == nil {
		b.steps = map[string]core.Step{}
	}
	b.steps[s.ID], b.plan, b.channel = s, s.Plan, t.ID
	if b.id == "" {
		return a.startSteps(ctx, t, b)
	}
	return a.steps.Show(ctx, t.Key(), b, func(ctx context.Context) error { return a.showSteps(ctx, t, b) })
}

// startSteps makes the turn's status message the progress message, or
// posts one. b is locked.
func (a *Adapter) startSteps(ctx context.Context, t core.Thread, b *stepBoard) error {
	content := b.render()
	return a.lines.With(t.Key(), func(st *statusline.Line[struct{}]) error {
		if placeholder := st.Clear(); placeholder != "" {
			if err := a.edit(ctx, &discordgo.MessageEdit{Channel: t.ID, ID: placeholder, Content: &content}); err == nil {
				b.id, b.shown = placeholder, content
				b.Shown()
				return nil
			}
		}
		m, err := a.send(ctx, t.ID, &discordgo.MessageSend{Content: content, AllowedMentions: &discordgo.MessageAllowedMentions{}})
		if err != nil {
			return err
		}
		b.id, b.shown = m.ID, content
		b.Shown()
		return nil
	})
}

// showSteps edits the progress message, if it changed and is still the
// steps'. b is locked.
func (a *Adapter) showSteps(ctx context.Context, t core.Thread, b *stepBoard) error {
	content := b.render()
	if b.handed || content == b.shown {
		return nil
	}
	b.shown = content
	b.Shown()
	return a.edit(ctx, &discordgo.MessageEdit{Channel: b.channel, ID: b.id, Content: &content})
}

// endSteps ends the turn's progress message: its last state shows now,
// or as soon as the pace allows.
func (a *Adapter) endSteps(ctx context.Context, t core.Thread) {
	b := a.steps.End(t.Key())
	if b == nil {
		return
	}
	defer b.Unlock()
	if b.id == "" {
		return
	}
	if err := a.steps.Show(ctx, t.Key(), b, func(ctx context.Context) error { return a.showSteps(ctx, t, b) }); err != nil {
		a.log.Warn().Err(err).Str("thread", t.Key()).Msg("discord: show steps")
	}
}

// handOver gives the turn's progress message, if it has one, to the
// thread's status line when the answer starts: the answer replaces the
// progress lines in that message, one message for the whole turn.
func (a *Adapter) handOver(ctx context.Context, t core.Thread) {
	b := a.steps.End(t.Key())
	if b == nil {
		return
	}
	defer b.Unlock()
	b.handed = true
	b.Stop()
	if b.id == "" {
		return
	}
	_ = a.lines.With(t.Key(), func(st *statusline.Line[struct{}]) error {
		if placeholder := st.Clear(); placeholder != "" && placeholder != b.id {
			if err := a.s.ChannelMessageDelete(t.ID, placeholder, call(ctx)); err != nil {
				a.log.Warn().Err(err).Str("thread", t.Key()).Msg("discord: delete status message")
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
	s.Lock()
	defer s.Unlock()
	return s.id != "" && !s.Ended()
}
