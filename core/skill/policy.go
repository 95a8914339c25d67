package skill

import (
	"fmt"
	"maps"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/neobot/neobot/core"
)

// Policy is a skill's "approvals": who approves a spend, by its amount
// and currency.
//
//	{"groups": {"treasury": {"slack": ["U0ANN", "group:S0TREASURY"], "discord": ["role:4242"]},
//	            "cfo": {"slack": ["U0CFO"]}},
//	 "tiers": [{"currency": "USDC", "up_to": "100"},
//	           {"currency": "USDC", "up_to": "1000", "group": "treasury"},
//	           {"currency": "USDC", "group": "treasury", "quorum": 2,
//	            "remind_after": "1h", "escalate_after": "4h", "escalate_to": "cfo", "expire_after": "24h"}]}
//
// While a policy is set, a spend in a currency no tier covers, or above
// every tier of its currency, is refused before anyone is asked.
type Policy struct {
	// Groups are the approver groups by name.
	Groups map[string]Group `json:"groups,omitempty"`
	// Tiers are the approval tiers, in any order.
	Tiers []Tier `json:"tiers"`
}

// Group is a named set of approvers, per platform: on Slack user IDs and
// user groups ("group:S0123"), on Discord user IDs and roles
// ("role:4242"), on the web user names.
type Group struct {
	Slack   []string `json:"slack,omitempty"`
	Discord []string `json:"discord,omitempty"`
	Web     []string `json:"web,omitempty"`
}

// On returns the group's approvers on platform.
func (g Group) On(platform string) []string {
	switch platform {
	case "slack":
		return g.Slack
	case "discord":
		return g.Discord
	case "web":
		return g.Web
	}
	return nil
}

// Tier is who approves spends of one currency up to an amount.
type Tier struct {
	Currency string `json:"currency"`
	// UpTo is the largest amount of the tier, inclusive; empty, the tier
	// takes every amount above the currency's other tiers.
	UpTo Decimal `json:"up_to,omitempty"`
	// Group names the group whose members approve; empty, any of the
	// platform's configured approvers (SLACK_APPROVERS, ...).
	Group string `json:"group,omitempty"`
	// Quorum is how many distinct people must approve (default 1); the
	// requester never counts.
	Quorum int `json:"quorum,omitempty"`
	// RemindAfter, EscalateAfter and ExpireAfter are Go durations
	// ("30m", "4h") from when the approval is asked. EscalateTo names the
	// group asked as well once EscalateAfter has passed.
	RemindAfter   string `json:"remind_after,omitempty"`
	EscalateAfter string `json:"escalate_after,omitempty"`
	EscalateTo    string `json:"escalate_to,omitempty"`
	ExpireAfter   string `json:"expire_after,omitempty"`
}

// platforms are the chat platforms a group can name approvers on.
func platforms() []string { return []string{"slack", "discord", "web"} }

var (
	slackIDRe   = regexp.MustCompile(`^(group:)?[A-Z0-9]+$`)
	discordIDRe = regexp.MustCompile(`^(role:)?[0-9A-Za-z_-]+$`)
)

// label names tier t for people: "up to 100 USDC", "over 1000 USDC".
func (t Tier) label(below Decimal) string {
	cur := strings.TrimSpace(t.Currency)
	switch {
	case t.UpTo != "" && below != "":
		return fmt.Sprintf("over %s up to %s %s", below, t.UpTo, cur)
	case t.UpTo != "":
		return fmt.Sprintf("up to %s %s", t.UpTo, cur)
	case below != "":
		return fmt.Sprintf("over %s %s", below, cur)
	}
	return "any amount of " + cur
}

// duration reads one of a tier's durations; "" is zero.
func duration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration; write one like \"30m\" or \"24h\"", s)
	}
	return d, nil
}

// tiersOf returns the tiers of the currency spelt cur (compared as
// [NormalizeCurrency] does), smallest first, the unbounded one last, with
// the bound of the tier below each.
func (p *Policy) tiersOf(cur string) (tiers []Tier, below []Decimal) {
	n := NormalizeCurrency(cur)
	for _, t := range p.Tiers {
		if NormalizeCurrency(t.Currency) == n {
			tiers = append(tiers, t)
		}
	}
	slices.SortStableFunc(tiers, func(a, b Tier) int {
		switch {
		case a.UpTo == "" && b.UpTo == "":
			return 0
		case a.UpTo == "":
			return 1
		case b.UpTo == "":
			return -1
		}
		x, _ := ParseAmount(a.UpTo)
		y, _ := ParseAmount(b.UpTo)
		if x == nil || y == nil {
			return 0
		}
		return x.Cmp(y)
	})
	below = make([]Decimal, len(tiers))
	for i := 1; i < len(tiers); i++ {
		below[i] = tiers[i-1].UpTo
	}
	return tiers, below
}

