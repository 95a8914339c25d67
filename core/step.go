package core

import "context"

// Stepper is a Reporter that shows each tool call as a step the user can
// watch: a task card in Slack, a line of a progress message in Discord, an
// event on the web, a line in the terminal. A Reporter that is not one
// shows tool calls as its status line. Steps never carry a call's
// arguments nor the model's reasoning.
type Stepper interface {
	// Step shows a step as it starts and again as it ends; updates of
	// one step share its ID. Calls for one turn come one at a time.
	Step(ctx context.Context, s Step) error
}

// StepState is where a step is.
type StepState string

// The states of a step, named as Slack's task cards name them.
const (
	StepRunning StepState = "in_progress"
	StepDone    StepState = "complete"
	StepFailed  StepState = "error"
)

// Step is one tool call, as the user sees it.
type Step struct {
	// ID is the tool call's ID.
	ID string
	// Plan is the turn's title: what the steps are for.
	Plan string
	// Title names the tool in words ("Read file (fs)").
	Title string
	// State is where the step is.
	State StepState
	// Output is the tool's short output once the step ended: one line,
	// at most MaxStepOutput characters.
	Output string
}

// MaxStepOutput bounds a step's Output in characters.
const MaxStepOutput = 160

type stepProgressKey struct{}

// WithStepProgress returns a context whose tool call can show how far it
// got on its step while it runs: show shows the running step again with
// output. The agent sets it where the thread shows steps.
func WithStepProgress(ctx context.Context, show func(ctx context.Context, output string)) context.Context {
	return context.WithValue(ctx, stepProgressKey{}, show)
}

// StepProgress shows output (one line, such as a long-running task's
// status) on the running step of ctx's tool call; where the thread shows
// no steps it does nothing.
func StepProgress(ctx context.Context, output string) {
	if show, ok := ctx.Value(stepProgressKey{}).(func(context.Context, string)); ok && show != nil {
		show(ctx, output)
	}
}
