package conversation

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/neobot/neobot/core"
)

// Start resumes every journaled message that never completed, then starts
// running turns; ctx bounds only the journal read. Messages resume in
// journal order per thread, ahead of any message submitted while Start
// runs. A message older than Options.MaxAge gets an honest notice instead;
// a pending stop sets aside the pending messages before it; a message whose
// platform is not attached stays pending. Start may be called once.
func (h *Hub) Start(ctx context.Context) error {
	if h.err != nil {
		return h.err
	}
	h.starting.Lock()
	defer h.starting.Unlock()
	h.mu.Lock()
	switch h.state {
	case stateClosed:
		h.mu.Unlock()
		return ErrClosed
	case stateStarting, stateRunning:
		h.mu.Unlock()
		return errors.New("conversation: hub already started")
	}
	h.state = stateStarting
	h.mu.Unlock()

	pending, err := h.journal.PendingInbound(ctx)
	var claimed []string
	if err == nil && h.cluster != nil {
		// Shared journal: resume only the threads this process can claim.
		// The others run in their process, which settles their stops and
		// expired messages too.
		pending, claimed = h.claimPending(ctx, pending)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state == stateClosed {
		h.letIdleGoLocked(claimed)
		return ErrClosed
	}
	if err != nil {
		h.state = stateNew
		return fmt.Errorf("conversation: read journal: %w", err)
	}

	order := h.planLocked(pending)
	for _, plan := range order {
		h.resumeLocked(plan)
	}
	h.state = stateRunning
	h.letIdleGoLocked(claimed)
	h.log.Info().Int("pending", len(pending)).Int("threads", len(order)).Msg("conversation hub started")
	h.scheduleLocked()
	return nil
}

// claimPending claims the threads of pending messages and returns the
// messages of those this process now holds, with the threads claimed.
func (h *Hub) claimPending(ctx context.Context, pending []core.Inbound) ([]core.Inbound, []string) {
	held := map[string]bool{}
	var claimed []string
	for _, in := range pending {
		key := in.Thread.Key()
		if _, seen := held[key]; seen {
			continue
		}
		held[key] = h.claimThread(ctx, key)
		if held[key] {
			claimed = append(claimed, key)
		}
	}
	return slices.DeleteFunc(pending, func(in core.Inbound) bool { return !held[in.Thread.Key()] }), claimed
}

// planLocked sorts pending messages by thread into what to run again and
// what to settle without a turn, skipping those already queued here and
// those whose platform is not attached (they stay pending).
func (h *Hub) planLocked(pending []core.Inbound) []*resumePlan {
	now := h.now()
	plans := map[string]*resumePlan{}
	var order []*resumePlan
	for _, in := range pending {
		key := in.Thread.Key()
		p := h.platforms[in.Thread.Platform]
		if p == nil {
			h.log.Warn().Str("thread", key).Str("event", in.EventID).Msg("no platform attached; message stays pending")
			continue
		}
		if h.inflight[eventKey(in)] {
			continue // already queued here
		}
		plan := plans[key]
		if plan == nil {
			plan = &resumePlan{platform: p, thread: in.Thread}
			plans[key] = plan
			order = append(order, plan)
		}
		switch {
		case core.IsStop(in.Text):
			plan.settle = append(plan.settle, settlement{in: in, dropped: plan.items})
			plan.items = nil
		case !in.At.IsZero() && now.Sub(in.At) > h.maxAge:
			plan.settle = append(plan.settle, settlement{in: in, expired: true})
		default:
			plan.items = append(plan.items, &item{in: in})
		}
	}
	return order
}

// resumePlan is what Start does for one thread: the messages to run again
// and the ones to settle with a notice.
type resumePlan struct {
	platform Platform
	thread   core.Thread
	items    []*item
	settle   []settlement
}

// settlement is a pending message answered without a turn: a stop (with
// the messages it sets aside) or a message too old to resume.
type settlement struct {
	in      core.Inbound
	dropped []*item
	expired bool
}

// resumeLocked queues a thread's resumed messages ahead of anything
// submitted meanwhile, and settles the rest in one chore, in order.
func (h *Hub) resumeLocked(plan *resumePlan) {
	if len(plan.items) > 0 {
		for _, it := range plan.items {
			h.inflight[eventKey(it.in)] = true
			it.carried = true
			h.queued++
			it.seq = h.queued
		}
		plan.items[0].resumed = true // the first resumed turn tidies the thread
		mb := h.threads[plan.thread.Key()]
		if mb == nil {
			mb = &mailbox{thread: plan.thread, key: plan.thread.Key()}
			h.threads[mb.key] = mb
		}
		mb.queue = append(plan.items, mb.queue...)
		h.readyLocked(mb)
	}
	if len(plan.settle) == 0 {
		return
	}
	rep := plan.platform.Reporter(plan.thread)
	key := plan.thread.Key()
	h.settling[key] = true
	h.choreLocked(func(ctx context.Context) {
		defer func() {
			// Settled (or left for the next start): a claim taken for it
			// goes unless the thread has turns here.
			h.mu.Lock()
			delete(h.settling, key)
			h.letIdleGoLocked([]string{key})
			h.mu.Unlock()
		}()
		for _, s := range plan.settle {
			if ctx.Err() != nil {
				return // still pending: the next start settles it
			}
			if s.expired {
				h.notice(ctx, rep, s.in, expiredText(s.in.At))
				h.complete(ctx, s.in)
				continue
			}
			for _, it := range s.dropped {
				h.complete(ctx, it.in)
			}
			if len(s.dropped) > 0 {
				h.notice(ctx, rep, s.in, stopText(false, len(s.dropped)))
			}
			h.complete(ctx, s.in)
		}
	})
}