// Quorum returns what the tier of a spend of amount in currency asks on
// platform, or an error saying, for the person, why no tier covers it.
// A nil Policy asks for one configured approver (nil Quorum).
func (p *Policy) Quorum(amount *big.Rat, currency, platform string) (*core.Quorum, error) {
	if p == nil {
		return nil, nil
	}
	tiers, below := p.tiersOf(currency)
	if len(tiers) == 0 {
		return nil, fmt.Errorf("its currency %q has no approval tier here, so nobody may approve it", currency)
	}
	for i, t := range tiers {
		if t.UpTo != "" {
			max, err := ParseAmount(t.UpTo)
			if err != nil || amount.Cmp(max) > 0 {
				continue
			}
		}
		return p.compile(t, below[i], platform), nil
	}
	last := tiers[len(tiers)-1]
	return nil, fmt.Errorf("%s %s is above every approval tier here (the largest goes up to %s %s), so nobody may approve it",
		FormatAmount(amount), strings.TrimSpace(last.Currency), last.UpTo, strings.TrimSpace(last.Currency))
}

// compile turns tier t into the gate's quorum on platform. The tier was
// validated at start, so its durations read.
func (p *Policy) compile(t Tier, below Decimal, platform string) *core.Quorum {
	q := &core.Quorum{Tier: t.label(below), Need: max(t.Quorum, 1)}
	if t.Group != "" {
		q.Approvers = slices.Clone(p.Groups[t.Group].On(platform))
	}
	q.RemindAfter, _ = duration(t.RemindAfter)
	q.ExpireAfter, _ = duration(t.ExpireAfter)
	if t.EscalateTo != "" {
		q.EscalateAfter, _ = duration(t.EscalateAfter)
		q.EscalateTo = slices.Clone(p.Groups[t.EscalateTo].On(platform))
	}
	return q
}

// checkPolicy returns what is wrong with a skill's approvals, each
// problem naming the field and the fix.
func checkPolicy(p *Policy, spend bool) []string {
	if p == nil {
		return nil
	}
	var out []string
	bad := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if !spend {
		bad(`approvals: set but the skill may not spend; add "spend": true or remove "approvals"`)
	}
	for _, name := range slices.Sorted(maps.Keys(p.Groups)) {
		g := p.Groups[name]
		if len(g.Slack)+len(g.Discord)+len(g.Web) == 0 {
			bad("approvals.groups.%s: lists nobody; name approvers under slack, discord or web", name)
		}
		for _, s := range g.Slack {
			if !slackIDRe.MatchString(s) {
				bad("approvals.groups.%s.slack: %q is not a Slack user ID (U0123) or user group (group:S0123)", name, s)
			}
		}
		for _, d := range g.Discord {
			if !discordIDRe.MatchString(d) {
				bad("approvals.groups.%s.discord: %q is not a Discord user ID or role (role:1234)", name, d)
			}
		}
		for _, w := range g.Web {
			if strings.TrimSpace(w) == "" || strings.ContainsAny(w, " \t:") {
				bad("approvals.groups.%s.web: %q is not a web user name", name, w)
			}
		}
	}
	if len(p.Tiers) == 0 {
		bad(`approvals.tiers: empty; add a tier such as {"currency": "USDC", "up_to": "100"}`)
	}
	unbounded := map[string]int{}
	bounds := map[string]int{}
	for i, t := range p.Tiers {
		at := fmt.Sprintf("approvals.tiers[%d]", i)
		cur := NormalizeCurrency(t.Currency)
		if cur == "" {
			bad("%s: currency is empty; name the currency the tier is for", at)
		}
		if t.UpTo == "" {
			if j, dup := unbounded[cur]; dup {
				bad("%s: tiers[%d] already takes every amount of %s above the others; give one of them an up_to", at, j, t.Currency)
			}
			unbounded[cur] = i
		} else if a, err := ParseAmount(t.UpTo); err != nil {
			bad("%s.up_to: %v; write a decimal such as \"100\"", at, err)
		} else {
			k := cur + " " + a.RatString()
			if j, dup := bounds[k]; dup {
				bad("%s.up_to: tiers[%d] goes up to the same amount of %s; give each tier its own up_to", at, j, t.Currency)
			}
			bounds[k] = i
		}
		if _, ok := p.Groups[t.Group]; t.Group != "" && !ok {
			bad("%s.group: %q is not among approvals.groups; define it there", at, t.Group)
		}
		switch {
		case t.Quorum < 0 || t.Quorum > 20:
			bad("%s.quorum: %d; ask for 1 to 20 distinct approvers", at, t.Quorum)
		case t.Group != "" && t.Quorum > 1:
			for _, pl := range platforms() {
				if people := listed(p.Groups[t.Group].On(pl)); people > 0 && people == len(p.Groups[t.Group].On(pl)) && people < t.Quorum {
					bad("%s.quorum: %d approvals needed but group %q lists %d %s approver(s); list more people, or a role or user group", at, t.Quorum, t.Group, people, pl)
				}
			}
		}
		var ds [3]time.Duration
		for k, f := range []struct{ name, v string }{{"remind_after", t.RemindAfter}, {"escalate_after", t.EscalateAfter}, {"expire_after", t.ExpireAfter}} {
			d, err := duration(f.v)
			if err != nil {
				bad("%s.%s: %v", at, f.name, err)
			}
			ds[k] = d
		}
		switch {
		case (t.EscalateAfter == "") != (t.EscalateTo == ""):
			bad("%s: set escalate_after and escalate_to together: when, and which group is asked then", at)
		case t.EscalateTo != "":
			if _, ok := p.Groups[t.EscalateTo]; !ok {
				bad("%s.escalate_to: %q is not among approvals.groups; define it there", at, t.EscalateTo)
			}
		}
		if ds[2] > 0 {
			for k, name := range []string{"remind_after", "escalate_after"} {
				if ds[k] >= ds[2] {
					bad("%s.%s: %s is not before expire_after (%s), so it would never happen", at, name, ds[k], ds[2])
				}
			}
		}
	}
	return out
}

