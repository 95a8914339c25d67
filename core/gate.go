package core

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

// GateState is where a gate is in its life: pending, then exactly one of
// approved, denied or expired.
type GateState string

// Gate states.
const (
	GatePending  GateState = "pending"
	GateApproved GateState = "approved"
	GateDenied   GateState = "denied"
	GateExpired  GateState = "expired"
)

// Gate is the server-side state of one approval question posted in a
// thread. A button carries only the gate's Token; everything that decides
// whether a click counts lives here.
type Gate struct {
	Token    string `json:"token"`
	Thread   Thread `json:"thread"`
	IntentID string `json:"intent_id"`
	NodeID   string `json:"node_id"`
	// CallID is the tool call that delegated the intent.
	CallID   string `json:"call_id,omitempty"`
	Question string `json:"question"`
	// Options are the answers offered; Decide approves only through one
	// whose Approves flag is set.
	Options []Option `json:"options"`
	// Binding is [GateRequest.Binding] of the request that opened the
	// gate: its decision answers that request and no other.
	Binding string `json:"binding,omitempty"`
	// Requester started the turn; Allowed lists the approvers (user IDs,
	// and role IDs as "role:<id>"). The requester may answer only when
	// SelfApprove is set, even if listed in Allowed or holding a listed
	// role.
	Requester   string    `json:"requester"`
	Allowed     []string  `json:"allowed"`
	SelfApprove bool      `json:"self_approve,omitempty"`
	Created     time.Time `json:"created"`
	Expires     time.Time `json:"expires"`

	State     GateState `json:"state"`
	Answer    string    `json:"answer,omitempty"`
	DecidedBy string    `json:"decided_by,omitempty"`
	DecidedAt time.Time `json:"decided_at,omitzero"`
	// Sent records that the decision reached the daemon, so a retry after
	// a network error never answers twice.
	Sent bool `json:"sent,omitempty"`
	// MessageRef is the adapter's handle on the posted message (for Slack,
	// channel and ts), used to edit it once decided.
	MessageRef string `json:"message_ref,omitempty"`

	// Form makes the gate a question a tool's server asks (see
	// elicitgate.go): only the requester answers, with a choice button
	// or the form's fields. Values holds the accepted answer.
	Form   *Form          `json:"form,omitempty"`
	Values map[string]any `json:"values,omitempty"`
	// Note says why a gate closed without an answer, when it is not the
	// usual timeout (for a question: neobot restarted and the server's
	// request was gone).
	Note string `json:"note,omitempty"`

	// The fields below are set when an approval policy's tier opened the
	// gate (see [Quorum]). Need is how many distinct approvals complete
	// it; Votes records every click that counted, in order.
	Tier  string `json:"tier,omitempty"`
	Need  int    `json:"need,omitempty"`
	Votes []Vote `json:"votes,omitempty"`
	// RemindAt and EscalateAt are when the approvers are reminded and the
	// gate escalated to EscalateTo (zero: never); Reminded and Escalated
	// record that it happened, so a restart does neither twice.
	RemindAt   time.Time `json:"remind_at,omitzero"`
	EscalateAt time.Time `json:"escalate_at,omitzero"`
	EscalateTo []string  `json:"escalate_to,omitempty"`
	Reminded   bool      `json:"reminded,omitempty"`
	Escalated  bool      `json:"escalated,omitempty"`
	// Copies are the adapter's handles on the copies of the question sent
	// to approvers where they look (direct messages), redrawn with
	// MessageRef.
	Copies []string `json:"copies,omitempty"`
}

// Open reports whether the gate still waits for an answer at now.
func (g Gate) Open(now time.Time) bool {
	return g.State == GatePending && now.Before(g.Expires)
}

// Edit applies fn to a copy of g, its lists copied too so fn cannot
// change g, and returns the copy with g's Token: the update a GateStore's
// UpdateGate makes. When fn fails, Edit returns g unchanged and fn's
// error as it is.
func (g Gate) Edit(fn func(*Gate) error) (Gate, error) {
	c := g
	c.Options, c.Allowed, c.Values = slices.Clone(g.Options), slices.Clone(g.Allowed), maps.Clone(g.Values)
	c.Votes, c.EscalateTo, c.Copies = slices.Clone(g.Votes), slices.Clone(g.EscalateTo), slices.Clone(g.Copies)
	if err := fn(&c); err != nil {
		return g, err
	}
	c.Token = g.Token
	return c, nil
}

