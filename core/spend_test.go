package core_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/neobot/neobot/core"
)

func TestSpendPolicyAuthorize(t *testing.T) {
	slack := func(channel, user string, roles ...string) core.Inbound {
		return core.Inbound{Thread: core.Thread{Platform: "slack", Workspace: "T1", Channel: channel, ID: "1.2"}, User: user, Roles: roles}
	}
	discord := func(channel, thread, user string, roles ...string) core.Inbound {
		return core.Inbound{Thread: core.Thread{Platform: "discord", Workspace: "G1", Channel: channel, ID: thread}, User: user, Roles: roles}
	}
	policy := core.SpendPolicy{
		"slack":    {Users: []string{"U1"}, Channels: []string{"C-treasury"}},
		"discord":  {Roles: []string{"R-finance"}},
		"terminal": {Anyone: true},
		"web":      {},
	}
	tests := []struct {
		name    string
		in      core.Inbound
		setting string // "" when allowed
	}{
		{"listed user in a listed channel", slack("C-treasury", "U1"), ""},
		{"listed user elsewhere", slack("C-random", "U1"), "SLACK_SPEND_CHANNELS"},
		{"unlisted user in a listed channel", slack("C-treasury", "U2"), "SLACK_SPEND_USERS"},
		{"no user", slack("C-treasury", ""), "SLACK_SPEND_USERS"},
		{"role holder in any Discord thread", discord("C9", "T9", "U7", "R-finance"), ""},
		{"Discord user without the role", discord("C9", "T9", "U7", "R-other"), "DISCORD_SPEND_USERS or DISCORD_SPEND_ROLES"},
		{"terminal operator", core.Inbound{Thread: core.Thread{Platform: "terminal"}, User: "me"}, ""},
		{"platform with an empty rule", core.Inbound{Thread: core.Thread{Platform: "web"}, User: "U1"}, "WEB_SPEND_USERS or WEB_SPEND_CHANNELS"},
		{"platform without a rule", core.Inbound{Thread: core.Thread{Platform: "matrix"}, User: "U1"}, "_SPEND_"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := policy.Authorize(tt.in)
			if tt.setting == "" {
				if err != nil {
					t.Errorf("Authorize = %v, want allowed", err)
				}
				return
			}
			var refusal *core.SpendRefusal
			if !errors.As(err, &refusal) || !errors.Is(err, core.ErrSpendForbidden) || !strings.Contains(err.Error(), tt.setting) {
				t.Errorf("Authorize = %v, want a refusal naming %s", err, tt.setting)
			}
		})
	}
	discordThread := core.SpendPolicy{"discord": {Channels: []string{"T-spends"}}}
	if err := discordThread.Authorize(discord("C-parent", "T-spends", "U1")); err != nil {
		t.Errorf("Authorize(in a listed Discord thread) = %v, want allowed", err)
	}
}
