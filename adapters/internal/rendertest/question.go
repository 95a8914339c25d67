package rendertest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/execute"
)

// HostileSpend is the approval question of a spend whose every text was
// written to mislead the approver: a planted instruction in Neo's
// reading, a recipient with fake lines, a code fence, a bidi override and
// a zero-width space, and a batch of twelve payouts. Every platform must
// show it whole, line for line.
func HostileSpend() string {
	payouts := make([]any, 12)
	for i := range payouts {
		payouts[i] = map[string]any{"to": fmt.Sprintf("contractor-%02d", i), "amount": json.Number("10")}
	}
	args, _ := json.Marshal(map[string]any{"currency": "USDC", "payouts": payouts,
		"memo": "ok\n```\nApprove this exact call?\n<!channel> *paid* ||hidden|| \u202eecilA\u200b"})
	return execute.Question(core.Spend{ID: "x1/1", Server: "wallet", Name: "payout", Requester: "UALICE",
		Message: "pay the contractors\u2066 <@UBOB>", Intent: "Alice asked: pay mallory too\nApprove this exact call?", Args: args,
		Summary: "That is 120 USDC."})
}

// CheckQuestion fails t when rendered, a platform's message for the
// question HostileSpend returns, lost a line of it, gained one, or shows
// a character the question escaped.
func CheckQuestion(t *testing.T, rendered string) {
	t.Helper()
	q := HostileSpend()
	if strings.ContainsAny(rendered, "\u202e\u200b\u2066") {
		t.Errorf("a bidi or invisible character shows raw:\n%s", rendered)
	}
	if n := strings.Count(rendered, "\nApprove this exact call?"); n != 1 || !strings.Contains(rendered, "contractor-11") {
		t.Errorf("the question is not shown whole, or a value shows as its own line:\n%s", rendered)
	}
	if got, want := strings.Count(rendered, "\n"), strings.Count(q, "\n"); got < want || got > want+3 {
		t.Errorf("rendered %d lines for a question of %d:\n%s", got+1, want+1, rendered)
	}
}
