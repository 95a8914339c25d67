package slack

import (
	"testing"

	"github.com/slack-go/slack"

	"github.com/neobot/neobot/core"
)

// TestButtonStyleReadsTheFlag: an option is drawn as approving only when
// its gate marked it so, whatever its label says.
func TestButtonStyleReadsTheFlag(t *testing.T) {
	g := core.Gate{Token: "tok", Question: "Ship?", State: core.GatePending,
		Options: []core.Option{{Label: "Ship it", Approves: true}, {Label: "Yes"}}}
	_, blocks := gateBlocks(g)
	var styles []slack.Style
	for _, b := range blocks {
		if a, ok := b.(*slack.ActionBlock); ok {
			for _, e := range a.Elements.ElementSet {
				styles = append(styles, e.(*slack.ButtonBlockElement).Style)
			}
		}
	}
	if len(styles) != 2 || styles[0] != slack.StylePrimary || styles[1] != slack.StyleDanger {
		t.Errorf("button styles = %q, want primary for the marked option, danger for the other", styles)
	}
}