// listed counts the people (not roles or user groups) among approvers.
func listed(approvers []string) int {
	n := 0
	for _, a := range approvers {
		if !strings.Contains(a, ":") {
			n++
		}
	}
	return n
}

// Nobody says, for each tier of the skill's policy, why nobody may
// approve it on platform, where the platform's configured approvers are
// configured (SLACK_APPROVERS, ...): a tier for "any approver" with none
// configured, or a group listing nobody on the platform. It returns nil
// when every tier has someone.
func (s *Skill) Nobody(platform string, configured []string) []string {
	p := s.Approvals
	if p == nil {
		return nil
	}
	var out []string
	for i, t := range p.Tiers {
		switch {
		case t.Group == "" && len(configured) == 0:
			out = append(out, fmt.Sprintf("skill %q: approvals.tiers[%d] (%s) asks any configured approver, but none is configured on %s; set the platform's approvers or name a group", s.Name, i, t.Currency, platform))
		case t.Group != "" && len(p.Groups[t.Group].On(platform)) == 0:
			out = append(out, fmt.Sprintf("skill %q: approvals.tiers[%d] (%s) has nobody who may approve on %s: group %q lists no %s approver; add one under approvals.groups.%s.%s", s.Name, i, t.Currency, platform, t.Group, platform, t.Group, platform))
		}
	}
	return out
}

// Platforms returns the chat platforms the skill's places are on; the
// default skill, which takes every place without a binding, is on all.
func (s *Skill) Platforms() []string {
	if s.Name == DefaultName {
		return platforms()
	}
	var out []string
	for _, pl := range s.Places {
		p, _, _ := strings.Cut(pl, ":")
		if slices.Contains(platforms(), p) && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// Describe returns one line per tier, smallest first in each currency,
// for neobot check: "over 1000 USDC: 2 of group treasury, remind after
// 1h, escalate to cfo after 4h, expire after 24h". A nil Policy has none.
func (p *Policy) Describe() []string {
	if p == nil {
		return nil
	}
	var curs []string
	for _, t := range p.Tiers {
		if c := NormalizeCurrency(t.Currency); !slices.Contains(curs, c) {
			curs = append(curs, c)
		}
	}
	slices.Sort(curs)
	var out []string
	for _, c := range curs {
		tiers, below := p.tiersOf(c)
		for i, t := range tiers {
			who := "any configured approver"
			if t.Group != "" {
				who = "group " + t.Group
			}
			if t.Quorum > 1 {
				who = fmt.Sprintf("%d of %s", t.Quorum, who)
			}
			line := t.label(below[i]) + ": " + who
			if t.RemindAfter != "" {
				line += ", remind after " + t.RemindAfter
			}
			if t.EscalateTo != "" {
				line += ", escalate to " + t.EscalateTo + " after " + t.EscalateAfter
			}
			if t.ExpireAfter != "" {
				line += ", expire after " + t.ExpireAfter
			}
			out = append(out, line)
		}
	}
	return out
}
