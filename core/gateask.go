package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// GateUI shows gates on one chat platform. Each adapter implements it so
// that [Gates.Ask] runs the same approval flow everywhere.
type GateUI interface {
	// PostGate posts the pending gate g, one button per option, in
	// g.Thread and returns the message's reference, recorded as the gate's
	// MessageRef.
	PostGate(ctx context.Context, g Gate) (ref string, err error)
	// ShowGate edits the message named by g.MessageRef to show g's outcome,
	// buttons removed. A failure is the UI's to log: the decision stands.
	ShowGate(ctx context.Context, g Gate)
}

// GateFinder is implemented by a GateUI that can find a gate's message in
// its thread. A crash between posting a gate and recording its MessageRef
// leaves the message posted but unrecorded; [Gates.Ask] then asks the
// finder before posting the gate a second time.
type GateFinder interface {
	// FindGate returns the reference of the message showing g, found
	// false when there is none.
	FindGate(ctx context.Context, g Gate) (ref string, found bool, err error)
}

// Stopper is implemented by a GateUI whose platform connection can be
// stopping. A turn cancelled while it is (for whatever cause the
// cancellation carries) counts as a shutdown: the gate stays pending, so a
// click after the restart still completes it.
type Stopper interface {
	Stopping() bool
}

// gateUITimeout bounds a post or a close that must finish even though the
// turn was cancelled meanwhile.
const gateUITimeout = 30 * time.Second

// Approver returns the approver for turns in thread t started by
// requester, running [Gates.Ask] through ui; a request that names no
// thread or requester gets t and requester. allowed are the configured
// approvers besides the requester. On nil Gates it returns nil, which
// denies.
func (gs *Gates) Approver(t Thread, requester string, allowed []string, ui GateUI) Approver {
	if gs == nil {
		return nil
	}
	return func(ctx context.Context, req GateRequest) (GateAnswer, error) {
		if req.Thread == (Thread{}) {
			req.Thread = t
		}
		if req.Requester == "" {
			req.Requester = requester
		}
		if st, ok := ui.(Stopper); ok {
			var cancel context.CancelFunc
			ctx, cancel = shutdownAware(ctx, st)
			defer cancel()
		}
		return gs.Ask(ctx, req, allowed, ui)
	}
}

// shutdownAware returns a context that ends when ctx does, with ctx's
// cause, or with ErrShutdown when st is stopping by then.
func shutdownAware(ctx context.Context, st Stopper) (context.Context, context.CancelFunc) {
	sctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		cause := context.Cause(ctx)
		if st.Stopping() {
			cause = ErrShutdown
		}
		cancel(cause)
	})
	return sctx, func() { stop(); cancel(context.Canceled) }
}

