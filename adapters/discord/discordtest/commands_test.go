package discordtest_test

import (
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/neobot/neobot/adapters/discord/discordtest"
)

// TestCommands: application commands register as Discord takes them (a
// bad name or description refuses the list), and a registered one can be
// typed; a reply's components past Discord's limits are refused.
func TestCommands(t *testing.T) {
	s := discordtest.New(t)
	dg := session(t, s)
	for name, cmd := range map[string]*discordgo.ApplicationCommand{
		"upper-case name":  {Name: "Neo", Description: "x"},
		"no description":   {Name: "neo"},
		"long description": {Name: "neo", Description: strings.Repeat("d", 101)},
		"space in name":    {Name: "my neo", Description: "x"},
	} {
		if _, err := dg.ApplicationCommandBulkOverwrite(discordtest.AppID, "", []*discordgo.ApplicationCommand{cmd}); err == nil {
			t.Errorf("registering a command with %s succeeded; Discord refuses it", name)
		}
	}
	if got := s.Commands(); len(got) != 0 {
		t.Fatalf("Commands after refusals = %+v, want none", got)
	}
	created, err := dg.ApplicationCommandBulkOverwrite(discordtest.AppID, "", []*discordgo.ApplicationCommand{
		{Name: "neo", Description: "Your page", Type: discordgo.ChatApplicationCommand}})
	if err != nil || len(created) != 1 || created[0].ID == "" {
		t.Fatalf("register /neo = %+v, %v", created, err)
	}
	d := s.SlashCommand("111", discordtest.ChannelID, "neo")
	in := &discordgo.Interaction{ID: d.ID, Token: "itoken-" + d.ID, AppID: discordtest.AppID}
	row := discordgo.ActionsRow{}
	for i := range 6 {
		row.Components = append(row.Components, discordgo.Button{Label: "b", CustomID: "c" + string(rune('0'+i)), Style: discordgo.PrimaryButton})
	}
	err = dg.InteractionRespond(in, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: "page", Components: []discordgo.MessageComponent{row}, Flags: discordgo.MessageFlagsEphemeral}})
	if err == nil {
		t.Error("a row of six buttons was accepted; Discord takes five")
	}
	row.Components = row.Components[:5]
	err = dg.InteractionRespond(in, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: "page", Components: []discordgo.MessageComponent{row}, Flags: discordgo.MessageFlagsEphemeral}})
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Responses(); len(r) != 1 || r[0].Flags&discordtest.FlagEphemeral == 0 || r[0].Content != "page" {
		t.Errorf("Responses = %+v, want the private page", r)
	}
}
