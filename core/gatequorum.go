package core

import (
	"context"
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
// same person is refused with ErrGateVoted and changes nothing, unless
// it denies: someone who approved may still stop the spend (fail closed).
func (g *Gate) vote(user, surface string, opt Option, now time.Time) error {
	if g.Voted(user) && opt.Approves {
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

// GateNotifier is implemented by a GateUI that can reach approvers
// beyond the gate's message: [Gates.Ask] sends each approver named as a
// person a copy of the question where they look (a direct message), and
// posts the reminder, the escalation and the expiry in the thread.
type GateNotifier interface {
	// NotifyGate posts text in g's thread, unless text is "", and sends
	// each of people a copy of the pending gate g, returning the copies'
	// references for [Gate.Copies]. ShowGate redraws the copies with the
	// thread's message. Failures are the UI's to log.
	NotifyGate(ctx context.Context, g Gate, text string, people []string) (copies []string)
}

// GroupResolver is implemented by a GateUI whose platform has groups of
// people the gate's approvers may name ("group:<id>", Slack's user
// groups): their members are added to the gate's approvers when it opens
// or escalates, so they may answer and get a copy.
type GroupResolver interface {
	GroupMembers(ctx context.Context, group string) ([]string, error)
}

// expand returns approvers with the members of every "group:<id>" among
// them added, as ui finds them; a group it cannot list adds nobody.
func expand(ctx context.Context, ui GateUI, approvers []string) []string {
	r, ok := ui.(GroupResolver)
	if !ok {
		return approvers
	}
	out := slices.Clone(approvers)
	for _, a := range approvers {
		id, ok := strings.CutPrefix(a, "group:")
		if !ok {
			continue
		}
		members, err := r.GroupMembers(ctx, id)
		if err != nil {
			continue
		}
		for _, m := range members {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}

// reach sends the copies of the pending gate g to people and records
// them; text, when set, is posted in the thread.
func (gs *Gates) reach(ctx context.Context, g Gate, ui GateUI, text string, people []string) Gate {
	n, ok := ui.(GateNotifier)
	if !ok {
		return g
	}
	copies := n.NotifyGate(ctx, g, text, people)
	if len(copies) == 0 {
		return g
	}
	ng, err := gs.Update(context.WithoutCancel(ctx), g.Token, func(g *Gate) error {
		g.Copies = append(g.Copies, copies...)
		return nil
	})
	if err != nil {
		return g
	}
	if len(ng.Votes) != len(g.Votes) || ng.State != g.State {
		// A click landed while the copies were sent, before they were
		// recorded: its redraw missed them, so they are redrawn now. A
		// later click's redraw may land before this one does: the newest
		// state is drawn last, as a click's own redraw does.
		ui.ShowGate(ctx, ng)
		if latest, stale := gs.Newer(ctx, ng); stale {
			ui.ShowGate(ctx, latest)
		}
	}
	return ng
}

// errNotPending stops an update of a gate that was decided meanwhile.
var errNotPending = errors.New("gate: no longer pending")

// remind records the reminder of g, then reminds the approvers who have
// not voted, in the thread.
func remind(ctx context.Context, gs *Gates, g Gate, ui GateUI) (Gate, error) {
	ng, err := gs.Update(ctx, g.Token, func(g *Gate) error {
		if g.State != GatePending || g.Reminded {
			return errNotPending
		}
		g.Reminded = true
		return nil
	})
	if errors.Is(err, errNotPending) {
		return ng, nil
	}
	if err != nil {
		return g, err
	}
	if n, ok := ui.(GateNotifier); ok {
		n.NotifyGate(ctx, ng, reminderText(ng), nil)
	}
	return ng, nil
}

// escalate records the escalation of g, its escalation group added to
// the approvers, then asks that group: in the thread, and each of its
// people where they look.
func escalate(ctx context.Context, gs *Gates, g Gate, ui GateUI) (Gate, error) {
	to := expand(ctx, ui, g.EscalateTo)
	ng, err := gs.Update(ctx, g.Token, func(g *Gate) error {
		if g.State != GatePending || g.Escalated {
			return errNotPending
		}
		g.Escalated = true
		for _, a := range to {
			if !slices.Contains(g.Allowed, a) {
				g.Allowed = append(g.Allowed, a)
			}
		}
		return nil
	})
	if errors.Is(err, errNotPending) {
		return ng, nil
	}
	if err != nil {
		return g, err
	}
	var people []string
	for _, p := range ng.People() {
		if slices.Contains(to, p) {
			people = append(people, p)
		}
	}
	return gs.reach(ctx, ng, ui, escalationText(ng, to), people), nil
}

// mention writes approvers for a chat message: people as <@id>, roles
// as <@&id>. User groups are left out: their members, added when the
// gate opened or escalated, are named as people.
func mention(approvers []string) string {
	var out []string
	for _, a := range approvers {
		switch {
		case strings.HasPrefix(a, "role:"):
			out = append(out, "<@&"+strings.TrimPrefix(a, "role:")+">")
		case strings.HasPrefix(a, "group:"):
		default:
			out = append(out, "<@"+a+">")
		}
	}
	return strings.Join(out, ", ")
}

// more says how many approvals g still needs.
func more(g Gate) string {
	n := g.Needs() - len(g.Approvals())
	if n == 1 {
		return "1 more approval"
	}
	return fmt.Sprintf("%d more approvals", n)
}

func reminderText(g Gate) string {
	var waiting []string
	for _, a := range g.Allowed {
		if a != g.Requester && !g.Voted(a) {
			waiting = append(waiting, a)
		}
	}
	return fmt.Sprintf("⏰ Reminder: the approval asked above still needs %s before anything runs. %s: please approve or deny it.", more(g), mention(waiting))
}

func escalationText(g Gate, to []string) string {
	var named []string
	for _, a := range to {
		if a != g.Requester {
			named = append(named, a)
		}
	}
	return fmt.Sprintf("⏫ The approval asked above still needs %s, so it is escalated: %s may now approve or deny it as well.", more(g), mention(named))
}

// expiryText tells the thread, and the requester, that g expired.
func expiryText(g Gate) string {
	s := "⌛ The approval asked above expired before it was approved, so nothing was run."
	if g.Requester != "" {
		s = fmt.Sprintf("⌛ <@%s>, the approval you asked for above expired before it was approved, so nothing was run.", g.Requester)
	}
	if p := g.Progress(); p != "" {
		s += " It had " + p + "."
	}
	return s
}