// Decision returns the gate's outcome as a GateAnswer; anything but an
// approval denies.
func (g Gate) Decision() GateAnswer {
	a := GateAnswer{Approved: g.State == GateApproved, Answer: g.Answer, By: g.DecidedBy}
	if g.Values != nil {
		if raw, err := json.Marshal(g.Values); err == nil {
			a.Values = string(raw)
		}
	}
	return a
}

// MayAnswer reports whether the user, holding roles, may answer the gate:
// an approver, or the requester where self-approval is allowed.
func (g Gate) MayAnswer(user string, roles []string) bool {
	switch {
	case user == "":
		return false
	case user == g.Requester:
		return g.SelfApprove
	case slices.Contains(g.Allowed, user):
		return true
	}
	for _, r := range roles {
		if slices.Contains(g.Allowed, "role:"+r) {
			return true
		}
	}
	return false
}

// MayStop reports whether the user, holding roles, may stop the turn
// waiting on the gate, which denies it: the requester, who may always take
// back their own request, or an approver (SelfApprove aside).
func (g Gate) MayStop(user string, roles []string) bool {
	if user != "" && user == g.Requester {
		return true
	}
	g.SelfApprove = false
	return g.MayAnswer(user, roles)
}

// GateStore keeps gates durably. The store package implements it.
type GateStore interface {
	// CreateGate stores a new gate.
	CreateGate(ctx context.Context, g Gate) error
	// LoadGate returns the gate with token, or ErrGateUnknown.
	LoadGate(ctx context.Context, token string) (Gate, error)
	// UpdateGate loads the gate with token, applies fn to it, and stores
	// the result in one transaction. If fn returns an error nothing is
	// written and UpdateGate returns the gate as stored with fn's error
	// unwrapped. It returns ErrGateUnknown when no gate has that token.
	UpdateGate(ctx context.Context, token string, fn func(*Gate) error) (Gate, error)
	// GateBound returns the most recent gate opened with binding (see
	// [GateRequest.Binding]), or ErrNotFound.
	GateBound(ctx context.Context, binding string) (Gate, error)
}

// GatesOptions configures [NewGates].
type GatesOptions struct {
	Store GateStore
	// TTL is how long a gate stays open (default 30 minutes).
	TTL time.Duration
	// Clock tells the time and times a gate's expiry (default the real
	// clock).
	Clock Clock
	// SelfApprove lets the person who asked for a spend approve it
	// themselves. Off, only the configured approvers can.
	SelfApprove bool
}

// Gates opens approval gates, records decisions before anyone acts on them,
// and wakes the approver waiting on a gate. One Gates serves every adapter.
type Gates struct {
	store       GateStore
	ttl         time.Duration
	clock       Clock
	selfApprove bool

	mu      sync.Mutex
	waiters map[string][]chan woken // token -> approvers blocked in Wait
	// waitingIn holds the pending gates a turn of this process waits on,
	// by thread key and token, for MayStop.
	waitingIn map[string]map[string]Gate
	holds     uint64 // numbers the holds in waitingIn
}

// NewGates returns a Gates over the store.
func NewGates(opts GatesOptions) *Gates {
	g := &Gates{store: opts.Store, ttl: opts.TTL, clock: opts.Clock, selfApprove: opts.SelfApprove, waiters: map[string][]chan woken{}, waitingIn: map[string]map[string]Gate{}}
	if g.ttl <= 0 {
		g.ttl = 30 * time.Minute
	}
	if g.clock == nil {
		g.clock = realClock{}
	}
	return g
}

