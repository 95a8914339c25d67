// Package home gathers what a person's own page shows, whatever the
// platform renders it with (Slack's Home tab, Discord's /neo): what Neo
// may do where they meet it, the approvals waiting for their click, their
// accounts on per-user MCP servers, and their recent spends.
package home

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/skill"
)

// Accounts are the per_user MCP servers people connect their own
// account to (core/mcp.Manager).
type Accounts interface {
	Accounts(ctx context.Context, place mcp.Place) ([]mcp.Account, error)
	Connect(ctx context.Context, alias string, place mcp.Place) (string, error)
	Disconnect(ctx context.Context, alias string, place mcp.Place) error
}

// Spends is the spend ledger (core.SpendLedger).
type Spends interface {
	SpendsSince(ctx context.Context, since time.Time) ([]core.Spend, error)
}

// Parts are what the operator wires in for people's pages, the same on
// every platform: each chat adapter's Options embed them (slack.Home,
// discord.Home). Any may be nil or empty, which leaves its part out.
type Parts struct {
	// Skills are what Neo may do where; nil is the built-in default
	// skill.
	Skills *skill.Set
	// Accounts are the per_user MCP servers people connect their own
	// account to from their page (core/mcp.Manager).
	Accounts Accounts
	// Spends is the spend ledger, for each person's recent spends.
	Spends Spends
	// Budgets tell the daily token budgets over a place, for its
	// settings (*usage.Meter).
	Budgets Budgets
	// Model is the configured main model, named in a place's settings.
	Model string
}

// Sources are p's sources of a page, with the gates waiting for clicks.
func (p Parts) Sources(gates *core.Gates) Sources {
	return Sources{Skills: p.Skills, Gates: gates, Accounts: p.Accounts, Spends: p.Spends}
}

// Governed is what a place's settings are read from: p, with the
// platform's approvers and how it writes a mention.
func (p Parts) Governed(approvers []string, mention func(user string) string) Governed {
	return Governed{Skills: p.Skills, Budgets: p.Budgets, Model: p.Model, Approvers: approvers, Mention: mention}
}

// Sources are where a page's parts come from; any may be nil, which
// leaves its part out.
type Sources struct {
	Skills   *skill.Set
	Gates    *core.Gates
	Accounts Accounts
	Spends   Spends
	// Now tells the time (default time.Now).
	Now func() time.Time
}

// Limits of a page: enough to act on, few enough for any platform.
const (
	MaxSkills    = 10
	MaxApprovals = 10
	MaxAccounts  = 10
	MaxSpends    = 10
	// SpendWindow is how far back recent spends go.
	SpendWindow = 30 * 24 * time.Hour
)

// Page is one person's page in one workspace.
type Page struct {
	// Skills say what Neo may do, place by place.
	Skills []Skill
	// Approvals are the gates waiting for the person's click, oldest first.
	Approvals []core.Gate
	// MoreApprovals counts the waiting gates past MaxApprovals.
	MoreApprovals int
	// Accounts are the person's per-user MCP accounts (none when no
	// server is per_user).
	Accounts []mcp.Account
	// Spends are the person's spends of the last SpendWindow, newest first.
	Spends []core.Spend
	// Problems are sentences about parts that could not be read.
	Problems []string
	// Settings say how Neo is governed where the page was asked for
	// (Settings), one sentence each; none outside a place.
	Settings []string
}

// Skill is one skill as a person reads it.
type Skill struct {
	Name string
	// Where says where it applies, in words; Channels are the channel IDs
	// it is bound to in the workspace, for the platform to render as links.
	Where    string
	Channels []string
	// Does lists what it lets Neo do, one short sentence each.
	Does []string
}

// Place says where sk applies, capitalized: its channels, each rendered
// by link, then the rest ("In #a, #b; Everywhere else").
func (sk Skill) Place(link func(channel string) string) string {
	var where []string
	if len(sk.Channels) > 0 {
		chans := make([]string, 0, len(sk.Channels))
		for _, c := range sk.Channels {
			chans = append(chans, link(c))
		}
		where = append(where, "In "+strings.Join(chans, ", "))
	}
	if sk.Where != "" {
		where = append(where, strings.ToUpper(sk.Where[:1])+sk.Where[1:])
	}
	return strings.Join(where, "; ")
}

// Person is whom a page is for.
type Person struct {
	Platform, Workspace, User string
	// Roles are the person's platform roles (Discord), for approvals.
	Roles []string
}

// Build gathers p's page. Nothing here fails: a part that cannot be read
// is left out and said in Problems.
func Build(ctx context.Context, src Sources, p Person) Page {
	now := time.Now
	if src.Now != nil {
		now = src.Now
	}
	var page Page
	page.Skills = Skills(src.Skills, p.Platform, p.Workspace)
	waiting := src.Gates.Waiting(ctx, p.Platform, p.Workspace, p.User, p.Roles)
	if len(waiting) > MaxApprovals {
		page.MoreApprovals = len(waiting) - MaxApprovals
		waiting = waiting[:MaxApprovals]
	}
	page.Approvals = waiting
	if src.Accounts != nil {
		accts, err := src.Accounts.Accounts(ctx, PlaceOf(p))
		if err != nil {
			page.Problems = append(page.Problems, "Your connected accounts could not be read just now.")
		}
		page.Accounts = accts[:min(len(accts), MaxAccounts)]
	}
	if src.Spends != nil {
		all, err := src.Spends.SpendsSince(ctx, now().Add(-SpendWindow))
		if err != nil {
			page.Problems = append(page.Problems, "Your recent spends could not be read just now.")
		}
		for _, s := range slices.Backward(all) {
			if s.Requester == p.User && s.Thread.Platform == p.Platform && s.Thread.Workspace == p.Workspace {
				page.Spends = append(page.Spends, s)
				if len(page.Spends) == MaxSpends {
					break
				}
			}
		}
	}
	return page
}

