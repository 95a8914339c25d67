package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// A question a tool's server asks the person whose turn it is (an MCP
// elicitation) is a gate with a Form: it is stored, shown, answered,
// expired and resumed like an approval, with three differences. Only the
// requester may answer it; an answer is a choice button or the form's
// fields, checked against the form; and its outcome is an action (accept,
// decline, cancel) with the values accepted.

// ErrFormInvalid reports a form answer that breaks the form's rules; the
// gate stays pending so the person can correct it.
var ErrFormInvalid = errors.New("the answer does not fit the form")

// Action is the MCP elicitation action a decision on a question comes to:
// accept with values, decline when the person said no, and cancel for
// everything else (dismissed, timed out, stopped, lost in a restart).
func (a GateAnswer) Action() string {
	switch {
	case a.Approved:
		return ElicitAccepted
	case a.Answer == ElicitDecline && a.By != "":
		return ElicitDeclined
	}
	return ElicitCancelled
}

// asks reports whether the question g shows is the one req asks.
func (g Gate) asks(req GateRequest) bool {
	if g.Form == nil || req.Form == nil || g.Question != req.Question {
		return false
	}
	a, err1 := json.Marshal(g.Form)
	b, err2 := json.Marshal(req.Form)
	return err1 == nil && err2 == nil && string(a) == string(b)
}

// decideForm records option on the pending question g.
func (g *Gate) decideForm(option string, now time.Time, user string) error {
	switch option {
	case ElicitOpen:
		return ErrGateOption // opens the form; decides nothing
	case ElicitDecline, ElicitCancel:
		g.State = GateDenied
	default:
		values, ok := g.Form.chose(option)
		if !ok {
			return ErrGateOption
		}
		g.State, g.Values = GateApproved, values
	}
	g.Answer, g.DecidedBy, g.DecidedAt = option, user, now
	return nil
}

// Submit records user's answer to the question with token, typed in its
// form: input holds the text of each field by name. A refusal changes
// nothing and is reported as for [Gates.Decide]; an answer that breaks the
// form is ErrFormInvalid with problems, by field name, saying what to fix.
// Defaults fill the fields left empty.
func (gs *Gates) Submit(ctx context.Context, token, user string, roles []string, input map[string]string) (g Gate, problems map[string]string, err error) {
	now := gs.clock.Now()
	g, err = gs.store.UpdateGate(ctx, token, func(g *Gate) error {
		switch {
		case g.Form == nil:
			return ErrGateOption
		case g.State != GatePending:
			return ErrGateClosed
		case !now.Before(g.Expires):
			return ErrGateExpired
		case !g.MayAnswer(user, roles):
			return ErrGateForbidden
		}
		values, bad := g.Form.Fill(input)
		if len(bad) > 0 {
			problems = bad
			return ErrFormInvalid
		}
		g.State, g.Values = GateApproved, values
		g.Answer, g.DecidedBy, g.DecidedAt = ElicitOpen, user, now
		return nil
	})
	if err != nil {
		return g, problems, err
	}
	gs.wake(g, true)
	return g, nil, nil
}

// SubmitRefusal is the sentence for a person whose form answer err (from
// [Gates.Submit]) refused; "" when err is nil.
func (gs *Gates) SubmitRefusal(g Gate, err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrGateForbidden):
		return gs.forbidden(g)
	case errors.Is(err, ErrGateClosed), errors.Is(err, ErrGateUnknown):
		return "This question was already answered or closed; your answer was not sent."
	case errors.Is(err, ErrGateExpired):
		return "This question has expired, so your answer was not sent."
	case errors.Is(err, ErrFormInvalid):
		return "Please correct the form and send it again."
	}
	return refuseFailed
}

// CloseWithNote ends the pending gate with token like [Gates.Close], and
// records note, the sentence its message shows for why.
func (gs *Gates) CloseWithNote(ctx context.Context, token string, state GateState, note string) (Gate, error) {
	now := gs.clock.Now()
	g, err := gs.store.UpdateGate(ctx, token, func(g *Gate) error {
		if g.State != GatePending {
			return ErrGateClosed
		}
		g.State, g.DecidedAt, g.Note = state, now, note
		return nil
	})
	if errors.Is(err, ErrGateClosed) {
		return g, nil
	}
	if err != nil {
		return g, fmt.Errorf("gate: close %s: %w", token, err)
	}
	gs.wake(g, true)
	return g, nil
}

// Bound returns the most recent gate opened for req's binding, or
// ErrNotFound.
func (gs *Gates) Bound(ctx context.Context, req GateRequest) (Gate, error) {
	return gs.store.GateBound(ctx, req.Binding())
}

// withdraw closes the pending gate bound to req as expired with req.Note
// and shows it through ui; a decided one is left as it is. It returns the
// gate's decision, or ErrNotFound when no gate is bound to req.
func (gs *Gates) withdraw(ctx context.Context, req GateRequest, ui GateUI) (GateAnswer, error) {
	g, err := gs.store.GateBound(ctx, req.Binding())
	if err != nil {
		return GateAnswer{}, err
	}
	if g.State == GatePending {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gateUITimeout)
		defer cancel()
		if g, err = gs.CloseWithNote(cctx, g.Token, GateExpired, req.Note); err != nil {
			return GateAnswer{}, err
		}
		if f, ok := ui.(GateFinder); ok && g.MessageRef == "" {
			// A crash right after posting leaves the message unrecorded.
			if ref, found, _ := f.FindGate(cctx, g); found {
				g.MessageRef = ref
			}
		}
		if g.MessageRef != "" {
			ui.ShowGate(cctx, g)
		}
	}
	return g.Decision(), nil
}
