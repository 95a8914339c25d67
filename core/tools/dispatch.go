package tools

import (
	"context"
	"fmt"

	"github.com/neobot/neobot/core"
)

// Dispatch runs the function the model called and returns what the model
// should read. A call passes five stages, each in a file of its own:
//
//   - route (route.go): a synthetic function, an unknown name, an
//     escalate tool called directly, or an MCP tool;
//   - authorize (authorize.go): the manifest and the place's skill allow
//     it, refuse it, or ask a person through the turn's approver;
//   - once (once.go): a call that changes something, or was asked about,
//     is recorded in the calls log before it is made; one found recorded
//     is not made again, and one whose server answered with a task
//     follows that task instead (task.go);
//   - call (call.go): the MCP call, at the turn's place, under the call
//     timeout;
//   - explain (explain.go): one table from what went wrong to what the
//     model and the person are told, and whether the call may be retried.
//
// The results:
//
//   - err != nil: the call could not be made (a server restarting, a
//     harmless call timing out, ctx ended); the caller's recovery ladder
//     decides whether to retry. A [*RetryableError] also carries the
//     sentence for the model should the retries run out. Only a call that
//     certainly never reached its server, or one that changes nothing and
//     was not asked about, is ever returned this way.
//   - isError true, err nil: an in-band failure the model sees and adapts
//     to (unknown function, a refusal, a tool error, an outcome unknown,
//     every core_execute failure).
//   - otherwise the tool ran and content is its result rendered as text.
//
// A call without a turn (the zero core.ToolCall) is refused: whose call it
// is decides what it may do, so none is assumed.
func (s *Surface) Dispatch(ctx context.Context, call core.ToolCall) (content string, isError bool, err error) {
	t := call.Turn()
	if t == nil {
		return fmt.Sprintf("%s was not run: it was not made in a conversation, so whose call it is, and what it may do, is unknown.", call.Name()), true, nil
	}
	sk := s.skills.For(t.Inbound)
	r := s.route(call.Name())
	switch r.kind {
	case routeUnknown:
		return unknownTool(call.Name()), true, nil
	case routeEscalate:
		return s.escalate(call, sk, r.b), true, nil
	case routeSynthetic:
		return s.synthetic(ctx, call, sk)
	}
	asked, refusal, err := s.authorize(ctx, call, sk, r.b)
	if err != nil || refusal != "" {
		return refusal, refusal != "", err
	}
	ctx, task := s.followTasks(ctx, call, r.b)
	var tk *ticket
	if task == nil || !task.resumed {
		// A call whose task an earlier attempt started follows that
		// task: the tool is not called again (task.go).
		var found string
		if tk, found = s.once(ctx, call, r.b, asked); found != "" {
			return found, true, nil
		}
	}
	res, err := s.callTool(ctx, call, r.b)
	tk.end(ctx, err)
	task.end(ctx, tk, err)
	if err == nil {
		if !res.IsError {
			sendFiles(ctx, call.Name(), res)
		}
		return render(res) + s.resourceHint(sk, r.b.alias, res), res.IsError, nil
	}
	return s.explain(ctx, call, r.b, asked, err)
}

// RetryableError is a call that failed on its way to the tool, not in it,
// and may be made again: it never reached its server, or it changes
// nothing. The agent retries it with backoff; Text is what the model
// reads if the retries run out.
type RetryableError struct {
	Text string
	Err  error
}

// Error implements error.
func (e *RetryableError) Error() string { return "tools: " + e.Text + " (" + e.Err.Error() + ")" }

// Unwrap returns the underlying error.
func (e *RetryableError) Unwrap() error { return e.Err }

// InBand returns the sentence for the model.
func (e *RetryableError) InBand() string { return e.Text }

// tell shows a notice in call's thread.
func (s *Surface) tell(ctx context.Context, call core.ToolCall, text string) {
	if t := call.Turn(); t != nil && t.Reporter != nil {
		if err := t.Reporter.Notice(ctx, text); err != nil {
			s.gate.log.Debug().Err(err).Msg("tools: notice not shown")
		}
	}
}