// widen returns the configured approvers with the place's own added
// (GateRequest.PlaceApprovers), each once.
func widen(configured, place []string) []string {
	out := slices.Clone(configured)
	for _, a := range place {
		if a != "" && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// Open returns the gate for req, creating it unless a gate with the same
// binding (thread, tool call, intent, node, question and options) is still
// open or decided. fresh is false when such a gate was found — a turn
// resumed after a restart: a pending one already has its buttons in the
// thread, a decided one carries the decision to resend. Anything else, the
// same intent and node IDs from another thread or call, or a node re-raised
// with a new question, opens a new gate and asks again. allowed are the
// configured approvers besides the requester.
func (gs *Gates) Open(ctx context.Context, req GateRequest, allowed []string) (g Gate, fresh bool, err error) {
	now := gs.clock.Now()
	binding := req.Binding()
	prev, err := gs.store.GateBound(ctx, binding)
	switch {
	case err == nil && req.Form != nil && !prev.asks(req):
		// The server asks something else at this place in the call: a
		// new question.
	case err == nil && (prev.Open(now) || prev.State == GateApproved || prev.State == GateDenied):
		// Resumed after a restart: the buttons are in the thread already,
		// or the human decided and the daemon may not have heard yet.
		return prev, false, nil
	case err != nil && !errors.Is(err, ErrNotFound):
		return Gate{}, false, fmt.Errorf("gate: look up %s/%s: %w", req.IntentID, req.NodeID, err)
	}
	token, err := newToken()
	if err != nil {
		return Gate{}, false, err
	}
	g = Gate{
		Token: token, Thread: req.Thread, IntentID: req.IntentID, NodeID: req.NodeID,
		CallID: req.CallID, Binding: binding,
		Question: req.Question, Options: slices.Clone(req.Options),
		Requester: req.Requester, Allowed: widen(allowed, req.PlaceApprovers), SelfApprove: gs.selfApprove,
		Created: now, Expires: now.Add(gs.ttl), State: GatePending,
	}
	if req.Quorum != nil && req.Form == nil {
		g.apply(req.Quorum, now)
	}
	if req.Form != nil {
		// Only the person whose turn it is answers a server's question.
		g.Form, g.Options, g.Allowed, g.SelfApprove = req.Form, req.Form.Options(), nil, true
		if req.TTL > 0 {
			g.Expires = now.Add(req.TTL)
		}
	}
	if len(g.Options) == 0 {
		g.Options = []Option{{Label: "yes", Approves: true}, {Label: "no"}}
	}
	if err := gs.store.CreateGate(ctx, g); err != nil {
		return Gate{}, false, fmt.Errorf("gate: create: %w", err)
	}
	return g, true, nil
}

// Decide records user's choice of the option labelled option on the gate
// with token: it approves when that option's Approves flag is set, and
// denies otherwise, whatever its label says. The
// decision is durable before Decide returns and before the approver waiting
// on the gate learns of it. Refusals change nothing and are reported as
// ErrGateUnknown, ErrGateForbidden, ErrGateClosed, ErrGateExpired or
// ErrGateOption; the returned gate is still filled in when it exists, so
// the caller can show its state.
func (gs *Gates) Decide(ctx context.Context, token, user string, roles []string, option string) (Gate, error) {
	return gs.decide(ctx, token, user, roles, option, "")
}

// decide is Decide from a surface ("thread", "dm", ...). Under a quorum
// an approval that leaves the gate short of it is recorded as a vote and
// the gate stays pending; a second click by a voter is ErrGateVoted.
func (gs *Gates) decide(ctx context.Context, token, user string, roles []string, option, surface string) (Gate, error) {
	now := gs.clock.Now()
	g, err := gs.store.UpdateGate(ctx, token, func(g *Gate) error {
		switch {
		case g.State != GatePending:
			return ErrGateClosed
		case !now.Before(g.Expires):
			return ErrGateExpired
		case !g.MayAnswer(user, roles):
			return ErrGateForbidden
		}
		i := slices.IndexFunc(g.Options, func(o Option) bool { return o.Label == option })
		switch {
		case i < 0:
			return ErrGateOption
		case g.Form != nil:
			return g.decideForm(option, now, user)
		}
		return g.vote(user, surface, g.Options[i], now)
	})
	if err != nil {
		return g, err
	}
	gs.wake(g, true)
	return g, nil
}

// Close ends a pending gate without a human decision (state GateExpired or
// GateDenied): the turn was cancelled, the gate timed out, or the daemon no
// longer asks. A gate already decided is returned unchanged.
func (gs *Gates) Close(ctx context.Context, token string, state GateState) (Gate, error) {
	now := gs.clock.Now()
	g, err := gs.store.UpdateGate(ctx, token, func(g *Gate) error {
		if g.State != GatePending {
			return ErrGateClosed
		}
		g.State, g.DecidedAt = state, now
		return nil
	})
	if errors.Is(err, ErrGateClosed) {
		return g, nil
	}
	if err != nil {
		return g, err
	}
	gs.wake(g, true)
	return g, nil
}

// Update applies fn to the stored gate (for an adapter to record its
// MessageRef, or the delegate to record Sent).
func (gs *Gates) Update(ctx context.Context, token string, fn func(*Gate) error) (Gate, error) {
	return gs.store.UpdateGate(ctx, token, fn)
}

// Wait blocks until the gate with token is decided or closed, expires, or
// ctx ends. An expired gate is closed as GateExpired. On ctx's end Wait
// returns ctx.Err() and leaves the gate pending for whoever resumes it.
// A gate under a quorum is reminded and escalated on its times meanwhile
// (see [Gates.follow]).
func (gs *Gates) Wait(ctx context.Context, token string) (Gate, error) {
	g, _, err := gs.follow(ctx, token, nil)
	return g, err
}

// follow is Wait that tells ui (when it is a [GateNotifier]) of the
// reminder, the escalation and the expiry of the gate as they come. Their
// times are stored in the gate, and each is recorded before anyone is
// told, so a turn resumed after a restart neither skips nor repeats one.
// elsewhere reports a decision another instance took while it waited
// (which that instance may have died before drawing).
func (gs *Gates) follow(ctx context.Context, token string, ui GateUI) (g Gate, elsewhere bool, err error) {
	ch := make(chan woken, 1)
	gs.mu.Lock()
	gs.waiters[token] = append(gs.waiters[token], ch)
	gs.mu.Unlock()
	defer gs.unwait(token, ch)

	// The decision may have landed before we registered.
	g, err = gs.store.LoadGate(ctx, token)
	for err == nil && g.State == GatePending {
		elsewhere = false
		at, step := g.next()
		timer, stop := gs.clock.NewTimer(at.Sub(gs.clock.Now()))
		select {
		case got := <-ch:
			stop()
			if got.State != GatePending {
				return got.Gate, !got.here, nil
			}
			// A vote, or an instance's wake-up: the store has the latest.
			g, err = gs.store.LoadGate(ctx, token)
			elsewhere = !got.here
		case <-timer:
			g, err = step(ctx, gs, g, ui)
		case <-ctx.Done():
			stop()
			return g, false, ctx.Err()
		}
	}
	return g, elsewhere, err
}

// woken is a gate handed to the turns waiting on it; here marks one this
// process changed (Decide, Close), not one another instance did.
type woken struct {
	Gate
	here bool
}

// step is what happens to a pending gate at its next time.
type step func(ctx context.Context, gs *Gates, g Gate, ui GateUI) (Gate, error)

// next returns the pending gate's next time and what happens then: the
// reminder, the escalation, or the expiry, whichever comes first.
func (g Gate) next() (time.Time, step) {
	at, st := g.Expires, step(expire)
	if !g.EscalateAt.IsZero() && !g.Escalated && g.EscalateAt.Before(at) {
		at, st = g.EscalateAt, escalate
	}
	if !g.RemindAt.IsZero() && !g.Reminded && g.RemindAt.Before(at) {
		at, st = g.RemindAt, remind
	}
	return at, st
}

// expire closes the gate as expired.
func expire(ctx context.Context, gs *Gates, g Gate, _ GateUI) (Gate, error) {
	return gs.Close(ctx, g.Token, GateExpired)
}

// Changed tells the gates that another process (an instance sharing the
// store) changed the gate with token: a turn here waiting on it wakes
// once the stored gate is decided.
func (gs *Gates) Changed(ctx context.Context, token string) error {
	gs.mu.Lock()
	waiting := len(gs.waiters[token]) > 0
	gs.mu.Unlock()
	if !waiting {
		return nil
	}
	g, err := gs.store.LoadGate(ctx, token)
	if err != nil {
		return fmt.Errorf("gate: reload %s: %w", token, err)
	}
	gs.wake(g, false) // a pending gate's waiter reloads it: a vote, an escalation
	return nil
}

// wake hands g, just stored, to the turns waiting on it. A waiter that
// has not read the previous state gets this one instead; one that reads
// a pending gate reloads it, so no decision is lost to the order of two
// wake-ups.
func (gs *Gates) wake(g Gate, here bool) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	for _, ch := range gs.waiters[g.Token] {
		select {
		case <-ch:
		default:
		}
		ch <- woken{g, here} // buffered and drained: never blocks
	}
}

// waitOn records that a turn waits on the pending gate g.
func (gs *Gates) waitOn(g Gate) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	k := g.Thread.Key()
	if gs.waitingIn[k] == nil {
		gs.waitingIn[k] = map[string]Gate{}
	}
	gs.waitingIn[k][g.Token] = g
}

