package delegate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/neobot/neobot/core"
)

// follow polls the intent until it reaches a final state, MaxWait passes or
// ctx ends, servicing its gates meanwhile.
func (c *Client) follow(ctx context.Context, j job, intentID string) (string, error) {
	deadline := c.now().Add(c.maxWait)
	gs := &gateSet{c: c, job: j, intentID: intentID, nodes: map[string]*gateWork{}, wake: make(chan struct{}, 1)}
	defer gs.stop()

	var last string
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return "", c.interrupted(ctx, intentID)
		case <-timer.C:
		case <-gs.wake: // an answer went out: look again at once
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		}
		if !c.now().Before(deadline) {
			c.log.Warn().Str("intent", intentID).Dur("max_wait_ms", c.maxWait).Msg("delegate: max wait reached")
			return "", &daemonError{
				msg:      fmt.Sprintf("%s: intent %s was still running after %s; it may yet finish at the execution daemon, so check with the user before submitting it again", ErrTimeout, intentID, c.maxWait),
				sentinel: ErrTimeout,
			}
		}

		st, err := c.status(ctx, intentID)
		switch {
		case ctx.Err() != nil:
			return "", c.interrupted(ctx, intentID)
		case err != nil:
			if ferr := c.pollError(intentID, err); ferr != nil {
				return "", ferr
			}
		default:
			if answer, err, done := c.outcome(intentID, st); done {
				j.notify(ctx, finalNotice(intentID, err))
				return answer, err
			}
			if st.Status != last && last != "" {
				j.notify(ctx, fmt.Sprintf("Request %s is %s.", intentID, strings.ReplaceAll(st.Status, "_", " ")))
			}
			last = st.Status

			pending, err := c.pending(ctx, intentID)
			switch {
			case ctx.Err() != nil:
				return "", c.interrupted(ctx, intentID)
			case err != nil:
				if ferr := c.pollError(intentID, err); ferr != nil {
					return "", ferr
				}
			default:
				gs.sync(ctx, pending)
			}
		}
		timer.Reset(c.poll)
	}
}

// outcome maps a status to Run's result; done is false while the intent
// is still running.
func (c *Client) outcome(intentID string, st statusResponse) (answer string, err error, done bool) {
	status := strings.ToLower(strings.TrimSpace(st.Status))
	if q := text(st.Clarify); q != "" || status == "clarify" || status == "needs_clarification" {
		if q == "" {
			q = "it did not say what is missing"
		}
		return "", &ClarifyError{IntentID: intentID, Question: q}, true
	}
	switch status {
	case "completed", "complete", "succeeded", "done":
		if st.Result != nil && strings.TrimSpace(st.Result.Answer) != "" {
			return st.Result.Answer, nil, true
		}
		return "Done", nil, true
	case "failed", "error":
		return "", &FailedError{IntentID: intentID, Message: text(st.Error)}, true
	case "cancelled", "canceled":
		return "", ErrCancelled, true
	}
	return "", nil, false
}

// pollError decides whether a failed poll ends Run: refusals do, transient
// failures are retried at the next poll until MaxWait.
func (c *Client) pollError(intentID string, err error) error {
	var he *HTTPError
	if errors.As(err, &he) && !retryable(err) {
		msg := fmt.Sprintf("the execution daemon refused to report on intent %s (HTTP %d): %s", intentID, he.Status, he.Message)
		switch he.Status {
		case http.StatusNotFound:
			msg = fmt.Sprintf("the execution daemon no longer knows intent %s; its outcome is unknown, so check with the user before submitting it again", intentID)
		case http.StatusUnauthorized, http.StatusForbidden:
			msg = fmt.Sprintf("the execution daemon refused the credentials while following intent %s (HTTP %d); the operator should check NEO_DAEMON_TOKEN", intentID, he.Status)
		}
		return &daemonError{msg: msg, sentinel: ErrRefused, cause: err}
	}
	c.log.Warn().Err(err).Str("intent", intentID).Msg("delegate: poll failed; retrying")
	return nil
}

func (c *Client) interrupted(ctx context.Context, intentID string) error {
	return &daemonError{
		msg:      fmt.Sprintf("%s (intent %s); it is still recorded and will be followed again when the turn resumes", ErrInterrupted, intentID),
		sentinel: ErrInterrupted, cause: context.Cause(ctx),
	}
}

func finalNotice(intentID string, err error) string {
	var ce *ClarifyError
	switch {
	case err == nil:
		return fmt.Sprintf("The delegated task completed (intent %s).", intentID)
	case errors.As(err, &ce):
		return fmt.Sprintf("The execution daemon needs more detail (intent %s).", intentID)
	case errors.Is(err, ErrCancelled):
		return fmt.Sprintf("The delegated task was cancelled (intent %s).", intentID)
	}
	return fmt.Sprintf("The delegated task failed (intent %s).", intentID)
}

// gateSet services the gates of one intent: one approver per node, its
// answer sent once.
type gateSet struct {
	c        *Client
	job      job
	intentID string
	wake     chan struct{} // buffered 1: an answer was sent

	mu    sync.Mutex
	nodes map[string]*gateWork
	wg    sync.WaitGroup
}

type gateWork struct {
	cancel context.CancelFunc
	asking bool // the approver is deciding; false once its answer is being sent
}

