package agent

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/neobot/neobot/core/llm"
)

// maxRetryAfter caps how long a provider's Retry-After may hold a turn.
const maxRetryAfter = time.Minute

// backoff returns the wait before retry n (from 1): the provider's
// Retry-After when err carries one, else exponential from BackoffBase with
// jitter in [d/2, d), capped at BackoffMax.
func (a *Agent) backoff(n int, err error) time.Duration {
	if d, ok := llm.RetryAfter(err); ok {
		return min(d, maxRetryAfter)
	}
	d := a.opts.BackoffBase << (n - 1)
	if d <= 0 || d > a.opts.BackoffMax {
		d = a.opts.BackoffMax
	}
	return d/2 + time.Duration(a.opts.Rand()*float64(d/2))
}

// partial ends the turn honestly: what stopped it and what was done, said
// as the final answer and stored as such.
func (tr *turn) partial(ctx context.Context, reason string) error {
	tr.a.log.Warn().Str("thread", tr.st.thread.Key()).Str("reason", reason).Msg("agent: honest partial")
	return tr.stopHonestly(ctx, fmt.Sprintf("I couldn't finish this: %s.", reason), "Tell me how you'd like to continue.")
}

// stopHonestly ends the turn with why (sentences), what the turn did
// (every call, a spend with its outcome, so none is hidden) and where it
// got to, then tail; the final answer, stored as a partial one.
func (tr *turn) stopHonestly(ctx context.Context, why, tail string) error {
	var b strings.Builder
	b.WriteString(why)
	if len(tr.calls) > 0 {
		b.WriteString("\n\nWhat I did so far:")
		for _, c := range tr.calls {
			status := "done"
			if !c.ok {
				status = "failed"
			}
			fmt.Fprintf(&b, "\n- %s: %s", c.name, status)
			if c.out != "" {
				b.WriteString(" (" + c.out + ")")
			}
		}
	}
	if n := tr.narration(); n != tr.t.Inbound.Text {
		b.WriteString("\n\nWhere I got to: " + n)
	}
	if tail != "" {
		b.WriteString("\n\n" + tail)
	}
	return tr.finish(ctx, b.String(), true)
}

// budgetSpent ends the turn when a daily token budget over its place is
// used up (Options.Budget), before the model is called past it; stop is
// false while the turn may go on. Every call the model asked for has its
// result stored by then, so the transcript holds no call left dangling.
// A budget that cannot be counted stops the turn too: it holds.
func (tr *turn) budgetSpent(ctx context.Context) (stop bool, err error) {
	b := tr.a.opts.Budget
	if b == nil || tr.steps == 0 {
		return false, nil // the first call is checked before the turn runs
	}
	why, berr := b.Exhausted(ctx, tr.t.Inbound)
	if berr != nil {
		tr.a.log.Error().Err(berr).Str("thread", tr.st.thread.Key()).Msg("agent: a daily token budget could not be read; turn stopped")
		why = cmp.Or(why, "I can't tell how much of the daily token budget here is left just now, so I stopped before going on. Ask me again in a minute.")
	}
	if why == "" {
		return false, nil
	}
	return true, tr.stopHonestly(ctx, why, "")
}