// PlaceOf is the person's place for their per-user accounts: the one a
// turn of theirs connects with.
func PlaceOf(p Person) mcp.Place {
	return mcp.Place{Platform: p.Platform, Workspace: p.Workspace, User: p.User}
}

// Skills describes the skills that apply in a workspace of platform: the
// ones bound to it, its channels or its direct messages, then the default
// one, which applies everywhere else.
func Skills(set *skill.Set, platform, workspace string) []Skill {
	var out []Skill
	var def *skill.Skill
	for _, sk := range set.Skills() {
		if sk.Name == skill.DefaultName || len(sk.Places) == 0 {
			def = cmpSkill(def, sk)
			continue
		}
		s := Skill{Name: sk.Name, Does: Does(sk)}
		var where []string
		for _, pl := range sk.Places {
			scope, ok := strings.CutPrefix(pl, platform)
			switch {
			case !ok:
			case scope == "":
				where = append(where, "everywhere on "+titled(platform))
			case scope == ":dm":
				where = append(where, "in direct messages with Neo")
			case scope == ":"+workspace:
				where = append(where, "everywhere in this workspace")
			case strings.HasPrefix(scope, ":"+workspace+"/"):
				s.Channels = append(s.Channels, strings.TrimPrefix(scope, ":"+workspace+"/"))
			}
		}
		if len(where) == 0 && len(s.Channels) == 0 {
			continue // bound elsewhere only
		}
		s.Where = strings.Join(where, ", ")
		out = append(out, s)
	}
	if def != nil {
		where := "everywhere else"
		if len(out) == 0 {
			where = "everywhere"
		}
		out = append(out, Skill{Name: def.Name, Where: where, Does: Does(def)})
	}
	return out[:min(len(out), MaxSkills)]
}

// cmpSkill keeps the skill named default over an unbound one.
func cmpSkill(have, sk *skill.Skill) *skill.Skill {
	if have == nil || sk.Name == skill.DefaultName {
		return sk
	}
	return have
}

func titled(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// effectWords names each class of side effect for a person.
var effectWords = []struct {
	e     mcp.Effect
	words string
}{
	{mcp.EffectRead, "read things"},
	{mcp.EffectWrite, "change things (files, records, drafts)"},
	{mcp.EffectExternal, "act outside (send messages, call other services)"},
}

// Does says in words what a skill lets Neo do.
func Does(sk *skill.Skill) []string {
	var out []string
	if tools := sk.Tools(); tools == nil {
		out = append(out, "Tools: every tool Neo has.")
	} else if len(tools) == 0 {
		out = append(out, "Tools: none.")
	} else {
		names := make([]string, 0, len(tools))
		for _, t := range tools {
			names = append(names, toolName(t))
		}
		out = append(out, "Tools: "+strings.Join(names, ", ")+".")
	}
	var allowed, asked, denied []string
	for _, ew := range effectWords {
		switch sk.Rule(ew.e) {
		case skill.Allow:
			allowed = append(allowed, ew.words)
		case skill.Ask:
			asked = append(asked, ew.words)
		default:
			denied = append(denied, ew.words)
		}
	}
	if len(allowed) > 0 {
		out = append(out, "May "+strings.Join(allowed, ", ")+".")
	}
	if len(asked) > 0 {
		out = append(out, "Asks in the thread before it may "+strings.Join(asked, ", ")+".")
	}
	if len(denied) > 0 {
		out = append(out, "May not "+strings.Join(denied, ", ")+".")
	}
	if !sk.Spend {
		out = append(out, "May not spend.")
	} else {
		line := "May spend, each spend approved by a person's click"
		var limits []string
		for _, cur := range slices.Sorted(maps.Keys(sk.SpendLimits.Currencies)) {
			l := sk.SpendLimits.Currencies[cur]
			if l.PerCall != "" {
				limits = append(limits, fmt.Sprintf("at most %s %s a call", l.PerCall, cur))
			}
			if l.PerDay != "" {
				limits = append(limits, fmt.Sprintf("at most %s %s a day", l.PerDay, cur))
			}
		}
		if len(limits) > 0 {
			line += " (" + strings.Join(limits, "; ") + ")"
		}
		out = append(out, line+".")
	}
	return out
}

// toolName shortens a pinned tool URI to "alias/tool".
func toolName(uri string) string {
	s := strings.TrimPrefix(uri, "matrix://tool/mcp/")
	s, _, _ = strings.Cut(s, "@")
	return s
}

// SpendLine says one spend in words, without its link: what, how much,
// and how it ended.
func SpendLine(s core.Spend) string {
	what := s.Summary
	if what == "" {
		what = s.Server + "/" + s.Name
	}
	if s.Amount != "" {
		what += " — " + strings.TrimSpace(s.Amount+" "+s.Currency)
	}
	return what + " (" + spendState(s) + ", " + s.Created.UTC().Format("2006-01-02") + ")"
}

func spendState(s core.Spend) string {
	switch s.State {
	case core.SpendCompleted:
		return "done"
	case core.SpendUnknown:
		return "outcome unknown: it may have run; it will not be tried again"
	case core.SpendCalling:
		return "running"
	case core.SpendDenied:
		return "denied"
	case core.SpendFailed:
		if s.NothingDone {
			return "failed: nothing was sent"
		}
		return "failed: it may have moved money, so it counts toward the day"
	case core.SpendRefused:
		return "refused: over a spend limit"
	case core.SpendAsked, core.SpendPlanned:
		return "waiting for an approval"
	case core.SpendCancelled:
		return "cancelled"
	}
	return string(s.State)
}