// Ask runs one approval through ui: it opens the gate for req (allowed are
// the approvers besides the requester), posts it unless a resumed turn finds
// it posted already, waits for a decision, and returns it. A gate decided
// before a restart returns its decision without asking again.
//
// When ctx ends first, context.Cause decides what becomes of the gate:
// [ErrShutdown] leaves it pending, so a click after the restart still
// completes it; [ErrStopped] (the user stopped the turn) denies it; any
// other cause lets it expire. Ask then returns ctx.Err(), unless a human
// decided just before the cancellation. The post and the close run to the
// end even when ctx is cancelled meanwhile, so the message is known and
// shows how the gate ended.
func (gs *Gates) Ask(ctx context.Context, req GateRequest, allowed []string, ui GateUI) (GateAnswer, error) {
	if req.Note != "" {
		return gs.withdraw(ctx, req, ui)
	}
	g, fresh, err := gs.Open(ctx, req, allowed)
	if err != nil {
		return GateAnswer{}, err
	}
	if g.State == GateApproved || g.State == GateDenied {
		if !fresh {
			// Resumed after a crash: the instance that took the click
			// may have died before it redrew the question.
			gs.redraw(ctx, ui, g)
		}
		return g.Decision(), nil
	}
	if fresh && slices.ContainsFunc(g.Allowed, func(a string) bool { return strings.HasPrefix(a, "group:") }) {
		// A user group's members may answer as of when it is asked.
		allowed := expand(ctx, ui, g.Allowed)
		if g, err = gs.Update(ctx, g.Token, func(g *Gate) error { g.Allowed = allowed; return nil }); err != nil {
			return GateAnswer{}, fmt.Errorf("gate: record approvers: %w", err)
		}
	}
	// From before the question shows until the turn has its answer, a
	// "stop" in the thread is a decision on the gate: MayStop guards it.
	gs.waitOn(g)
	defer gs.unwaitOn(g)
	if fresh || g.MessageRef == "" {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gateUITimeout)
		ref, found := "", false
		if f, ok := ui.(GateFinder); ok && !fresh {
			// Resumed with no message recorded: the process may have died
			// right after posting it. A lookup failure just posts again.
			ref, found, _ = f.FindGate(pctx, g)
		}
		if !found {
			ref, err = ui.PostGate(pctx, g)
		}
		cancel()
		if err != nil {
			_, _ = gs.Close(context.WithoutCancel(ctx), g.Token, GateExpired)
			return GateAnswer{}, fmt.Errorf("gate: post approval request: %w", err)
		}
		// Recorded even if the turn was just cancelled: the message exists.
		if g, err = gs.Update(context.WithoutCancel(ctx), g.Token, func(g *Gate) error { g.MessageRef = ref; return nil }); err != nil {
			return GateAnswer{}, fmt.Errorf("gate: record approval message: %w", err)
		}
		if fresh && g.Need > 0 {
			// Under a policy's tier, each approver named as a person gets
			// a copy where they look.
			pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gateUITimeout)
			g = gs.reach(pctx, g, ui, "", g.People())
			cancel()
		}
	}
	// A person may take minutes to click: meanwhile the turn holds no
	// slot, so pending approvals can't starve every other thread.
	resume := Idle(ctx)
	decided, elsewhere, err := gs.follow(ctx, g.Token, ui)
	resume(ctx)
	if err != nil && ctx.Err() == nil {
		return GateAnswer{}, fmt.Errorf("gate: wait for approval: %w", err)
	}
	if err != nil {
		cause := context.Cause(ctx)
		if errors.Is(cause, ErrShutdown) {
			return GateAnswer{}, ctx.Err() // the resumed turn finds the gate pending
		}
		state := GateExpired
		if errors.Is(cause, ErrStopped) {
			state = GateDenied
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gateUITimeout)
		defer cancel()
		if decided, err = gs.Close(cctx, g.Token, state); err != nil {
			return GateAnswer{}, fmt.Errorf("gate: close: %w", err)
		}
		if decided.State == state && decided.DecidedBy == "" {
			ui.ShowGate(cctx, decided)
			return GateAnswer{}, ctx.Err()
		}
		return decided.Decision(), nil // decided just before the cancellation
	}
	if elsewhere && (decided.State == GateApproved || decided.State == GateDenied) {
		// Decided on another instance, which redraws the question after
		// it acks the click: if it died in between, the question would
		// stay up with its buttons, so this turn's instance draws the
		// outcome too (the same drawing, twice at worst).
		gs.redraw(ctx, ui, decided)
	}
	if decided.State == GateExpired {
		ui.ShowGate(ctx, decided)
		if n, ok := ui.(GateNotifier); ok && decided.Need > 0 {
			n.NotifyGate(ctx, decided, expiryText(decided), nil)
		}
	}
	return decided.Decision(), nil
}

// redraw shows decided g's outcome on its messages, bounded like posting.
func (gs *Gates) redraw(ctx context.Context, ui GateUI, g Gate) {
	if g.Form != nil {
		return // a question's form is redrawn where it is answered
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gateUITimeout)
	defer cancel()
	ui.ShowGate(cctx, g)
}
