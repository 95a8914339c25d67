package core

import (
	"context"
	"errors"
	"fmt"
)

// Click is what a click on a gate's button came to, for the adapter to
// show. The decision itself is already durable.
type Click struct {
	// Gate is the gate as it stands after the click; zero when no gate
	// has the button's token.
	Gate Gate
	// Redraw is true when the clicked message should be redrawn from Gate
	// (its outcome shown, buttons removed).
	Redraw bool
	// Refusal is the sentence for the clicker alone when the click
	// decided nothing; "" when it decided the gate.
	Refusal string
	// OpenForm is true when the click asks for the question's form (the
	// ElicitOpen button, clicked by the person who may answer): the
	// adapter shows the form; nothing is decided yet.
	OpenForm bool
}

// The sentences a click can be refused with.
const (
	refuseButton  = "Sorry, that button isn't one of this request's options."
	refuseStale   = "This approval request is no longer pending, so your click changed nothing."
	refuseClosed  = "This request was already answered; your click changed nothing."
	refuseExpired = "This request has expired, so nothing was approved."
	refuseVoted   = "You have already approved this request, and an approval never counts twice: it still needs %s from someone else."
	refuseFailed  = "Sorry, I couldn't record your answer just now. Please click again in a moment."
)

// Load returns the gate with token without writing anything, so a click
// from someone who may not answer costs no write and no fsync.
func (gs *Gates) Load(ctx context.Context, token string) (Gate, error) {
	return gs.store.LoadGate(ctx, token)
}

// Answer records user's click on option idx of the gate with token, for
// every adapter alike: who may answer, stale and double clicks, expiry,
// and the sentence that tells the clicker why nothing changed. A store
// failure is returned as err, with the sentence asking to click again.
func (gs *Gates) Answer(ctx context.Context, token string, idx int, user string, roles []string) (Click, error) {
	return gs.AnswerFrom(ctx, token, idx, user, roles, "")
}

// AnswerFrom is Answer for a click on surface, recorded with the vote:
// "thread", "dm", "home" (the App Home or /neo list), "web". Under a
// quorum, an approval that leaves it short is recorded and the gate
// redrawn with its progress; a voter's second click is refused and
// counts nothing.
func (gs *Gates) AnswerFrom(ctx context.Context, token string, idx int, user string, roles []string, surface string) (Click, error) {
	g, err := gs.Load(ctx, token)
	switch {
	case errors.Is(err, ErrGateUnknown):
		return Click{Gate: Gate{State: GateExpired}, Redraw: true, Refusal: refuseStale}, nil
	case err != nil:
		return Click{Refusal: refuseFailed}, fmt.Errorf("gates: load %s: %w", token, err)
	case idx < 0 || idx >= len(g.Options):
		return Click{Refusal: refuseButton}, nil
	case g.State == GatePending && !g.MayAnswer(user, roles):
		return Click{Refusal: gs.forbidden(g)}, nil
	case g.Form != nil && g.Options[idx].Label == ElicitOpen && g.Open(gs.clock.Now()):
		return Click{Gate: g, OpenForm: true}, nil
	}
	d, err := gs.decide(ctx, token, user, roles, g.Options[idx].Label, surface)
	switch {
	case err == nil:
		return Click{Gate: d, Redraw: true}, nil
	case errors.Is(err, ErrGateVoted):
		return Click{Gate: d, Refusal: fmt.Sprintf(refuseVoted, more(d))}, nil
	case errors.Is(err, ErrGateForbidden):
		return Click{Refusal: gs.forbidden(d)}, nil
	case errors.Is(err, ErrGateClosed):
		return Click{Gate: d, Redraw: true, Refusal: refuseClosed}, nil
	case errors.Is(err, ErrGateExpired):
		if c, cerr := gs.Close(ctx, token, GateExpired); cerr == nil {
			d = c
		}
		return Click{Gate: d, Redraw: true, Refusal: refuseExpired}, nil
	case errors.Is(err, ErrGateOption):
		return Click{Refusal: refuseButton}, nil
	}
	return Click{Refusal: refuseFailed}, fmt.Errorf("gates: record decision on %s: %w", token, err)
}

// Newer returns the gate g as stored now, and stale true when it has
// moved on from g (a vote or a decision since): an adapter that redrew a
// gate's copies from a pending g redraws them again from the newer one,
// so a click's redraw racing another's never leaves a copy showing an
// older state than the store's.
func (gs *Gates) Newer(ctx context.Context, g Gate) (Gate, bool) {
	if g.Token == "" || g.State != GatePending {
		return g, false
	}
	now, err := gs.Load(ctx, g.Token)
	if err != nil || now.State == GatePending && len(now.Votes) == len(g.Votes) && now.Escalated == g.Escalated {
		return g, false
	}
	return now, true
}

// forbidden tells a clicker who may not answer g who can.
func (gs *Gates) forbidden(g Gate) string {
	if g.Form != nil {
		return fmt.Sprintf("Sorry, only <@%s> can answer this question.", g.Requester)
	}
	if g.SelfApprove && g.Requester != "" {
		return fmt.Sprintf("Sorry, you can't approve this: only <@%s> or a configured approver can answer it.", g.Requester)
	}
	return "Sorry, you can't approve this: only a configured approver can answer it."
}
