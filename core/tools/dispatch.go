package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/neobot/neobot/core"

	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/skill"
)

// Dispatch runs the function the model called and returns what the model
// should read.
//
//   - err != nil: the call could not be made (transport failure, a server
//     restarting, a per-call timeout, ctx ended); the caller's recovery
//     ladder decides whether to retry. A [*RetryableError] also carries
//     the sentence for the model should the retries run out.
//   - isError true, err nil: an in-band failure the model sees and adapts
//     to: unknown function, an escalate tool called directly, a call the
//     capability gate refuses (the place's skill or the manifest's
//     allowed_side_effects) or a person denied, a server that is not
//     running, a tool error, and every core_execute failure (a
//     money-moving call is never retried automatically).
//
// A call the place's skill asks about waits for a person's decision
// through the turn's approver before it runs; ctx ending meanwhile is an
// error, and the resumed turn's call finds the same approval.
//   - otherwise the tool ran and content is its result rendered as text.
func (s *Surface) Dispatch(ctx context.Context, name string, args map[string]any) (content string, isError bool, err error) {
	sk := s.skillOf(ctx)
	switch name {
	case core.CoreExecute:
		if v := s.spendVerdict(sk); v.Rule != skill.Allow {
			return s.refuse(ctx, sk, name, name, v)
		}
		return s.coreExecute(ctx, args)
	case MemoryRecall:
		if s.recall != nil {
			return s.memory(ctx, name, s.recall, args, "nothing found in memory")
		}
	case MemoryForget:
		if s.forget != nil {
			return s.memory(ctx, name, s.forget, args, "nothing was remembered about that, so nothing was forgotten")
		}
	case ReadResource:
		if s.mgr != nil {
			return s.readResource(ctx, sk, args)
		}
	case HistorySearch:
		if s.history != nil {
			query, _ := args["query"].(string)
			if strings.TrimSpace(query) == "" {
				return HistorySearch + ` needs "query": the words or identifier to find.`, true, nil
			}
			return s.memory(ctx, name, s.history, args, "nothing in the archived part of this conversation matches that")
		}
	}
	b, ok := s.byFunc[name]
	if !ok || s.mgr == nil {
		return fmt.Sprintf("unknown tool %q — it is not available", name), true, nil
	}
	if b.class == Escalate {
		if v := s.spendVerdict(sk); v.Rule != skill.Allow {
			return s.refuse(ctx, sk, name, b.uriText, v)
		}
		return fmt.Sprintf("%q moves funds or needs a wallet signature, so it cannot be called directly — use %s "+
			"with a plain description of what to do; the user approves any spend", name, core.CoreExecute), true, nil
	}
	// The capability gate: every call, by whatever name, is checked
	// against the manifest and the place's skill before it can run.
	asked := false
	switch v := s.verdict(sk, b); v.Rule {
	case skill.Deny:
		return s.refuse(ctx, sk, name, b.uriText, v)
	case skill.Ask:
		ok, refusal, err := s.approve(ctx, sk, name, b, args)
		if err != nil {
			return "", false, err
		}
		if !ok {
			return refusal, true, nil
		}
		asked = true
	}
	changes := b.effect != mcp.EffectNone && b.effect != mcp.EffectRead
	var callErr error // the call's, for the calls log
	if (asked || changes) && s.calls != nil {
		// A call that changes something runs at most once: it is recorded
		// as being made before it is made, and a call found recorded (a
		// crash, or the same call dispatched again) is never made again.
		// "Allow once" means once for the same reason.
		key := callKey(ctx)
		begun, err := s.calls.BeginCall(ctx, key, s.run)
		if err != nil {
			return fmt.Sprintf("%s was not run: neobot could not record that it is being made (%v), so it did not risk making it twice. Tell the user and try again later.", name, err), true, nil
		}
		if !begun.Fresh {
			return s.foundBegun(ctx, name, b, asked, begun.Run != s.run), true, nil
		}
		defer func() {
			switch {
			case mcp.NotSent(callErr):
				// It never reached its server: forgotten, so that a retry
				// records it again and runs it.
				if err := s.calls.DropCall(context.WithoutCancel(ctx), key); err != nil {
					s.gate.log.Warn().Err(err).Str("tool", b.uriText).Msg("tools: a call that was not sent stays in the calls log")
				}
				return
			case ctx.Err() != nil && !errors.Is(context.Cause(ctx), core.ErrStopped):
				// Cut off by a shutdown, or by a lost claim, while it may
				// have run: it stays begun, so the resumed turn reports
				// its outcome unknown instead of making it again.
				return
			}
			if err := s.calls.EndCall(context.WithoutCancel(ctx), key); err != nil {
				s.gate.log.Warn().Err(err).Str("tool", b.uriText).Msg("tools: the end of a changing call was not recorded")
			}
		}()
	}
	if s.calls == nil {
		if text, lost := s.lostQuestion(ctx, name, b); lost {
			return text, true, nil
		}
	}
	callCtx, cancel := s.callContext(ctx, b)
	defer cancel()
	res, err := s.mgr.CallIn(callCtx, placeOf(ctx), b.alias, b.tool, args)
	callErr = err
	// Only a call that certainly never reached its server, or one that
	// changes nothing and was not asked about, may be made again after a
	// failure: anything else may have taken effect.
	again := mcp.NotSent(err) || !asked && !changes
	var connect *mcp.ConnectError
	switch {
	case err == nil:
		if !res.IsError {
			sendFiles(ctx, name, res)
		}
		return render(res) + s.resourceHint(sk, b.alias, res), res.IsError, nil
	case errors.As(err, &connect):
		return s.offerConnect(ctx, name, connect), true, nil
	case errors.As(err, new(*mcp.NotLoggedInError)):
		return fmt.Sprintf("%s is not available: neobot's access to %q was revoked or has expired, and an operator must log in again (neobot mcp login %s). Tell the user.", name, b.alias, b.alias), true, nil
	case ctx.Err() != nil:
		return "", false, fmt.Errorf("tools: %s: %w", name, ctx.Err())
	case errors.Is(err, mcp.ErrUnavailable) && mcp.NotSent(err):
		return "", false, &RetryableError{Err: err,
			Text: fmt.Sprintf("%s was not run: its server %q is restarting, and the call never reached it. Try again shortly, or carry on without it.", name, b.alias)}
	case errors.Is(err, mcp.ErrUnavailable) && again:
		return "", false, &RetryableError{Err: err,
			Text: fmt.Sprintf("%s did not answer: its server %q stopped during the call and is restarting. Try again shortly, or carry on without it.", name, b.alias)}
	case errors.Is(err, mcp.ErrUnavailable):
		return fmt.Sprintf("%s was sent, but its server %q stopped during the call, so its outcome is unknown. "+
			"Do not call it again on your own; tell the user to check.", name, b.alias), true, nil
	case errors.Is(err, mcp.ErrServerDown):
		return fmt.Sprintf("%s is not available: its server %q is not running.", name, b.alias), true, nil
	case errors.Is(err, mcp.ErrUnknownTool):
		return fmt.Sprintf("unknown tool %q — it is not available", name), true, nil
	case errors.Is(err, context.DeadlineExceeded) && again:
		return "", false, &RetryableError{Err: err,
			Text: fmt.Sprintf("%s timed out after %s; it may still have taken effect, so check before calling it again.", name, s.callTimeout)}
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("%s timed out after %s: its outcome is unknown, and it may still take effect. "+
			"Do not call it again on your own; tell the user to check.", name, s.callTimeout), true, nil
	case !again:
		return fmt.Sprintf("%s failed before its result came back, so its outcome is unknown. "+
			"Do not call it again on your own; tell the user to check.", name), true, nil
	}
	return "", false, fmt.Errorf("tools: %s: %w", name, err)
}

