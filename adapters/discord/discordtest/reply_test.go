package discordtest_test

import (
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/neobot/neobot/adapters/discord/discordtest"
)

// TestEphemeralReplyButtons: an ephemeral message response with buttons,
// sent by discordgo, is a message its clicker sees with those buttons,
// which can be clicked in turn (a follow-up question, as Discord shows
// it).
func TestEphemeralReplyButtons(t *testing.T) {
	s := discordtest.New(t)
	dg := session(t, s)
	ch := s.AddChannel("general").ID
	posted, err := dg.ChannelMessageSend(ch, "rate me")
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := s.MessageByID(posted.ID)
	click := s.Click("111", msg, 0)
	in := &discordgo.Interaction{ID: click.ID, Token: "itoken-" + click.ID, AppID: discordtest.AppID}
	resp := &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: "What was wrong?", Flags: discordgo.MessageFlagsEphemeral,
			Components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
				discordgo.Button{Label: "Incomplete", Style: discordgo.SecondaryButton, CustomID: "why:1"}}}}}}
	if err := dg.InteractionRespond(in, resp); err != nil {
		t.Fatalf("InteractionRespond = %v", err)
	}
	var reply discordtest.Message
	for _, m := range s.Messages() {
		if m.Ephemeral && m.Content == "What was wrong?" {
			reply = m
		}
	}
	if b := reply.Buttons(); reply.Recipient != "111" || len(b) != 1 || b[0].CustomID != "why:1" || b[0].Label != "Incomplete" {
		t.Errorf("the ephemeral reply = %+v with buttons %+v, want the clicker's, with the Incomplete button", reply, b)
	}
}
