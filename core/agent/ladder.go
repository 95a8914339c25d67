package agent

import (
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
	var b strings.Builder
	fmt.Fprintf(&b, "I couldn't finish this: %s.", reason)
	if len(tr.calls) > 0 {
		b.WriteString("\n\nWhat I did so far:")
		for _, c := range tr.calls {
			status := "done"
			if !c.ok {
				status = "failed"
			}
			fmt.Fprintf(&b, "\n- %s: %s", c.name, status)
		}
	}
	if n := tr.narration(); n != tr.t.Inbound.Text {
		b.WriteString("\n\nWhere I got to: " + n)
	}
	b.WriteString("\n\nTell me how you'd like to continue.")
	tr.a.log.Warn().Str("thread", tr.st.thread.Key()).Str("reason", reason).Msg("agent: honest partial")
	return tr.finish(ctx, b.String(), true)
}