// foundBegun is the in-band result of a call found begun in the calls
// log: it may have run, so it is not made again. Only a call begun by an
// earlier run was cut off by neobot stopping; one begun by this run was
// dispatched twice.
func (s *Surface) foundBegun(ctx context.Context, name string, b binding, asked, earlier bool) string {
	started, again := "started", "call it again only if they ask"
	if asked {
		started, again = "approved and started", again+", and they will be asked to approve it again"
	}
	if !earlier {
		s.tell(ctx, fmt.Sprintf("%s/%s was already %s for this message: its outcome is unknown, so it was not run again.", b.alias, b.tool, started))
		return fmt.Sprintf("%s was already %s for this message: its outcome is unknown. It was not run again. "+
			"Tell the user to check whether it took effect; %s.", name, started, again)
	}
	if text, lost := s.lostQuestion(ctx, name, b); lost {
		return text // its question, cut off by the restart, now says so
	}
	s.tell(ctx, fmt.Sprintf("%s/%s was %s, but neobot stopped before its result came back: its outcome is unknown, so it was not run again. Check it, and ask again if it is still needed.", b.alias, b.tool, started))
	return fmt.Sprintf("%s was %s earlier, but its result was lost when neobot stopped: its outcome is unknown. It was not run again. "+
		"Tell the user to check whether it took effect; %s.", name, started, again)
}

