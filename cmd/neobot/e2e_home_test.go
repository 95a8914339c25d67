package main

import (
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/discord/discordtest"
)

// homeSkills binds a read-only skill to one channel of each platform.
func homeSkills(t *testing.T, slackPlace, discordPlace string) string {
	return writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{
		"reader": map[string]any{"places": []string{slackPlace, discordPlace}, "side_effects": map[string]string{"read": "allow"}},
	}})
}

// TestSlackHomeTab: with the built binary, a person opening Neo's Home
// tab sees what Neo may do where, in words, that nothing waits for their
// click, and their recent spends (none yet).
func TestSlackHomeTab(t *testing.T) {
	w := newSlackWorld(t)
	w.env["NEO_CONFIG"] = homeSkills(t, "slack:T0TEAM/C0DOCS", "discord:1/2")
	p := w.start(t, 1)
	w.slack.AppHomeOpened("UALICE", "D0DM", "home")
	h, err := w.slack.WaitHome(waitCtx(t), "UALICE", nil)
	if err != nil {
		t.Fatalf("no Home tab: %v\n%s", err, p.output.String())
	}
	for _, want := range []string{"What Neo may do here", "In <#C0DOCS>* (skill `reader`)", "May read things.", "May not spend.",
		"Everywhere else* (skill `default`)", "Nothing is waiting for your click.", "You have asked for no spends in the last 30 days."} {
		if !strings.Contains(h.Rendered(), want) {
			t.Errorf("Home tab lacks %q:\n%s", want, h.Rendered())
		}
	}
	p.stop(t)
}

// TestDiscordNeoCommand: with the built binary, /neo is registered and
// answers the person privately with the same page.
func TestDiscordNeoCommand(t *testing.T) {
	w := newDiscordWorld(t)
	w.env["NEO_CONFIG"] = homeSkills(t, "slack:T1/C1", "discord:"+discordtest.GuildID+"/"+discordtest.ChannelID)
	p := w.start(t, 1)
	if _, err := w.discord.WaitCall(waitCtx(t), "PUT /applications/{app}/commands", nil); err != nil {
		t.Fatalf("/neo never registered: %v\n%s", err, p.output.String())
	}
	r, err := w.discord.WaitResponse(waitCtx(t), w.discord.SlashCommand("111", discordtest.ChannelID, "neo"))
	if err != nil {
		t.Fatalf("no answer to /neo: %v\n%s", err, p.output.String())
	}
	if r.Flags&discordtest.FlagEphemeral == 0 {
		t.Errorf("/neo answered in public (flags %d), want privately", r.Flags)
	}
	for _, want := range []string{"**In <#" + discordtest.ChannelID + ">** (skill `reader`)", "May read things.",
		"Nothing is waiting for your click.", "You have asked for no spends in the last 30 days."} {
		if !strings.Contains(r.Content, want) {
			t.Errorf("/neo lacks %q:\n%s", want, r.Content)
		}
	}
	p.stop(t)
}
