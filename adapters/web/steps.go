package web

import (
	"context"

	"github.com/neobot/neobot/core"
)

var _ core.Stepper = reporter{}

// stepData is a step as the event stream shows it: a tool call, named in
// words, never with its arguments.
type stepData struct {
	ID     string `json:"id"`
	Plan   string `json:"plan"`
	Title  string `json:"title"`
	State  string `json:"state"` // in_progress, complete or error
	Output string `json:"output,omitempty"`
}

// Step publishes a step event: a tool call as it starts and as it ends,
// for the page to show as a collapsible step.
func (r reporter) Step(ctx context.Context, s core.Step) error {
	r.a.echoTurn(ctx, r.t.ID)
	r.a.show(r.t.ID, EventStep, stepData{ID: s.ID, Plan: s.Plan, Title: s.Title, State: string(s.State), Output: s.Output})
	return nil
}
