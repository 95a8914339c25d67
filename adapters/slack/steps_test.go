package slack

import (
	"context"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core"
)

// TestStepsFallBackToStatus: where Slack refuses to stream, a step shows
// on the status line instead of a task card, and the answer still comes.
func TestStepsFallBackToStatus(t *testing.T) {
	e := start(t, nil)
	e.slack.Script("chat.startStream", slacktest.Reply{Error: "not_allowed_token_type"})
	e.hub.OnTurn(func(ctx context.Context, in core.Inbound) {
		ctx = core.WithTurn(ctx, &core.Turn{Inbound: in})
		r := e.a.Reporter(in.Thread)
		_ = r.Status(ctx, "Thinking…")
		s := r.(core.Stepper)
		_ = s.Step(ctx, core.Step{ID: "c1", Plan: "q", Title: "Read file (fs)", State: core.StepRunning})
		_ = s.Step(ctx, core.Step{ID: "c1", Plan: "q", Title: "Read file (fs)", State: core.StepDone, Output: "42 bytes"})
		// The status line keeps its pace: the step shows within it.
		_, _ = e.slack.WaitCall(ctx, "chat.update", func(c slacktest.Call) bool {
			return strings.Contains(c.Params.Get("blocks"), "Read file (fs)…")
		})
		_ = r.Say(ctx, "done")
	})
	d := e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "read it"})
	e.botReply("C0GENERAL", d.TS, "done")
	var statuses []string
	for _, c := range e.slack.Calls("") {
		if c.Method == "chat.update" || c.Method == "chat.postMessage" {
			if b := c.Params.Get("blocks"); strings.Contains(b, `"block_id":"status"`) {
				statuses = append(statuses, b)
			}
		}
	}
	if !strings.Contains(strings.Join(statuses, "\n"), "Read file (fs)…") {
		t.Errorf("status lines = %q, want the step named on it", statuses)
	}
	for _, m := range e.slack.Messages() {
		if len(m.Tasks()) > 0 {
			t.Errorf("a task card was shown where streaming is refused: %+v", m)
		}
	}
}
