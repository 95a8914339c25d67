// Package gatetext is what an approval message says, in words, on every
// platform: who may answer a pending gate, how a closed one ended, and how
// an option shows on its button. Each adapter adds only its own markup
// (emoji, dates, escaping).
package gatetext

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/neobot/neobot/adapters/internal/mdsplit"
	"github.com/neobot/neobot/core"
)

// Who says who may answer the pending gate g.
func Who(g core.Gate) string {
	if g.Form != nil {
		return fmt.Sprintf("Asked of <@%s>; only they can answer.", g.Requester)
	}
	var who string
	switch {
	case g.SelfApprove && len(g.Allowed) > 0:
		who = "Only the person who asked, or a configured approver, can answer this."
	case g.SelfApprove:
		who = "Only the person who asked can answer this."
	default:
		who = "Only a configured approver can answer this."
	}
	if g.Need > 0 {
		who = policyWho(g)
	}
	if g.Requester != "" {
		who = fmt.Sprintf("Requested for <@%s>. %s", g.Requester, who)
	}
	return who
}

// policyWho says who may answer a gate an approval policy's tier opened,
// and how far its quorum has come.
func policyWho(g core.Gate) string {
	who := "One approver of its tier must approve it; the person who asked can't."
	if g.Needs() > 1 {
		who = fmt.Sprintf("%d different approvers of its tier must approve it; the person who asked can't, and one deny ends it.", g.Needs())
	}
	if g.Tier != "" {
		who = "Tier " + g.Tier + ": " + who
	}
	if p := g.Progress(); p != "" {
		who += " " + p + "."
	}
	return who
}

// Outcome says how the closed gate g ended. date renders a time the
// platform's way; escape makes the chosen option's label safe to show.
func Outcome(g core.Gate, date func(time.Time) string, escape func(string) string) string {
	if g.Form != nil {
		return formOutcome(g, date, escape)
	}
	switch g.State {
	case core.GateApproved:
		if g.Needs() > 1 {
			return fmt.Sprintf("Approved (%s) by %s at %s", escape(Label(g.Answer, 0, 80)), mentions(g.Approvals()), date(g.DecidedAt))
		}
		return fmt.Sprintf("Approved (%s) by <@%s> at %s", escape(Label(g.Answer, 0, 80)), g.DecidedBy, date(g.DecidedAt))
	case core.GateDenied:
		if g.DecidedBy == "" {
			return "Denied — the request was withdrawn."
		}
		return fmt.Sprintf("Denied (%s) by <@%s> at %s", escape(Label(g.Answer, 0, 80)), g.DecidedBy, date(g.DecidedAt))
	}
	if p := g.Progress(); p != "" {
		p = " (" + p + ")"
		if g.DecidedAt.IsZero() {
			return "Expired" + p + " — nothing was approved."
		}
		return "Expired at " + date(g.DecidedAt) + p + " — nothing was approved."
	}
	if g.DecidedAt.IsZero() {
		return "Expired — nothing was approved."
	}
	return "Expired at " + date(g.DecidedAt) + " — nothing was approved."
}

// Label is how option i shows on its button: whitespace collapsed, at most
// max characters, and never blank, so a daemon offering an empty option
// cannot make the message unpostable.
func Label(opt string, i, max int) string {
	label := strings.Join(strings.Fields(opt), " ")
	if label == "" {
		return "Option " + strconv.Itoa(i+1)
	}
	return mdsplit.Clip(label, max, utf8.RuneCountInString)
}

// Value is what a gate's button carries: the gate's token and the
// option's index.
func Value(token string, idx int) string { return token + ":" + strconv.Itoa(idx) }

// ParseValue splits a button value made by Value; ok is false for anything
// else.
func ParseValue(v string) (token string, idx int, ok bool) {
	token, i, ok := strings.Cut(v, ":")
	if !ok || token == "" {
		return "", 0, false
	}
	idx, err := strconv.Atoi(i)
	if err != nil || idx < 0 {
		return "", 0, false
	}
	return token, idx, true
}

// Title names the state of the gate g in a message's header: an approval
// is needed, approved, denied or expired; a question is asked, answered,
// declined, cancelled or expired.
func Title(g core.Gate) string {
	if g.Form != nil {
		switch g.State {
		case core.GatePending:
			return "Question"
		case core.GateApproved:
			return "Answered"
		case core.GateDenied:
			if g.Answer == core.ElicitDecline {
				return "Declined"
			}
			return "Cancelled"
		}
		return "Expired"
	}
	switch g.State {
	case core.GatePending:
		return "Approval needed"
	case core.GateApproved:
		return "Approved"
	case core.GateDenied:
		return "Denied"
	}
	return "Expired"
}

// formOutcome says how the question g ended.
func formOutcome(g core.Gate, date func(time.Time) string, escape func(string) string) string {
	switch {
	case g.State == core.GateApproved && g.Answer == core.ElicitOpen:
		return fmt.Sprintf("Answered by <@%s> at %s", g.DecidedBy, date(g.DecidedAt))
	case g.State == core.GateApproved:
		return fmt.Sprintf("Answered (%s) by <@%s> at %s", escape(Label(g.Answer, 0, 80)), g.DecidedBy, date(g.DecidedAt))
	case g.State == core.GateDenied && g.DecidedBy != "" && g.Answer == core.ElicitDecline:
		return fmt.Sprintf("Declined by <@%s> at %s — nothing was sent.", g.DecidedBy, date(g.DecidedAt))
	case g.State == core.GateDenied && g.DecidedBy != "":
		return fmt.Sprintf("Cancelled by <@%s> at %s — nothing was sent.", g.DecidedBy, date(g.DecidedAt))
	case g.State == core.GateDenied:
		return "Cancelled — the request was stopped, so nothing was sent."
	case g.Note != "":
		return g.Note
	}
	return "Expired — no answer came in time, so the question was cancelled."
}

// mentions writes users as <@id>, joined with " and ".
func mentions(users []string) string {
	out := make([]string, len(users))
	for i, u := range users {
		out[i] = "<@" + u + ">"
	}
	return strings.Join(out, " and ")
}
