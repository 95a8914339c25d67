package tools

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/mcp"
)

// failure is what went wrong with a call, as the explain stage tells it.
type failure int

const (
	// failOther: the call failed in a way nothing below names; it may
	// have reached its server.
	failOther failure = iota
	// failNotSent: the call never reached its server, which is
	// restarting (or its process had died, or refused the connection).
	failNotSent
	// failDied: the call was sent, and its server stopped during it.
	failDied
	// failTimedOut: the call timeout ran out.
	failTimedOut
	// failNotLoggedIn: neobot's grant for the server was revoked or has
	// expired.
	failNotLoggedIn
	// failNoLogin: the operator has not logged in to the server yet.
	failNoLogin
	// failNeedsPermission: the server wants a wider grant than neobot's.
	failNeedsPermission
	// failScopeHeld: the server refuses for want of a scope the grant
	// already holds; another login would not help.
	failScopeHeld
	// failCannotLogin: no login to the server can be started (its OAuth
	// setup could not be discovered or used).
	failCannotLogin
	// failServerDown: the server is not running (failed, rejected, or
	// the place's process did not start).
	failServerDown
	// failUnknownTool: the manifest no longer declares the tool.
	failUnknownTool
	// failStopped: the call was found begun by an earlier run: neobot
	// stopped during it.
	failStopped
	// failRepeated: the call was found begun by this run: it was
	// dispatched twice, and neobot never stopped.
	failRepeated
)

// classify names the failure of a call that returned err.
func classify(err error) failure {
	switch {
	case errors.As(err, new(*mcp.NotLoggedInError)):
		if nl, _ := errors.AsType[*mcp.NotLoggedInError](err); !nl.Lost {
			return failNoLogin
		}
		return failNotLoggedIn
	case errors.As(err, new(*mcp.LoginError)):
		return failCannotLogin
	case errors.Is(err, mcp.ErrNeedsPermission):
		if pe, ok := errors.AsType[*mcp.PermissionError](err); ok && pe.Held {
			return failScopeHeld
		}
		return failNeedsPermission
	case errors.Is(err, mcp.ErrUnavailable) && mcp.NotSent(err):
		return failNotSent
	case errors.Is(err, mcp.ErrUnavailable):
		return failDied
	case errors.Is(err, mcp.ErrServerDown):
		return failServerDown
	case errors.Is(err, mcp.ErrUnknownTool):
		return failUnknownTool
	case errors.Is(err, context.DeadlineExceeded):
		return failTimedOut
	}
	return failOther
}

// retryRule says whether the recovery ladder may make a failed call again.
type retryRule int

const (
	// never: it may have taken effect, or trying again cannot help.
	never retryRule = iota
	// always: it certainly never reached its server.
	always
	// ifHarmless: only when it changes nothing and nobody was asked.
	ifHarmless
)

// facts fill an explanation's sentences.
type facts struct {
	name, alias, tool string
	timeout           time.Duration
	// started is "started", or "approved and started" for an asked call;
	// again says when the model may call it again.
	started, again string
	// scope is the scope a server asked for (failNeedsPermission); why
	// is the reason no login can be started (failCannotLogin).
	scope, why string
}

// explanation is one row of the table: what the model reads, what the
// person is shown in the thread, and whether the call may be retried.
type explanation struct {
	// model is what the model reads; harmless, when set, replaces it for
	// a call that changes nothing and nobody was asked about.
	model, harmless func(f facts) string
	// person, when set, is also shown in the thread as a notice. Where it
	// is unset the model, told to, tells the person in its answer.
	person func(f facts) string
	retry  retryRule
}