// Hold records that a turn in thread t runs something only requester may
// stop, such as a tool's long-running task (stopping the turn cancels
// it): until release is called, [Gates.MayStop] lets requester stop the
// turn and refuses anyone else. Like the gates a turn waits on, a hold is
// this process's own. A nil Gates holds nothing.
func (gs *Gates) Hold(t Thread, requester string) (release func()) {
	if gs == nil {
		return func() {}
	}
	gs.mu.Lock()
	gs.holds++
	g := Gate{Token: fmt.Sprintf("hold:%d", gs.holds), Thread: t, Requester: requester, State: GatePending}
	gs.mu.Unlock()
	gs.waitOn(g)
	var once sync.Once
	return func() { once.Do(func() { gs.unwaitOn(g) }) }
}

// unwaitOn undoes waitOn.
func (gs *Gates) unwaitOn(g Gate) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	k := g.Thread.Key()
	delete(gs.waitingIn[k], g.Token)
	if len(gs.waitingIn[k]) == 0 {
		delete(gs.waitingIn, k)
	}
}

// MayStop reports whether user, holding roles, may stop the turn in
// thread t. Stopping a turn that waits on an approval denies the spend,
// which is a decision: while a turn waits on a gate in t, only someone who
// may stop every such gate ([Gate.MayStop]) may; any other turn anyone in
// the thread may stop. The gates waited on are this process's and, when
// the store is shared by several instances ([ThreadGates]), the pending
// ones it holds for t, so the rule holds whichever instance the stop
// reaches. A store that cannot answer refuses the stop, with its error:
// who may stop could not be checked. A nil Gates has no gates.
func (gs *Gates) MayStop(ctx context.Context, t Thread, user string, roles []string) (bool, error) {
	if gs == nil {
		return true, nil
	}
	gs.mu.Lock()
	for _, g := range gs.waitingIn[t.Key()] {
		if !g.MayStop(user, roles) {
			gs.mu.Unlock()
			return false, nil
		}
	}
	gs.mu.Unlock()
	tg, ok := gs.store.(ThreadGates)
	if !ok {
		return true, nil
	}
	stored, err := tg.GatesIn(ctx, t)
	if err != nil {
		return false, fmt.Errorf("gate: who may stop %s: %w", t.Key(), err)
	}
	now := gs.clock.Now()
	for _, g := range stored {
		if g.State == GatePending && now.Before(g.Expires) && !g.MayStop(user, roles) {
			return false, nil
		}
	}
	return true, nil
}

