package discord

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/core"
)

func TestInert(t *testing.T) {
	tests := []struct{ in, want string }{
		{"[Approve here](https://evil.test/pay)", "Approve here (<https://evil.test/pay>)"},
		{"see [https://docs.test](https://docs.test/)", "see <https://docs.test/>"},
		{"[x](<https://a.test>)", "x (<https://a.test>)"},
		{"```\n[kept](https://in.code)\n```", "```\n[kept](https://in.code)\n```"},
		{"plain https://bare.test stays", "plain https://bare.test stays"},
	}
	for _, tt := range tests {
		if got := inert(tt.in); got != tt.want {
			t.Errorf("inert(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestAnswerIsInert: an answer can't ping @everyone or a role, and its
// links show where they go.
func TestAnswerIsInert(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	th := e.discord.AddThread(discordtest.ChannelID, "inert")
	thread := core.Thread{Platform: Platform, Workspace: discordtest.GuildID, Channel: discordtest.ChannelID, ID: th.ID}
	if err := e.a.Reporter(thread).Say(e.ctx, "@everyone <@&42> [Approve here](https://evil.test/pay)"); err != nil {
		t.Fatal(err)
	}
	msgs := e.botMessages(th.ID)
	if len(msgs) != 1 || msgs[0].Content != "@everyone <@&42> Approve here (<https://evil.test/pay>)" {
		t.Fatalf("posted %+v", msgs)
	}
	var allowed struct {
		Parse []string `json:"parse"`
		Roles []string `json:"roles"`
	}
	_ = json.Unmarshal(msgs[0].AllowedMentions, &allowed)
	if slices.Contains(allowed.Parse, "everyone") || slices.Contains(allowed.Parse, "roles") || len(allowed.Roles) > 0 {
		t.Errorf("allowed mentions %+v, want no @everyone and no roles", allowed)
	}
}
