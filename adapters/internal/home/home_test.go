package home

import (
	"slices"
	"strings"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/skill"
)

// TestSkills: a workspace's page lists the skills bound to it, its
// channels or its DMs, in words, then the default one for the rest; a
// skill bound only elsewhere is not shown.
func TestSkills(t *testing.T) {
	specs, err := skill.Parse([]byte(`{
		"finance": {"spend": true, "spend_limits": {"EUR": {"per_call": "20", "per_day": "100"}, "pay/send": {"amount": "amount", "in": "EUR"}},
			"side_effects": {"read": "allow", "write": "allow", "external": "ask"}, "places": ["slack:T1/C1", "slack:dm"]},
		"other": {"places": ["slack:T2"]},
		"reader": {"tools": [], "side_effects": {"read": "allow"}, "places": ["slack:T1"]}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	set, err := skill.Compile(specs, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := Skills(set, "slack", "T1")
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"finance", "reader", "default"}) {
		t.Fatalf("Skills(T1) = %v, want finance, reader, then default (other is T2's)", names)
	}
	for _, tc := range []struct {
		sk   Skill
		want []string
	}{
		{got[0], []string{"In #C1; In direct messages with Neo", "Tools: every tool Neo has.", "May read things, change things",
			"Asks in the thread before it may act outside", "May spend, each spend approved by a person's click (at most 20 EUR a call; at most 100 EUR a day)."}},
		{got[1], []string{"Everywhere in this workspace", "Tools: none.", "May read things.", "May not change things", "May not spend."}},
		{got[2], []string{"Everywhere else", "Tools: every tool Neo has."}},
	} {
		text := tc.sk.Place(func(c string) string { return "#" + c }) + " " + strings.Join(tc.sk.Does, " ")
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("skill %s reads %q, want %q in it", tc.sk.Name, text, w)
			}
		}
	}
}

// TestSpendState: a person's recent spends say what each did, a failure
// that provably moved nothing apart from one that may have.
func TestSpendState(t *testing.T) {
	for _, tc := range []struct {
		s    core.Spend
		want string
	}{
		{core.Spend{State: core.SpendCompleted}, "done"},
		{core.Spend{State: core.SpendUnknown}, "outcome unknown: it may have run; it will not be tried again"},
		{core.Spend{State: core.SpendFailed, NothingDone: true}, "failed: nothing was sent"},
		{core.Spend{State: core.SpendFailed}, "failed: it may have moved money, so it counts toward the day"},
	} {
		if got := spendState(tc.s); got != tc.want {
			t.Errorf("spendState(%s, nothing done %v) = %q, want %q", tc.s.State, tc.s.NothingDone, got, tc.want)
		}
	}
}
