package home

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/skill"
	"github.com/neobot/neobot/core/usage"
)

type fixedBudgets struct {
	all []usage.Budget
	err error
}

func (b fixedBudgets) Budgets(context.Context, core.Inbound) ([]usage.Budget, error) {
	return b.all, b.err
}

// TestSettings: a place's settings read as sentences: its skill, its
// instructions abridged, its model, its budgets with what is left,
// whether Neo may spend, and who approves (the platform's and the
// place's own); a place without stored settings says the file's.
func TestSettings(t *testing.T) {
	specs, err := skill.Parse([]byte(`{"reader": {"spend": false}, "pay": {"spend": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	set, err := skill.Compile(specs, nil)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("Answer like a pirate. ", 30)
	if err := set.Govern(map[string]skill.Placed{
		"slack:T1/CPAY": {Skill: "pay", Instructions: long + "\x00!here\x01", Model: "small-model", Approvers: []string{"UDAVE"}},
		"slack:T1/CRO":  {Skill: "reader"},
	}); err != nil {
		t.Fatal(err)
	}
	at := func(ch string) core.Inbound {
		return core.Inbound{Thread: core.Thread{Platform: "slack", Workspace: "T1", Channel: ch}}
	}
	g := Governed{Skills: set, Model: "big-model", Approvers: []string{"UCAROL"}, Mention: func(u string) string { return "<@" + u + ">" },
		Budgets: fixedBudgets{all: []usage.Budget{{Where: "this channel", Tokens: 5000, Spent: 1200}}}}
	tests := []struct {
		name      string
		g         Governed
		in        core.Inbound
		want, not []string
	}{
		{"stored settings", g, at("CPAY"), []string{
			`In this channel Neo follows the skill "pay".`,
			`Its instructions here: "Answer like a pirate. Answer`, ` …".`,
			"Neo answers here with the model small-model, which this place's settings chose.",
			"The daily budget of this channel is 5000 model tokens (UTC day); 3800 are left today.",
			"Neo may delegate spends here",
			"They are approved by <@UCAROL>, and here also by <@UDAVE>, whom this place's settings name.",
		}, []string{"\x00", "big-model"}},
		{"no spend", g, at("CRO"), []string{`the skill "reader"`, "No instructions are added here.", "with the model big-model.", "Neo may not delegate spends here."}, []string{"approved by"}},
		{"budget spent", Governed{Skills: set, Budgets: fixedBudgets{all: []usage.Budget{{Where: "this workspace", Tokens: 10, Spent: 12}}}}, core.Inbound{Thread: core.Thread{Platform: "slack", Workspace: "T1"}},
			[]string{"In this workspace Neo follows the default skill.", "none are left today, so Neo declines until it resets at 00:00 UTC", "Nobody is configured to approve them"}, nil},
		{"budget unreadable", Governed{Skills: set, Budgets: fixedBudgets{err: errors.New("down")}}, at("CRO"), []string{"could not be read just now"}, nil},
		{"no budget", Governed{Skills: set, Budgets: fixedBudgets{}}, at("CRO"), []string{"No daily token budget is set here."}, nil},
		{"direct messages", Governed{Skills: set}, core.Inbound{DM: true, Thread: core.Thread{Platform: "slack", Workspace: "T1"}},
			[]string{"In direct messages Neo follows the default skill."}, []string{"this workspace"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(Settings(context.Background(), tt.g, tt.in), " ")
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("settings lack %q:\n%s", w, got)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("settings hold %q:\n%s", n, got)
				}
			}
		})
	}
}
