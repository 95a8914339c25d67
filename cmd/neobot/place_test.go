package main

import (
	"testing"

	"github.com/neobot/neobot/adapters/discord"
	"github.com/neobot/neobot/adapters/web"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/tools"
)

// TestPersonalPlaces keeps tools.Personal in step with the adapters: every
// web user, and every Discord direct message, shares one thread workspace,
// so a tool server's {workspace} must be the person's own there.
func TestPersonalPlaces(t *testing.T) {
	tests := []struct {
		name string
		in   core.Inbound
		want bool
	}{
		{"web user", core.Inbound{Thread: core.Thread{Platform: web.Platform, Workspace: web.Workspace}, User: "alice"}, true},
		{"discord dm", core.Inbound{Thread: core.Thread{Platform: discord.Platform, Workspace: discord.DMWorkspace}, User: "42"}, true},
		{"slack dm", core.Inbound{Thread: core.Thread{Platform: "slack", Workspace: "T1"}, User: "U1", DM: true}, true},
		{"slack channel", core.Inbound{Thread: core.Thread{Platform: "slack", Workspace: "T1"}, User: "U1"}, false},
		{"discord guild", core.Inbound{Thread: core.Thread{Platform: discord.Platform, Workspace: "1234"}, User: "42"}, false},
	}
	for _, tt := range tests {
		if got := tools.Personal(tt.in); got != tt.want {
			t.Errorf("tools.Personal(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
