package skill

import (
	"slices"
	"strings"
	"testing"

	"github.com/neobot/neobot/core"
)

func TestGovern(t *testing.T) {
	set := compile(t, `{
		"default": {"instructions": "Be brief."},
		"finance": {"places": ["slack:T1/CFIN"], "spend": true, "instructions": "Amounts in EUR."},
		"team": {"places": ["slack:T1"]},
		"reader": {}}`)
	at := func(ws, ch string) core.Inbound {
		return core.Inbound{Thread: core.Thread{Platform: "slack", Workspace: ws, Channel: ch, ID: "1"}}
	}
	no := false
	if err := set.Govern(map[string]Placed{
		"slack:T1/CGEN": {Skill: "reader", Model: "small-model", Approvers: []string{"UCAROL"}},
		"slack:T1/CFIN": {Instructions: "Never above 100 EUR.", Spend: &no},
		"slack:T2":      {Instructions: "Answer in French."},
	}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in                 core.Inbound
		skill, instruction string
		spend              bool
	}{
		{at("T1", "CGEN"), "reader", "", false},                                         // stored channel binding
		{at("T1", "CFIN"), "finance", "Amounts in EUR.\n\nNever above 100 EUR.", false}, // the file's skill, changed
		{at("T1", "COTHER"), "team", "", false},                                         // untouched: the file's workspace binding
		{at("T2", "C1"), DefaultName, "Be brief.\n\nAnswer in French.", false},          // a stored workspace, no file binding
	}
	for _, tt := range tests {
		sk := set.For(tt.in)
		if sk.Name != tt.skill || sk.Instructions != tt.instruction || sk.Spend != tt.spend {
			t.Errorf("For(%s) = %s %q spend=%v, want %s %q spend=%v", tt.in.Thread, sk.Name, sk.Instructions, sk.Spend, tt.skill, tt.instruction, tt.spend)
		}
	}
	// A place's model and approvers are its own: not its workspace's
	// other channels', nor the named skill's elsewhere.
	if sk := set.For(at("T1", "CGEN")); sk.Model != "small-model" || !slices.Equal(sk.Approvers, []string{"UCAROL"}) {
		t.Errorf("For(T1/CGEN) model %q approvers %v, want small-model [UCAROL]", sk.Model, sk.Approvers)
	}
	for _, in := range []core.Inbound{at("T1", "COTHER"), at("T1", "CFIN"), at("T2", "C1")} {
		if sk := set.For(in); sk.Model != "" || len(sk.Approvers) > 0 {
			t.Errorf("For(%s) model %q approvers %v, want neither", in.Thread, sk.Model, sk.Approvers)
		}
	}
	if r := set.byName["reader"]; r.Model != "" || len(r.Approvers) > 0 {
		t.Errorf("Govern changed the file's skill itself: %+v", r)
	}
	if fin := set.byName["finance"]; !fin.Spend || fin.Instructions != "Amounts in EUR." {
		t.Errorf("Govern changed the file's skill itself: %+v", fin)
	}
	for _, bad := range []map[string]Placed{{"slack:T1/CGEN": {Skill: "nope"}}, {"#general": {}}} {
		if err := set.Govern(bad); err == nil {
			t.Errorf("Govern(%v) = nil, want an error", bad)
		}
	}
	if got := set.For(at("T1", "CGEN")).Name; got != "reader" {
		t.Errorf("a refused Govern changed the places: For = %s, want reader still", got)
	}
	if err := set.Govern(nil); err != nil || set.For(at("T1", "CGEN")).Name != "team" {
		t.Errorf("Govern(nil) = %v, For = %s; want every place back to the file's", err, set.For(at("T1", "CGEN")).Name)
	}
	if err := set.Govern(map[string]Placed{"slack:T1/CFIN": {Skill: DefaultName}}); err != nil || set.For(at("T1", "CFIN")).Instructions != "Be brief." {
		t.Errorf("Govern(the default skill) = %v, For = %+v", err, set.For(at("T1", "CFIN")))
	}
	if !set.Defines("reader") || !set.Defines(DefaultName) || set.Defines("nope") {
		t.Errorf("Defines answers wrong")
	}
	if err := set.Govern(map[string]Placed{"slack:T1": {Skill: "nope"}}); err == nil || !strings.Contains(err.Error(), "does not define") {
		t.Errorf("Govern(unknown skill) = %v", err)
	}
}

// TestGovernOrg: an Enterprise Grid organization's settings apply to
// every workspace of the organization that sets none of its own:
// channel, then workspace, then organization, then platform, then the
// default; a workspace outside the organization, and direct messages,
// never take them.
func TestGovernOrg(t *testing.T) {
	set := compile(t, `{
		"default": {"instructions": "Be brief."},
		"finance": {"places": ["slack:T2/CFIN"], "instructions": "Amounts in EUR."},
		"team": {"places": ["slack:T3"]},
		"reader": {},
		"everyone": {"places": ["slack"]}}`)
	if err := set.Govern(map[string]Placed{
		"slack:E1":    {Skill: "reader", Instructions: "Org rules.", Approvers: []string{"UORG"}},
		"slack:T1":    {Instructions: "Workspace rules."},
		"slack:T2/C9": {Model: "small-model"},
	}); err != nil {
		t.Fatal(err)
	}
	at := func(org, ws, ch string) core.Inbound {
		return core.Inbound{Thread: core.Thread{Platform: "slack", Workspace: ws, Channel: ch, ID: "1"}, Org: org}
	}
	tests := []struct {
		name        string
		in          core.Inbound
		skill, inst string
		approvers   []string
	}{
		{"a workspace of the org that sets nothing", at("E1", "T4", "C1"), "reader", "Org rules.", []string{"UORG"}},
		{"a workspace with settings of its own", at("E1", "T1", "C1"), "everyone", "Workspace rules.", nil},
		{"a channel the file binds", at("E1", "T2", "CFIN"), "finance", "Amounts in EUR.", nil},
		{"a channel with settings of its own", at("E1", "T2", "C9"), "everyone", "", nil},
		{"another channel of that workspace", at("E1", "T2", "C8"), "reader", "Org rules.", []string{"UORG"}},
		{"a workspace the file binds", at("E1", "T3", "C1"), "team", "", nil},
		{"a workspace outside the org", at("", "T4", "C1"), "everyone", "", nil},
		{"a direct message", core.Inbound{Thread: core.Thread{Platform: "slack", Workspace: "T4", Channel: "D1", ID: "1"}, Org: "E1", DM: true}, "everyone", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sk := set.For(tt.in)
			if sk.Name != tt.skill || sk.Instructions != tt.inst || !slices.Equal(sk.Approvers, tt.approvers) {
				t.Errorf("For(%s in %q) = %s %q %v, want %s %q %v", tt.in.Thread, tt.in.Org, sk.Name, sk.Instructions, sk.Approvers, tt.skill, tt.inst, tt.approvers)
			}
		})
	}
}

func TestOrg(t *testing.T) {
	for _, tt := range []struct {
		place, org string
		orgChannel bool
	}{
		{"slack:E0123", "E0123", false},
		{"slack:T0123", "", false},
		{"slack:E0123/C1", "", true},
		{"slack", "", false},
		{"discord:E1", "", false},
	} {
		org, ok := Org(tt.place)
		if org != tt.org || ok != (tt.org != "") || OrgChannel(tt.place) != tt.orgChannel {
			t.Errorf("Org(%q) = %q, %v; OrgChannel = %v; want %q, %v", tt.place, org, ok, OrgChannel(tt.place), tt.org, tt.orgChannel)
		}
	}
}
