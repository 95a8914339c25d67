package discordtest_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/neobot/neobot/adapters/discord/discordtest"
)

// toFake sends discordgo's requests for discord.com to the fake.
type toFake struct{ base *url.URL }

func (t toFake) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = t.base.Scheme, t.base.Host, t.base.Host
	return http.DefaultTransport.RoundTrip(r)
}

func session(t *testing.T, s *discordtest.Server) *discordgo.Session {
	t.Helper()
	base, _ := url.Parse(s.URL())
	dg, err := discordgo.New("Bot test")
	if err != nil {
		t.Fatal(err)
	}
	dg.Client = &http.Client{Transport: toFake{base}}
	dg.MaxRestRetries = 0
	return dg
}

// TestStrictAsDiscord: what Discord refuses, the fake refuses, seen
// through discordgo: content over 2,000 code points (an accented letter or
// an emoji counts one), empty messages, empty follow-ups and message
// responses, and message lists honour their limit.
func TestStrictAsDiscord(t *testing.T) {
	s := discordtest.New(t)
	dg := session(t, s)
	ch := s.AddChannel("general").ID
	if _, err := dg.ChannelMessageSend(ch, strings.Repeat("é", 1999)+"🚀"); err != nil {
		t.Errorf("2,000 code points (one of them an emoji): %v", err)
	}
	for _, tt := range []struct{ name, content, want string }{
		{"over 2,000 code points", strings.Repeat("é", 2001), "2000 or fewer"},
		{"empty", "", "empty message"},
	} {
		if _, err := dg.ChannelMessageSend(ch, tt.content); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	for range 14 {
		if _, err := dg.ChannelMessageSend(ch, "filler"); err != nil {
			t.Fatal(err)
		}
	}
	if msgs, err := dg.ChannelMessages(ch, 10, "", "", ""); err != nil || len(msgs) != 10 {
		t.Errorf("ChannelMessages(limit 10) = %d messages, %v; want 10", len(msgs), err)
	}
	if msgs, err := dg.ChannelMessages(ch, 0, "", "", ""); err != nil || len(msgs) != 15 {
		t.Errorf("ChannelMessages(no limit) = %d, %v; want all 15 (the default limit is 50)", len(msgs), err)
	}
	if _, err := dg.ChannelMessages(ch, 101, "", "", ""); err == nil {
		t.Error("a limit over 100 was accepted")
	}

	posted, _ := dg.ChannelMessageSend(ch, "approve?")
	msg, _ := s.MessageByID(posted.ID)
	click := s.Click("111", msg, 0)
	in := &discordgo.Interaction{ID: click.ID, Token: "itoken-" + click.ID, AppID: discordtest.AppID}
	empty := &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource, Data: &discordgo.InteractionResponseData{}}
	if err := dg.InteractionRespond(in, empty); err == nil || !strings.Contains(err.Error(), "empty message") {
		t.Errorf("an empty message response: %v, want 50006", err)
	}
	ok := &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: "noted", Flags: discordgo.MessageFlagsEphemeral}}
	if err := dg.InteractionRespond(in, ok); err != nil {
		t.Fatalf("a message response: %v", err)
	}
	if _, err := dg.FollowupMessageCreate(in, true, &discordgo.WebhookParams{Content: ""}); err == nil || !strings.Contains(err.Error(), "empty message") {
		t.Errorf("an empty follow-up: %v, want 50006", err)
	}
	if _, err := dg.FollowupMessageCreate(in, true, &discordgo.WebhookParams{Content: strings.Repeat("x", 2001)}); err == nil {
		t.Error("a follow-up over 2,000 code points was accepted")
	}
	if _, err := dg.FollowupMessageCreate(in, true, &discordgo.WebhookParams{Content: "and one more thing"}); err != nil {
		t.Errorf("a follow-up: %v", err)
	}
}