// sync starts an approver for every newly pending node and cancels the
// approvers of nodes that left the pending list undecided.
func (gs *gateSet) sync(ctx context.Context, pending []pendingGate) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	seen := map[string]bool{}
	for _, p := range pending {
		if p.NodeID == "" || seen[p.NodeID] {
			continue
		}
		seen[p.NodeID] = true
		if _, ok := gs.nodes[p.NodeID]; ok {
			continue
		}
		gctx, cancel := context.WithCancel(ctx)
		gs.nodes[p.NodeID] = &gateWork{cancel: cancel, asking: true}
		gs.wg.Go(func() { gs.serve(gctx, p) })
	}
	for node, w := range gs.nodes {
		if w.asking && !seen[node] {
			gs.c.log.Info().Str("intent", gs.intentID).Str("node", node).Msg("delegate: gate withdrawn by the daemon")
			w.cancel()
			w.asking = false
		}
	}
}

// serve asks the approver about one gate and sends the decision. The
// daemon hears every outcome — approval, denial, timeout, a stopped turn, a
// withdrawn gate, an approver that failed — as an answer, never silence,
// except when Neo is shutting down (cause core.ErrShutdown): then the gate
// stays pending and a resumed Run asks again (an approver over core.Gates
// returns the recorded decision without asking twice).
func (gs *gateSet) serve(ctx context.Context, p pendingGate) {
	defer gs.wakeUp()
	c := gs.c
	log := c.log.With().Str("intent", gs.intentID).Str("node", p.NodeID).Logger()
	ans := gs.ask(ctx, p)
	gs.mu.Lock()
	if ctx.Err() != nil {
		delete(gs.nodes, p.NodeID) // ask again if it comes back
		gs.mu.Unlock()
		if errors.Is(context.Cause(ctx), core.ErrShutdown) {
			return
		}
		// Stopped, withdrawn, or Run ended: the daemon hears a denial
		// now rather than holding the spend until its own timeout.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.timeout)
		defer cancel()
		if err := c.answer(sctx, gs.intentID, p.NodeID, core.GateAnswer{}); err != nil {
			log.Warn().Err(err).Msg("delegate: denial of a closed gate not delivered")
		}
		return
	}
	if w := gs.nodes[p.NodeID]; w != nil {
		w.asking = false
	}
	gs.mu.Unlock()

	log = log.With().Bool("approved", ans.Approved).Logger()
	if err := c.answer(ctx, gs.intentID, p.NodeID, ans); err != nil {
		log.Warn().Err(err).Msg("delegate: gate answer not delivered; will ask again if still pending")
		gs.mu.Lock()
		if w := gs.nodes[p.NodeID]; w != nil {
			w.cancel()
			delete(gs.nodes, p.NodeID)
		}
		gs.mu.Unlock()
		return
	}
	log.Info().Str("by", ans.By).Msg("delegate: gate answered")
}

// ask puts one gate to the approver. An approver that panics (a question
// no renderer expected) denies the gate and is logged, instead of taking
// the process down and crashing again on every restart.
func (gs *gateSet) ask(ctx context.Context, p pendingGate) (ans core.GateAnswer) {
	defer func() {
		if r := recover(); r != nil {
			gs.c.log.Error().Str("intent", gs.intentID).Str("node", p.NodeID).
				Str("panic", fmt.Sprint(r)).Str("stack", string(debug.Stack())).
				Msg("delegate: approver panicked; the gate is denied")
			ans = core.GateAnswer{}
		}
	}()
	return core.Ask(ctx, gs.job.approver, core.GateRequest{
		Thread: gs.job.thread, IntentID: gs.intentID, NodeID: p.NodeID, CallID: gs.job.callID,
		Question: p.Question, Options: daemonOptions(p.Options), Requester: gs.job.requester,
		PlaceApprovers: gs.job.placeApprovers,
	})
}

// daemonOptions marks which of the daemon's option labels approve. The
// daemon says only the labels, so they are read here, where they come in,
// with core.Approves: a plain yes approves, anything else ("Don't send")
// denies. No labels leaves the gate's default yes and no.
func daemonOptions(labels []string) []core.Option {
	if len(labels) == 0 {
		return nil
	}
	opts := make([]core.Option, len(labels))
	for i, l := range labels {
		opts[i] = core.Option{Label: l, Approves: core.Approves(l)}
	}
	return opts
}

func (gs *gateSet) wakeUp() {
	select {
	case gs.wake <- struct{}{}:
	default:
	}
}

// stop cancels every approver still running and waits for them.
func (gs *gateSet) stop() {
	gs.mu.Lock()
	for _, w := range gs.nodes {
		w.cancel()
	}
	gs.mu.Unlock()
	gs.wg.Wait()
}

// maxAnswerAttempts bounds the resends of one gate answer before the gate
// is handed back to the poll loop.
const maxAnswerAttempts = 6

// answer sends a gate decision, resending on transport errors, 429 and 5xx
// with the same idempotency key. A 404 or 409 means the gate is no longer
// pending (answered by an earlier attempt, or withdrawn): nothing to do.
func (c *Client) answer(ctx context.Context, intentID, nodeID string, ans core.GateAnswer) error {
	body := answerRequest{Approved: ans.Approved, Answer: ans.Answer}
	backoff := c.poll
	for attempt := 1; ; attempt++ {
		err := c.postAnswer(ctx, intentID, nodeID, body)
		var he *HTTPError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &he) && (he.Status == http.StatusNotFound || he.Status == http.StatusConflict):
			c.log.Info().Str("intent", intentID).Str("node", nodeID).Int("status", he.Status).Msg("delegate: gate no longer pending")
			return nil
		case !retryable(err) || attempt >= maxAnswerAttempts:
			return fmt.Errorf("delegate: answer %s/%s after %d attempts: %w", intentID, nodeID, attempt, err)
		}
		c.log.Warn().Err(err).Str("intent", intentID).Str("node", nodeID).Int("attempt", attempt).Msg("delegate: resending gate answer")
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("delegate: answer %s/%s: %w", intentID, nodeID, ctx.Err())
		case <-t.C:
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}
