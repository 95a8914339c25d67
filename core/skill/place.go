package skill

import (
	"fmt"
	"slices"
	"strings"

	"github.com/neobot/neobot/core"
)

// ValidPlace reports whether place is written as a skill's places are:
// "slack", "slack:dm", "slack:T0123", "slack:T0123/C0456" (the same for
// discord), "web", "web:web/alice".
func ValidPlace(place string) bool { return placeRe.MatchString(place) }

// PlacesOf returns the places over in, most specific first: its channel,
// its workspace, its Enterprise Grid organization (when in.Org says one)
// and its platform; for a direct message its platform's "dm" and the
// platform (workspaces, organizations and channels never cover DMs).
func PlacesOf(in core.Inbound) []string {
	p := in.Thread.Platform
	if in.DM {
		return []string{p + ":dm", p}
	}
	out := []string{p + ":" + in.Thread.Workspace + "/" + in.Thread.Channel, p + ":" + in.Thread.Workspace}
	if in.Org != "" && in.Org != in.Thread.Workspace {
		out = append(out, p+":"+in.Org)
	}
	return append(out, p)
}

// Org returns the Enterprise Grid organization place names ("E0123" for
// "slack:E0123"); ok is false for any other place. Slack's organization
// IDs start with E, its workspaces' with T.
func Org(place string) (org string, ok bool) {
	rest, ok := strings.CutPrefix(place, "slack:")
	if !ok || !strings.HasPrefix(rest, "E") || strings.Contains(rest, "/") {
		return "", false
	}
	return rest, true
}

// OrgChannel reports whether place is a channel written under an
// Enterprise Grid organization ("slack:E0123/C0456"), which no thread
// is in: a channel belongs to a workspace (slack:T0123/C0456).
func OrgChannel(place string) bool {
	rest, ok := strings.CutPrefix(place, "slack:")
	return ok && strings.HasPrefix(rest, "E") && strings.Contains(rest, "/")
}

// Placed is what a place's stored settings (core/governance) change in
// the skill it gets.
type Placed struct {
	// Skill names the skill of the place; "" keeps the one the settings
	// file gives it.
	Skill string
	// Instructions are added after the skill's.
	Instructions string
	// Spend, when set, replaces the skill's Spend.
	Spend *bool
	// Model, when set, is the main model of the place's turns.
	Model string
	// Approvers may approve spends there besides the platform's
	// configured approvers.
	Approvers []string
}

// Govern makes places' stored settings apply from the next call of For
// on: a place listed gets its Placed skill, before the file's binding of
// the same place (a more specific place the file binds still wins over a
// less specific one stored). Each call replaces the previous places
// whole. A place not written as a place, or naming a skill the set does
// not have, is an error, and nothing changes. It is safe to call while
// For runs.
func (s *Set) Govern(places map[string]Placed) error {
	out := make(map[string]*Skill, len(places))
	for place, p := range places {
		if !ValidPlace(place) {
			return fmt.Errorf("skill: stored settings of %q: not a place", place)
		}
		base := s.filed(place)
		if p.Skill == DefaultName {
			base = s.def
		} else if p.Skill != "" {
			sk, ok := s.byName[p.Skill]
			if !ok {
				return fmt.Errorf("skill: stored settings of %s name skill %q, which the settings file does not define", place, p.Skill)
			}
			base = sk
		}
		sk := *base
		if p.Instructions != "" {
			sk.Instructions = strings.TrimSpace(sk.Instructions + "\n\n" + p.Instructions)
		}
		if p.Spend != nil {
			sk.Spend = *p.Spend
		}
		sk.Model, sk.Approvers = p.Model, slices.Clone(p.Approvers)
		out[place] = &sk
	}
	s.governed.Store(&out)
	return nil
}

// filed returns the skill the settings file gives place, a place as
// written in a binding: its own binding, else its workspace's, else its
// platform's, else the default.
func (s *Set) filed(place string) *Skill {
	platform, rest, _ := strings.Cut(place, ":")
	keys := []string{place}
	if ws, _, ok := strings.Cut(rest, "/"); ok {
		keys = append(keys, platform+":"+ws)
	}
	keys = append(keys, platform)
	for _, k := range keys {
		if sk, ok := s.places[k]; ok {
			return sk
		}
	}
	return s.def
}

// Defines reports whether the set has a skill called name, one a place's
// stored settings may name.
func (s *Set) Defines(name string) bool {
	if s == nil {
		return name == DefaultName
	}
	_, ok := s.byName[name]
	return ok || name == DefaultName
}
