package discord

import (
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/neobot/neobot/core"
)

// TestButtonStyleReadsTheFlag: an option is drawn as approving only when
// its gate marked it so, whatever its label says.
func TestButtonStyleReadsTheFlag(t *testing.T) {
	g := core.Gate{Token: "tok", Question: "Ship?", State: core.GatePending,
		Options: []core.Option{{Label: "Ship it", Approves: true}, {Label: "Yes"}}}
	var styles []discordgo.ButtonStyle
	for _, row := range gateButtons(g) {
		for _, c := range row.(discordgo.ActionsRow).Components {
			styles = append(styles, c.(discordgo.Button).Style)
		}
	}
	if len(styles) != 2 || styles[0] != discordgo.SuccessButton || styles[1] != discordgo.DangerButton {
		t.Errorf("button styles = %v, want success for the marked option, danger for the other", styles)
	}
}
