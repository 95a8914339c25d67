package core

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ErrGateVoted reports a second click by someone whose vote a gate has
// recorded already: it never counts twice.
var ErrGateVoted = errors.New("gate: already voted")

// Quorum is what an approval policy's tier asks of the gate of one spend
// (see core/skill's Policy): who may approve, how many distinct people
// must, and when to remind, escalate and give up.
type Quorum struct {
	// Tier names the tier for the people asked ("over 1000 USDC").
	Tier string `json:"tier,omitempty"`
	// Approvers may decide, on the gate's platform: user IDs, Discord
	// roles as "role:<id>", Slack user groups as "group:<id>". Empty: the
	// platform's configured approvers.
	Approvers []string `json:"approvers,omitempty"`
	// Need is how many distinct people must approve; below 1 means 1.
	// The requester never counts.
	Need int `json:"need,omitempty"`
	// RemindAfter, when positive, reminds the approvers who have not
	// voted that long after the gate opened.
	RemindAfter time.Duration `json:"remind_after,omitempty"`
	// EscalateAfter, when positive, adds EscalateTo to the approvers and
	// asks them, that long after the gate opened.
	EscalateAfter time.Duration `json:"escalate_after,omitempty"`
	EscalateTo    []string      `json:"escalate_to,omitempty"`
	// ExpireAfter, when positive, is how long the gate stays open instead
	// of the Gates' default.
	ExpireAfter time.Duration `json:"expire_after,omitempty"`
}

// Vote is one person's click on a gate under a quorum, as recorded.
type Vote struct {
	User     string    `json:"user"`
	At       time.Time `json:"at"`
	Approves bool      `json:"approves"`
	// Surface is where the click came from: "thread", "dm", "home",
	// "web" ("" when the adapter did not say).
	Surface string `json:"surface,omitempty"`
}

// Approvals returns the people whose approvals g has recorded, in the
// order they clicked.
func (g Gate) Approvals() []string {
	var out []string
	for _, v := range g.Votes {
		if v.Approves {
			out = append(out, v.User)
		}
	}
	return out
}

// Needs returns how many distinct approvals complete g: 1 unless a
// quorum asks for more.
func (g Gate) Needs() int { return max(g.Need, 1) }

// Voted reports whether user's vote is recorded on g.
func (g Gate) Voted(user string) bool {
	return slices.ContainsFunc(g.Votes, func(v Vote) bool { return v.User == user })
}

// Progress says how far a gate under a quorum of more than one has come,
// "" otherwise: "1 of 2 approvals: <@U1>".
func (g Gate) Progress() string {
	if g.Needs() < 2 {
		return ""
	}
	who := g.Approvals()
	s := fmt.Sprintf("%d of %d approvals", len(who), g.Needs())
	if len(who) == 0 {
		return s
	}
	for i, u := range who {
		who[i] = "<@" + u + ">"
	}
	return s + ": " + strings.Join(who, ", ")
}

// vote records user's click on the option opt of the pending gate g at
// now, from surface: a deny ends g at once, an approval completes it
// only when it is the last one the quorum needs. A second click by the
// same person is refused with ErrGateVoted and changes nothing.
func (g *Gate) vote(user, surface string, opt Option, now time.Time) error {
	if g.Voted(user) {
		return ErrGateVoted
	}
	g.Votes = append(g.Votes, Vote{User: user, At: now, Approves: opt.Approves, Surface: surface})
	switch {
	case !opt.Approves:
		g.State = GateDenied
	case len(g.Approvals()) >= g.Needs():
		g.State = GateApproved
	default:
		return nil // pending: more approvals needed
	}
	g.Answer, g.DecidedBy, g.DecidedAt = opt.Label, user, now
	if g.State == GateApproved && g.Needs() > 1 {
		g.DecidedBy = strings.Join(g.Approvals(), ",")
	}
	return nil
}

// apply sets up the gate g, opened at now, for the quorum q.
func (g *Gate) apply(q *Quorum, now time.Time) {
	g.Tier, g.Need = q.Tier, max(q.Need, 1)
	if len(q.Approvers) > 0 {
		g.Allowed = slices.Clone(q.Approvers)
	}
	// The requester never counts towards a policy's quorum.
	g.SelfApprove = g.SelfApprove && len(q.Approvers) == 0 && g.Need == 1
	if q.ExpireAfter > 0 {
		g.Expires = now.Add(q.ExpireAfter)
	}
	if q.RemindAfter > 0 {
		g.RemindAt = now.Add(q.RemindAfter)
	}
	if q.EscalateAfter > 0 && len(q.EscalateTo) > 0 {
		g.EscalateAt, g.EscalateTo = now.Add(q.EscalateAfter), slices.Clone(q.EscalateTo)
	}
}

// People returns the approvers of g named as people (user IDs, not roles
// or groups), the requester and those who voted left out: whom a copy of
// the question is sent to.
func (g Gate) People() []string {
	var out []string
	for _, a := range g.Allowed {
		if strings.Contains(a, ":") || a == g.Requester || g.Voted(a) || slices.Contains(out, a) {
			continue
		}
		out = append(out, a)
	}
	return out
}
