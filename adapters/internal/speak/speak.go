// Package speak is the core.Reporter each chat adapter hands the hub for a
// thread: the thread, and the adapter that speaks in it. Slack and Discord
// speak differently, but a reporter is the same for both: every call goes
// to the adapter with the thread it is for, so the adapter keeps no
// per-thread reporter type of its own and its code takes the thread as an
// argument like everything else it does in a thread.
package speak

import (
	"context"

	"github.com/neobot/neobot/core"
)

// Platform is what a chat adapter does in one of its threads: core.Reporter
// and the four interfaces the hub looks for on a reporter (core.Streamer,
// core.Stepper, core.Uploader, core.PrivateNoticer), each told the thread.
// It is as wide as a reporter is.
type Platform interface {
	// Say posts a user-facing answer in t.
	Say(ctx context.Context, t core.Thread, text string) error
	// Status shows progress in t, replaced by the next status or the
	// answer.
	Status(ctx context.Context, t core.Thread, text string) error
	// Notice posts a visible note in t that is not an answer.
	Notice(ctx context.Context, t core.Thread, text string) error
	// StreamAnswer starts showing an answer in t while it is written.
	StreamAnswer(ctx context.Context, t core.Thread) (core.AnswerStream, error)
	// Step shows a tool call of t's turn.
	Step(ctx context.Context, t core.Thread, s core.Step) error
	// Upload posts f in t.
	Upload(ctx context.Context, t core.Thread, f core.ToolFile) error
	// PrivateNotice tells user text in t that no one else sees.
	PrivateNotice(ctx context.Context, t core.Thread, user, text string) error
}

// Reporter is how Neo speaks in thread T: P's calls, each told T.
type Reporter[P Platform] struct {
	P P
	T core.Thread
}

var _ interface {
	core.Reporter
	core.Streamer
	core.Stepper
	core.Uploader
	core.PrivateNoticer
} = Reporter[Platform]{}

// Say posts a user-facing answer.
func (r Reporter[P]) Say(ctx context.Context, text string) error { return r.P.Say(ctx, r.T, text) }

// Status shows progress, replaced by the next status or the answer.
func (r Reporter[P]) Status(ctx context.Context, text string) error {
	return r.P.Status(ctx, r.T, text)
}

// Notice posts a visible note that is not an answer.
func (r Reporter[P]) Notice(ctx context.Context, text string) error {
	return r.P.Notice(ctx, r.T, text)
}

// StreamAnswer starts showing an answer while it is written.
func (r Reporter[P]) StreamAnswer(ctx context.Context) (core.AnswerStream, error) {
	return r.P.StreamAnswer(ctx, r.T)
}

// Step shows a tool call of the turn.
func (r Reporter[P]) Step(ctx context.Context, s core.Step) error { return r.P.Step(ctx, r.T, s) }

// Upload posts a file a tool returned.
func (r Reporter[P]) Upload(ctx context.Context, f core.ToolFile) error {
	return r.P.Upload(ctx, r.T, f)
}

// PrivateNotice tells user text no one else in the thread sees.
func (r Reporter[P]) PrivateNotice(ctx context.Context, user, text string) error {
	return r.P.PrivateNotice(ctx, r.T, user, text)
}
