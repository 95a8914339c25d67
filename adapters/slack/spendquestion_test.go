package slack

import (
	"testing"

	"github.com/slack-go/slack"

	"github.com/neobot/neobot/adapters/internal/rendertest"
	"github.com/neobot/neobot/core"
)

// TestSpendQuestionShownWhole: a hostile spend's approval shows line for
// line as core wrote it, escapes intact, nothing clipped.
func TestSpendQuestionShownWhole(t *testing.T) {
	fallback, blocks := gateBlocks(core.Gate{Token: "tok", Question: rendertest.HostileSpend(), Options: []core.Option{{Label: "Approve", Approves: true}, {Label: "Deny"}}, State: core.GatePending})
	rendertest.CheckQuestion(t, fallback)
	section, ok := blocks[0].(*slack.SectionBlock)
	if !ok {
		t.Fatalf("first block is %T, want a section", blocks[0])
	}
	rendertest.CheckQuestion(t, section.Text.Text)
}
