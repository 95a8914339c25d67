package skill

import (
	"slices"
	"strings"
	"testing"
	"time"
)

const treasuryPolicy = `{"spend": true, "approvals": {
	"groups": {"treasury": {"slack": ["UANN", "UBEN", "UCAT"], "discord": ["role:42"], "web": ["ann", "ben"]},
	           "cfo": {"slack": ["UCFO"]}},
	"tiers": [
		{"currency": "USDC", "up_to": "1000", "group": "treasury", "quorum": 1},
		{"currency": "USDC", "up_to": "100"},
		{"currency": "USDC", "group": "treasury", "quorum": 2,
		 "remind_after": "1h", "escalate_after": "4h", "escalate_to": "cfo", "expire_after": "24h"}]}}`

func compileOne(t *testing.T, spec string) (*Skill, error) {
	t.Helper()
	specs, err := Parse([]byte(`{"finance": ` + spec + `}`))
	if err != nil {
		return nil, err
	}
	set, err := Compile(specs, nil)
	if err != nil {
		return nil, err
	}
	return set.byName["finance"], nil
}

// TestPolicyTiers: a spend's amount and currency pick the smallest tier
// that takes it, whatever the order the tiers are written in; the tier
// names its platform's approvers, its quorum and its times.
func TestPolicyTiers(t *testing.T) {
	sk, err := compileOne(t, treasuryPolicy)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		amount, currency, platform string
		tier                       string
		approvers                  []string
		need                       int
		escalate                   []string
		err                        string
	}{
		{amount: "5", currency: "USDC", platform: "slack", tier: "up to 100 USDC", need: 1},
		{amount: "100", currency: " usdc", platform: "slack", tier: "up to 100 USDC", need: 1},
		{amount: "100.01", currency: "USDC", platform: "slack", tier: "over 100 up to 1000 USDC", approvers: []string{"UANN", "UBEN", "UCAT"}, need: 1},
		{amount: "1000", currency: "USDC", platform: "discord", tier: "over 100 up to 1000 USDC", approvers: []string{"role:42"}, need: 1},
		{amount: "1000.5", currency: "USDC", platform: "slack", tier: "over 1000 USDC", approvers: []string{"UANN", "UBEN", "UCAT"}, need: 2, escalate: []string{"UCFO"}},
		{amount: "5", currency: "EUR", platform: "slack", err: `currency "EUR" has no approval tier`},
	} {
		a, _ := ParseAmount(tc.amount)
		q, err := sk.Approvals.Quorum(a, tc.currency, tc.platform)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Quorum(%s %s) = %v, want an error with %q", tc.amount, tc.currency, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Quorum(%s %s): %v", tc.amount, tc.currency, err)
		}
		if q.Tier != tc.tier || !slices.Equal(q.Approvers, tc.approvers) || q.Need != tc.need || !slices.Equal(q.EscalateTo, tc.escalate) {
			t.Errorf("Quorum(%s %s, %s) = %+v, want tier %q approvers %v need %d escalate %v", tc.amount, tc.currency, tc.platform, q, tc.tier, tc.approvers, tc.need, tc.escalate)
		}
		if tc.need == 2 && (q.RemindAfter != time.Hour || q.EscalateAfter != 4*time.Hour || q.ExpireAfter != 24*time.Hour) {
			t.Errorf("Quorum(%s) times = %v %v %v, want 1h 4h 24h", tc.amount, q.RemindAfter, q.EscalateAfter, q.ExpireAfter)
		}
	}
	top, _ := compileOne(t, `{"spend": true, "approvals": {"tiers": [{"currency": "USDC", "up_to": "100"}]}}`)
	a, _ := ParseAmount("101")
	if _, err := top.Approvals.Quorum(a, "USDC", "slack"); err == nil || !strings.Contains(err.Error(), "above every approval tier") {
		t.Errorf("Quorum(101 over a top tier of 100) = %v, want a refusal", err)
	}
}

// TestPolicyDescribe: neobot check lists the tiers, smallest first.
func TestPolicyDescribe(t *testing.T) {
	sk, err := compileOne(t, treasuryPolicy)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"up to 100 USDC: any configured approver",
		"over 100 up to 1000 USDC: group treasury",
		"over 1000 USDC: 2 of group treasury, remind after 1h, escalate to cfo after 4h, expire after 24h",
	}
	if got := sk.Approvals.Describe(); !slices.Equal(got, want) {
		t.Errorf("Describe = %q, want %q", got, want)
	}
}

