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
	var who string
	switch {
	case g.SelfApprove && len(g.Allowed) > 0:
		who = "Only the person who asked, or a configured approver, can answer this."
	case g.SelfApprove:
		who = "Only the person who asked can answer this."
	default:
		who = "Only a configured approver can answer this."
	}
	if g.Requester != "" {
		who = fmt.Sprintf("Requested for <@%s>. %s", g.Requester, who)
	}
	return who
}

// Outcome says how the closed gate g ended. date renders a time the
// platform's way; escape makes the chosen option's label safe to show.
func Outcome(g core.Gate, date func(time.Time) string, escape func(string) string) string {
	switch g.State {
	case core.GateApproved:
		return fmt.Sprintf("Approved (%s) by <@%s> at %s", escape(Label(g.Answer, 0, 80)), g.DecidedBy, date(g.DecidedAt))
	case core.GateDenied:
		if g.DecidedBy == "" {
			return "Denied — the request was withdrawn."
		}
		return fmt.Sprintf("Denied (%s) by <@%s> at %s", escape(Label(g.Answer, 0, 80)), g.DecidedBy, date(g.DecidedAt))
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
