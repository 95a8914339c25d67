package discord

import (
	"testing"

	"github.com/neobot/neobot/adapters/internal/rendertest"
	"github.com/neobot/neobot/core"
)

// TestSpendQuestionShownWhole: a hostile spend's approval shows line for
// line as core wrote it, escapes intact, nothing clipped.
func TestSpendQuestionShownWhole(t *testing.T) {
	rendertest.CheckQuestion(t, gateContent(core.Gate{Token: "tok", Question: rendertest.HostileSpend(), Options: []core.Option{{Label: "Approve", Approves: true}, {Label: "Deny"}}, State: core.GatePending}))
}