// TestPolicyChecked: every mistake in a policy stops start-up with an
// error naming the skill, the field and the fix.
func TestPolicyChecked(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want string
	}{
		{`{"approvals": {"tiers": [{"currency": "USDC"}]}}`, `approvals: set but the skill may not spend; add "spend": true`},
		{`{"spend": true, "approvals": {"tiers": []}}`, "approvals.tiers: empty"},
		{`{"spend": true, "approvals": {"tiers": [{"currency": " "}]}}`, "approvals.tiers[0]: currency is empty"},
		{`{"spend": true, "approvals": {"tiers": [{"currency": "USDC", "up_to": "lots"}]}}`, `approvals.tiers[0].up_to: "lots" is not a decimal amount`},
		{`{"spend": true, "approvals": {"tiers": [{"currency": "USDC"}, {"currency": "usdc"}]}}`, "approvals.tiers[1]: tiers[0] already takes every amount"},
		{`{"spend": true, "approvals": {"tiers": [{"currency": "USDC", "up_to": "10"}, {"currency": "USDC", "up_to": "10.0"}]}}`, "approvals.tiers[1].up_to: tiers[0] goes up to the same amount"},
		{`{"spend": true, "approvals": {"tiers": [{"currency": "USDC", "group": "ops"}]}}`, `approvals.tiers[0].group: "ops" is not among approvals.groups`},
		{`{"spend": true, "approvals": {"groups": {"ops": {"slack": ["UA"]}}, "tiers": [{"currency": "USDC", "group": "ops", "quorum": 2}]}}`, `approvals.tiers[0].quorum: 2 approvals needed but group "ops" lists 1 slack approver(s)`},
		{`{"spend": true, "approvals": {"tiers": [{"currency": "USDC", "quorum": -1}]}}`, "approvals.tiers[0].quorum: -1; ask for 1 to 20"},
		{`{"spend": true, "approvals": {"tiers": [{"currency": "USDC", "remind_after": "soon"}]}}`, `approvals.tiers[0].remind_after: "soon" is not a positive duration`},
		{`{"spend": true, "approvals": {"tiers": [{"currency": "USDC", "escalate_after": "1h"}]}}`, "approvals.tiers[0]: set escalate_after and escalate_to together"},
		{`{"spend": true, "approvals": {"tiers": [{"currency": "USDC", "expire_after": "0s"}]}}`, `approvals.tiers[0].expire_after: "0s" is not a positive duration`},
		{`{"spend": true, "approvals": {"tiers": [{"currency": "USDC", "remind_after": "1h", "expire_after": "1h"}]}}`, "approvals.tiers[0].remind_after: 1h0m0s is not before expire_after"},
		{`{"spend": true, "approvals": {"tiers": [{"currency": "USDC", "escalate_after": "1h", "escalate_to": "cfo"}]}}`, `approvals.tiers[0].escalate_to: "cfo" is not among approvals.groups`},
		{`{"spend": true, "approvals": {"tiers": [{"currency": "USDC", "remind_after": "2h", "expire_after": "1h"}]}}`, "approvals.tiers[0].remind_after: 2h0m0s is not before expire_after"},
		{`{"spend": true, "approvals": {"groups": {"ops": {}}, "tiers": [{"currency": "USDC"}]}}`, "approvals.groups.ops: lists nobody"},
		{`{"spend": true, "approvals": {"groups": {"ops": {"slack": ["role:1"]}}, "tiers": [{"currency": "USDC"}]}}`, `approvals.groups.ops.slack: "role:1" is not a Slack user ID`},
		{`{"spend": true, "approvals": {"groups": {"ops": {"discord": ["group:S1"]}}, "tiers": [{"currency": "USDC"}]}}`, `approvals.groups.ops.discord: "group:S1" is not a Discord user ID`},
		{`{"spend": true, "approvals": {"tiers": [{"currency": "USDC", "quorom": 2}]}}`, `unknown field "quorom"`},
	} {
		_, err := compileOne(t, tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `skill "finance"`) {
			t.Errorf("Compile(%s) = %v, want an error naming the skill with %q", tc.spec, err, tc.want)
		}
	}
	for _, valid := range []string{
		treasuryPolicy,
		// One approver on each of two platforms; two people for a quorum
		// of two on Slack, none on the others.
		`{"spend": true, "approvals": {"groups": {"ops": {"slack": ["UA"], "discord": ["1"]}, "pair": {"slack": ["UA", "UB"]}, "dw": {"discord": ["1"], "web": ["w"]}},
			"tiers": [{"currency": "USDC", "up_to": "5", "group": "ops"}, {"currency": "USDC", "up_to": "6", "group": "dw"}, {"currency": "USDC", "group": "pair", "quorum": 2}]}}`,
	} {
		if _, err := compileOne(t, valid); err != nil {
			t.Errorf("Compile(%s) = %v, want it valid", valid, err)
		}
	}
}

// TestPolicyNobody: a tier nobody may approve on a platform the skill is
// on is named, with the fix.
func TestPolicyNobody(t *testing.T) {
	sk, err := compileOne(t, treasuryPolicy)
	if err != nil {
		t.Fatal(err)
	}
	if got := sk.Nobody("slack", []string{"UCAROL"}); got != nil {
		t.Errorf("Nobody(slack) = %q, want none", got)
	}
	got := strings.Join(sk.Nobody("discord", nil), "\n")
	for _, want := range []string{
		`approvals.tiers[1] (USDC) asks any configured approver, but none is configured on discord`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Nobody(discord) = %q, want %q", got, want)
		}
	}
	sk.Approvals.Groups["treasury"] = Group{Slack: []string{"UANN", "UBEN"}}
	if got := strings.Join(sk.Nobody("web", []string{"bob"}), "\n"); !strings.Contains(got, `group "treasury" lists no web approver; add one under approvals.groups.treasury.web`) {
		t.Errorf("Nobody(web) = %q, want the empty group named", got)
	}
}