// callKey names the call of ctx's turn in the calls log: the thread, the
// turn's message and the model's call ID, as an asked call's gate is.
// Parts are joined by the unit separator, never NUL: PostgreSQL text holds
// no NUL, and a key with one failed to record, so no asked call ran there.
func callKey(ctx context.Context) string {
	key := core.ToolCallFrom(ctx)
	if t, ok := core.TurnFrom(ctx); ok {
		key = t.Inbound.Thread.Key() + "\x1f" + t.Inbound.EventID + "\x1f" + key
	}
	return key
}

// tell shows a notice in ctx's turn's thread, when there is one.
func (s *Surface) tell(ctx context.Context, text string) {
	if t, ok := core.TurnFrom(ctx); ok && t.Reporter != nil {
		if err := t.Reporter.Notice(ctx, text); err != nil {
			s.gate.log.Debug().Err(err).Msg("tools: notice not shown")
		}
	}
}

// RetryableError is a call that failed on its way to the tool, not in it:
// the tool's server was restarting, or the call timed out. Natural tools
// are reversible, so the agent retries it with backoff; Text is what the
// model reads if the retries run out.
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

func (s *Surface) coreExecute(ctx context.Context, args map[string]any) (string, bool, error) {
	intent, _ := args["intent"].(string)
	if strings.TrimSpace(intent) == "" {
		return core.CoreExecute + ` needs "intent": a clear, self-contained description of the task.`, true, nil
	}
	run := s.delegate
	if run == nil && s.offersExecute(s.skillOf(ctx)) {
		run = s.execute
	}
	if run == nil {
		return "spending is not set up for this bot, so nothing that moves funds or needs a signature can be done here. " +
			"Tell the user it is not set up.", true, nil
	}
	out, err := run(ctx, intent)
	if err != nil {
		// In-band, whatever the error: a money-moving call is never
		// retried automatically.
		return fmt.Sprintf("%s did not complete: %v", core.CoreExecute, err), true, nil
	}
	return out, false, nil
}

// memory runs memory_recall or memory_forget with the call's query.
func (s *Surface) memory(ctx context.Context, name string, fn func(context.Context, string) (string, error), args map[string]any, empty string) (string, bool, error) {
	query, _ := args["query"].(string)
	out, err := fn(ctx, strings.TrimSpace(query))
	if err != nil {
		return "", false, fmt.Errorf("tools: %s: %w", name, err)
	}
	if out == "" {
		out = empty
	}
	return out, false, nil
}
