package agent

import (
	"context"
	"strings"
	"unicode"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
)

// stepper returns the turn's Reporter as a core.Stepper, if it is one.
func (tr *turn) stepper() (core.Stepper, bool) {
	s, ok := tr.reporter().(core.Stepper)
	return s, ok
}

// step shows one step of a call; a step that cannot be shown never stops
// the turn. Steps of concurrent calls go out one at a time.
func (tr *turn) step(ctx context.Context, s core.Stepper, c llm.ToolCall, state core.StepState, out outcome) {
	st := core.Step{ID: c.ID, Plan: tr.plan(), Title: StepTitle(c.Function.Name), State: state, Output: stepOutput(out.content)}
	tr.stepMu.Lock()
	defer tr.stepMu.Unlock()
	if err := s.Step(ctx, st); err != nil {
		tr.a.log.Debug().Err(err).Str("tool", c.Function.Name).Msg("agent: step not shown")
	}
}

// plan is the turn's title: the question's first line, shortened.
func (tr *turn) plan() string {
	q := strings.TrimSpace(tr.t.Inbound.Text)
	q, _, _ = strings.Cut(q, "\n")
	if r := []rune(q); len(r) > 60 {
		q = string(r[:59]) + "…"
	}
	if q == "" {
		return "Working on it"
	}
	return q
}

// StepTitle names a tool in words: "fs__read_file" is "Read file (fs)",
// "history_search" is "History search".
func StepTitle(tool string) string {
	server, name, ok := strings.Cut(tool, "__")
	if !ok {
		server, name = "", tool
	}
	words := strings.Fields(strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r == '.' || r == '/' {
			return ' '
		}
		return r
	}, name))
	if len(words) == 0 {
		return tool
	}
	title := strings.Join(words, " ")
	r := []rune(title)
	r[0] = unicode.ToUpper(r[0])
	title = string(r)
	if server != "" {
		title += " (" + server + ")"
	}
	return title
}

// stepOutput is a result's first non-empty line, without the "error: "
// the model reads, shortened to core.MaxStepOutput characters.
func stepOutput(content string) string {
	content = strings.TrimPrefix(strings.TrimSpace(content), "error: ")
	line := ""
	for l := range strings.SplitSeq(content, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			line = l
			break
		}
	}
	if r := []rune(line); len(r) > core.MaxStepOutput {
		line = string(r[:core.MaxStepOutput-1]) + "…"
	}
	return line
}