// explanationOf is the table: one row per failure.
func explanationOf(f failure) explanation {
	switch f {
	case failNotSent:
		return explanation{retry: always, model: func(f facts) string {
			return fmt.Sprintf("%s was not run: its server %q is restarting, and the call never reached it. Try again shortly, or carry on without it.", f.name, f.alias)
		}}
	case failDied:
		return explanation{retry: ifHarmless, model: func(f facts) string {
			return fmt.Sprintf("%s was sent, but its server %q stopped during the call, so its outcome is unknown. "+
				"Do not call it again on your own; tell the user to check.", f.name, f.alias)
		}, harmless: func(f facts) string {
			return fmt.Sprintf("%s did not answer: its server %q stopped during the call and is restarting. Try again shortly, or carry on without it.", f.name, f.alias)
		}}
	case failTimedOut:
		return explanation{retry: ifHarmless, model: func(f facts) string {
			return fmt.Sprintf("%s timed out after %s: its outcome is unknown, and it may still take effect. "+
				"Do not call it again on your own; tell the user to check.", f.name, f.timeout)
		}, harmless: func(f facts) string {
			return fmt.Sprintf("%s timed out after %s; it may still have taken effect, so check before calling it again.", f.name, f.timeout)
		}}
	case failNotLoggedIn:
		return explanation{model: func(f facts) string {
			return fmt.Sprintf("%s is not available: neobot's access to %q was revoked or has expired, and an operator must log in again (neobot mcp login %s). Tell the user.", f.name, f.alias, f.alias)
		}}
	case failNoLogin:
		return explanation{model: func(f facts) string {
			return fmt.Sprintf("%s is not available: no operator has logged neobot in to %q yet; one must run neobot mcp login %s. Tell the user.", f.name, f.alias, f.alias)
		}}
	case failNeedsPermission:
		return explanation{model: func(f facts) string {
			return fmt.Sprintf("%s was not run: its server %q needs more permission (%s) than neobot's access to it holds. neobot's access is unchanged; an operator must grant the wider permission with neobot mcp login %s. Tell the user.", f.name, f.alias, f.scope, f.alias)
		}}
	case failScopeHeld:
		return explanation{model: func(f facts) string {
			return fmt.Sprintf("%s was not run: its server %q refused it for want of permission (%s) that the access it was called with already holds, so logging in or connecting again would not help. Tell the user; whoever runs the server must look at it.", f.name, f.alias, f.scope)
		}}
	case failCannotLogin:
		return explanation{model: func(f facts) string {
			return fmt.Sprintf("%s was not run: neobot cannot make a link to connect an account to %q: %s. Trying again will not help until an operator fixes the server or its manifest entry. Tell the user.", f.name, f.alias, f.why)
		}}
	case failServerDown:
		return explanation{model: func(f facts) string {
			return fmt.Sprintf("%s is not available: its server %q is not running.", f.name, f.alias)
		}}
	case failUnknownTool:
		return explanation{model: func(f facts) string { return unknownTool(f.name) }}
	case failStopped:
		return explanation{model: func(f facts) string {
			return fmt.Sprintf("%s was %s earlier, but its result was lost when neobot stopped: its outcome is unknown. It was not run again. "+
				"Tell the user to check whether it took effect; %s.", f.name, f.started, f.again)
		}, person: func(f facts) string {
			return fmt.Sprintf("%s/%s was %s, but neobot stopped before its result came back: its outcome is unknown, so it was not run again. Check it, and ask again if it is still needed.", f.alias, f.tool, f.started)
		}}
	case failRepeated:
		return explanation{model: func(f facts) string {
			return fmt.Sprintf("%s was already %s for this message: its outcome is unknown. It was not run again. "+
				"Tell the user to check whether it took effect; %s.", f.name, f.started, f.again)
		}, person: func(f facts) string {
			return fmt.Sprintf("%s/%s was already %s for this message: its outcome is unknown, so it was not run again.", f.alias, f.tool, f.started)
		}}
	}
	return explanation{retry: ifHarmless, model: func(f facts) string {
		return fmt.Sprintf("%s failed before its result came back, so its outcome is unknown. "+
			"Do not call it again on your own; tell the user to check.", f.name)
	}, harmless: func(f facts) string {
		return fmt.Sprintf("%s could not reach its server %q. Try again shortly, or carry on without it.", f.name, f.alias)
	}}
}

// explain turns a failed call's error into what the model and the person
// are told: in-band, or as a RetryableError when the ladder may make the
// call again.
func (s *Surface) explain(ctx context.Context, call core.ToolCall, b binding, asked bool, err error) (string, bool, error) {
	if connect, ok := errors.AsType[*mcp.ConnectError](err); ok {
		return s.offerConnect(ctx, call, connect), true, nil
	}
	if ctx.Err() != nil {
		return "", false, fmt.Errorf("tools: %s: %w", call.Name(), ctx.Err())
	}
	text, retry := s.tellFailure(ctx, call, b, asked, classify(err), err)
	if retry {
		return "", false, &RetryableError{Err: err, Text: text}
	}
	return text, true, nil
}

// foundBegun is the in-band answer to a call found begun in the calls
// log (failStopped or failRepeated): it may have run, so it is not made
// again.
func (s *Surface) foundBegun(ctx context.Context, call core.ToolCall, b binding, asked bool, f failure) string {
	text, _ := s.tellFailure(ctx, call, b, asked, f, nil)
	return text
}

// tellFailure looks f, the failure err (if any) names, up in the table:
// it shows the person's notice, if any, and returns the model's sentence
// and whether the call may be made again.
func (s *Surface) tellFailure(ctx context.Context, call core.ToolCall, b binding, asked bool, f failure, err error) (text string, retry bool) {
	e := explanationOf(f)
	fs := facts{name: call.Name(), alias: b.alias, tool: b.tool, timeout: s.callTimeout, started: "started", again: "call it again only if they ask"}
	if pe, ok := errors.AsType[*mcp.PermissionError](err); ok {
		fs.scope = pe.Scope
	}
	if le, ok := errors.AsType[*mcp.LoginError](err); ok {
		fs.why = le.Reason()
	}
	if asked {
		fs.started, fs.again = "approved and started", fs.again+", and they will be asked to approve it again"
	}
	harmless := !asked && !changes(b)
	text = e.model(fs)
	if harmless && e.harmless != nil {
		text = e.harmless(fs)
	}
	if e.person != nil {
		s.tell(ctx, call, e.person(fs))
	}
	return text, e.retry == always || e.retry == ifHarmless && harmless
}
