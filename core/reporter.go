package core

import "context"

// Reporter is how Neo speaks in a thread. Adapters render each kind in their
// platform's idiom; internal reasoning never goes through a Reporter.
type Reporter interface {
	// Say posts a user-facing answer.
	Say(ctx context.Context, text string) error
	// Status shows ephemeral progress ("searching files…"), replaced by the
	// next status or the answer.
	Status(ctx context.Context, text string) error
	// Notice posts a deliberate, visible note that is not an answer
	// ("your message was received", "stopped").
	Notice(ctx context.Context, text string) error
}

// Streamer is a Reporter that can show an answer while the model writes
// it. A Reporter that is not one gets the whole answer through Say.
type Streamer interface {
	// StreamAnswer starts showing an answer; the status line gives way
	// to it.
	StreamAnswer(ctx context.Context) (AnswerStream, error)
}

// AnswerStream is an answer shown while it is written. Write must not
// block on the platform for long: adapters pace their edits themselves.
type AnswerStream interface {
	// Write appends text to the answer shown.
	Write(ctx context.Context, text string) error
	// Close ends the answer: what is shown becomes exactly final, the whole
	// answer as stored, which may differ from what was written.
	Close(ctx context.Context, final string) error
	// Abort takes back what was shown: the words were not the answer after
	// all (the model went on to call tools), or the call failed.
	Abort(ctx context.Context) error
}

// Turn is one run of the agent on one inbound message: who asked, where to
// speak, and who approves spends.
type Turn struct {
	Inbound  Inbound
	Reporter Reporter
	Approver Approver
	// Unsaid marks a resumed turn whose thread still showed a turn cut
	// short by a crash: a status line never edited into an answer, or an
	// answer never finished. If the turn's answer is stored, it was never
	// said, and the Runner says it.
	Unsaid bool
	// Resumed marks a turn taken up again after a restart: its unfinished
	// tool calls are made again only when that is safe.
	Resumed bool
}

type turnKey struct{}
type toolCallKey struct{}

// WithTurn returns a context carrying the turn, so tools deep in a call (the
// delegate's approver, memory recall's scope) know whose turn it is.
func WithTurn(ctx context.Context, t *Turn) context.Context {
	return context.WithValue(ctx, turnKey{}, t)
}

// TurnFrom returns the turn carried by ctx, if any.
func TurnFrom(ctx context.Context) (*Turn, bool) {
	t, ok := ctx.Value(turnKey{}).(*Turn)
	return t, ok && t != nil
}

// WithToolCall returns a context carrying the ID of the tool call being
// dispatched. The delegate uses it as an idempotency key, so a turn resumed
// after a restart finds its delegation again instead of submitting twice.
func WithToolCall(ctx context.Context, callID string) context.Context {
	return context.WithValue(ctx, toolCallKey{}, callID)
}

// ToolCallFrom returns the tool call ID carried by ctx, or "".
func ToolCallFrom(ctx context.Context) string {
	id, _ := ctx.Value(toolCallKey{}).(string)
	return id
}

type idleKey struct{}

// Idler gives up a running turn's share of the turn limit while the turn
// waits on a person (an approval), and returns the function that takes it
// back, waiting for a free slot, before the turn goes on.
type Idler func() (resume func(ctx context.Context))

// WithIdler returns a context whose turn can give up its slot through idle.
// The conversation hub sets it on every turn it runs.
func WithIdler(ctx context.Context, idle Idler) context.Context {
	return context.WithValue(ctx, idleKey{}, idle)
}

// Idle gives up ctx's turn slot, if it has one, while the caller waits on a
// person; call the returned function to take it back. Without a slot both
// are no-ops.
func Idle(ctx context.Context) (resume func(ctx context.Context)) {
	if idle, ok := ctx.Value(idleKey{}).(Idler); ok && idle != nil {
		return idle()
	}
	return func(context.Context) {}
}
