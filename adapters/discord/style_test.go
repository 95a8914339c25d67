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

// TestLinkButton: a URL-mode question leads with a link button that opens
// its page (no custom ID: Discord sends no interaction for it), then its
// answers; other gates have none.
func TestLinkButton(t *testing.T) {
	form := &core.Form{URL: "https://example.com/link"}
	g := core.Gate{Token: "tok", Question: "Link?", State: core.GatePending, Form: form, Options: form.Options()}
	var got []discordgo.Button
	for _, row := range gateButtons(g) {
		for _, c := range row.(discordgo.ActionsRow).Components {
			got = append(got, c.(discordgo.Button))
		}
	}
	if len(got) != 4 || got[0].Style != discordgo.LinkButton || got[0].URL != form.URL || got[0].CustomID != "" || got[1].Label != core.ElicitDone {
		t.Errorf("buttons = %+v, want the link button, then Done, Decline, Cancel", got)
	}
	g.Form, g.Options = nil, []core.Option{{Label: "Approve", Approves: true}}
	for _, row := range gateButtons(g) {
		for _, c := range row.(discordgo.ActionsRow).Components {
			if c.(discordgo.Button).Style == discordgo.LinkButton {
				t.Errorf("an approval has a link button: %+v", c)
			}
		}
	}
}
