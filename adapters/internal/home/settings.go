package home

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/skill"
	"github.com/neobot/neobot/core/usage"
)

// Budgets tells the daily token budgets over a place and what is left of
// them (*usage.Meter).
type Budgets interface {
	Budgets(ctx context.Context, in core.Inbound) ([]usage.Budget, error)
}

// Governed is what a place's settings page needs besides the skills: the
// budgets, the configured main model and the platform's approvers.
type Governed struct {
	Skills  *skill.Set
	Budgets Budgets
	// Model is the configured main model (NEO_MODEL).
	Model string
	// Approvers are the platform's configured approvers.
	Approvers []string
	// Mention writes a user ID for the platform ("<@U0123>"); it may
	// use control characters as marks, which nothing else on the page
	// holds.
	Mention func(user string) string
}

// MaxInstructions is how much of a place's instructions its settings
// show; the rest is cut at a word and marked.
const MaxInstructions = 280

// Settings says in sentences how Neo is governed in place (a channel, a
// workspace when Channel is empty, or direct messages): its skill, its instructions
// (abridged), its model, its daily budgets and what is left, whether Neo
// may delegate spends there and who approves them. Whoever may see the
// place may read it; nothing here changes it.
func Settings(ctx context.Context, g Governed, in core.Inbound) []string {
	where := "this channel"
	switch {
	case in.DM:
		where = "direct messages"
	case in.Thread.Channel == "":
		where = "this workspace"
	}
	sk := g.Skills.For(in)
	var out []string
	if sk.Name == skill.DefaultName {
		out = append(out, fmt.Sprintf("In %s Neo follows the default skill.", where))
	} else {
		out = append(out, fmt.Sprintf("In %s Neo follows the skill %q.", where, sk.Name))
	}
	// Control characters never reach the page: a platform may use them
	// to mark what it renders (Mention).
	ins := strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, sk.Instructions)), " ")
	if ins != "" {
		out = append(out, fmt.Sprintf("Its instructions here: %q.", abridge(ins, MaxInstructions)))
	} else {
		out = append(out, "No instructions are added here.")
	}
	switch model := sk.Model; {
	case model != "":
		out = append(out, fmt.Sprintf("Neo answers here with the model %s, which this place's settings chose.", model))
	case g.Model != "":
		out = append(out, fmt.Sprintf("Neo answers here with the model %s.", g.Model))
	}
	out = append(out, budgets(ctx, g.Budgets, in)...)
	if !sk.Spend {
		return append(out, "Neo may not delegate spends here.")
	}
	out = append(out, "Neo may delegate spends here; a person approves each one first, never the one who asked for it unless self-approval is on.")
	if sk.Approvals != nil {
		return append(out, "The skill's approval policy decides who approves: "+strings.Join(sk.Approvals.Describe(), "; ")+".")
	}
	mention := g.Mention
	if mention == nil {
		mention = func(u string) string { return u }
	}
	names := func(ids []string) string {
		var m []string
		for _, id := range ids {
			m = append(m, mention(id))
		}
		return strings.Join(m, ", ")
	}
	switch {
	case len(g.Approvers) == 0 && len(sk.Approvers) == 0:
		out = append(out, "Nobody is configured to approve them, so they are refused.")
	case len(sk.Approvers) == 0:
		out = append(out, "They are approved by "+names(g.Approvers)+".")
	case len(g.Approvers) == 0:
		out = append(out, "They are approved by "+names(sk.Approvers)+", whom this place's settings name.")
	default:
		out = append(out, "They are approved by "+names(g.Approvers)+", and here also by "+names(sk.Approvers)+", whom this place's settings name.")
	}
	return out
}

// budgets says the daily token budgets over in's place and what is left.
func budgets(ctx context.Context, b Budgets, in core.Inbound) []string {
	if b == nil {
		return nil
	}
	all, err := b.Budgets(ctx, in)
	if err != nil {
		return []string{"The daily token budget could not be read just now."}
	}
	if len(all) == 0 {
		return []string{"No daily token budget is set here."}
	}
	var out []string
	for _, bu := range all {
		left := fmt.Sprintf("%d are left today", bu.Left())
		if bu.Left() == 0 {
			left = "none are left today, so Neo declines until it resets at 00:00 UTC"
		}
		out = append(out, fmt.Sprintf("The daily budget of %s is %d model tokens (UTC day); %s.", bu.Where, bu.Tokens, left))
	}
	return out
}

// abridge cuts s to at most n bytes at a word, marking the cut.
func abridge(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := s[:n]
	for !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return cut + " …"
}