// ThreadGates is what a store shared by several instances adds to
// [GateStore]: the turn waiting on a gate may run on another instance than
// the one a stop reaches.
type ThreadGates interface {
	// GatesIn returns the pending gates of thread t.
	GatesIn(ctx context.Context, t Thread) ([]Gate, error)
}

// Waiting returns the gates that turns of this process wait on in the
// workspace (platform and workspace of their thread) and that user,
// holding roles, may answer: still pending and unexpired, as last stored
// (MessageRef set once the question is posted), oldest first. A gate
// whose turn is not running (it resumes after a restart) is not listed.
func (gs *Gates) Waiting(ctx context.Context, platform, workspace, user string, roles []string) []Gate {
	if gs == nil {
		return nil
	}
	gs.mu.Lock()
	var tokens []string
	for _, byToken := range gs.waitingIn {
		for token, g := range byToken {
			if g.Thread.Platform == platform && g.Thread.Workspace == workspace {
				tokens = append(tokens, token)
			}
		}
	}
	gs.mu.Unlock()
	now := gs.clock.Now()
	var out []Gate
	for _, token := range tokens {
		g, err := gs.store.LoadGate(ctx, token)
		if err != nil || !g.Open(now) || g.Form != nil || !g.MayAnswer(user, roles) {
			continue // a question's form is the asker's own, answered in its thread
		}
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b Gate) int { return a.Created.Compare(b.Created) })
	return out
}

func (gs *Gates) unwait(token string, ch chan woken) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	chs := slices.DeleteFunc(gs.waiters[token], func(c chan woken) bool { return c == ch })
	if len(chs) == 0 {
		delete(gs.waiters, token)
	} else {
		gs.waiters[token] = chs
	}
}

// newToken returns 128 random bits, URL-safe: unguessable, so a forged
// button value matches no gate.
func newToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("gate: token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}
