package conversation

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/neobot/neobot/core"
)

// mailbox is a busy thread: its queue of messages and the turn running, if
// any. It exists only while the thread has work, so an idle thread costs
// nothing.
type mailbox struct {
	thread core.Thread
	key    string
	queue  []*item
	cur    *item // the running turn, nil when waiting
	// inReady reports that the mailbox is in Hub.ready. A mailbox waits
	// there with cur == nil; a "stop" may empty its queue, and the
	// scheduler drops it when it comes up.
	inReady bool
}

// item is one message waiting for, or running, its turn.
type item struct {
	in core.Inbound
	// resumed is set on the first of a thread's messages an earlier
	// process journaled and did not finish: its turn tidies the thread.
	resumed bool
	carried bool // any message resumed from an earlier process (resumeLocked)
	// unsaid: the thread showed a turn cut short, blamed on this message
	// (blameLeftovers; core.Turn.Unsaid).
	unsaid bool
	// seq is the hub's count of queued messages when this one was
	// queued: a message queued after a read of the journal began was
	// journaled after it too, so its absence from that read says nothing.
	seq uint64
	// known is the mark (Hub.verified) of the thread's journal read this
	// message was journaled after, with every message ahead of it known
	// here (submitAhead): while the thread keeps that mark, its turn
	// needs no read of its own. Zero: read first.
	known  uint64
	cancel context.CancelCauseFunc // set when the turn starts
	done   chan struct{}           // closed once the turn ended and the message was settled
}

// Tidier is implemented by a platform that can clear what a turn cut
// short by a crash left in its thread, such as a "Thinking…" status line
// nobody will ever edit again. The hub calls Tidy before a resumed turn,
// and before the turn of a message the platform delivered again, and
// learns from where the newest leftover sits among the thread's waiting
// messages which turn was cut short, so that turn, and only that one,
// says an answer it stored and never showed (core.Turn.Unsaid).
type Tidier interface {
	// Tidy deletes the leftovers in thread t and returns the platform
	// message ID of the newest, "" when there were none.
	Tidy(ctx context.Context, t core.Thread) (newest string)
	// Before reports whether platform message a was posted before b.
	Before(a, b string) bool
}

// admitLocked queues a fresh message, or handles it as a stop command.
// It returns the message's item when it queued it.
func (h *Hub) admitLocked(p Platform, in core.Inbound) *item {
	mb := h.threads[in.Thread.Key()]
	if core.IsStop(in.Text) {
		if h.cluster != nil && mb == nil && !h.owned[in.Thread.Key()] {
			// The thread may be running in another process: the stop is
			// for that one. It stays journaled; if no process holds the
			// thread, the orphan scan settles it.
			h.handLocked(in.Thread.Key())
			return nil
		}
		h.stopLocked(p, mb, in)
		return nil
	}
	k := eventKey(in)
	if h.inflight[k] {
		return nil // resumed by Start while Submit was journaling it
	}
	if mb != nil && len(mb.queue) >= h.maxQueued {
		// Set aside in words, never silently: the journal settles it so
		// a restart does not bring it back either.
		rep := p.Reporter(in.Thread)
		h.choreLocked(func(ctx context.Context) {
			h.notice(ctx, rep, in, queueFullText(h.maxQueued))
			h.complete(ctx, in)
		})
		return nil
	}
	h.inflight[k] = true
	if mb == nil {
		mb = &mailbox{thread: in.Thread, key: in.Thread.Key()}
		h.threads[mb.key] = mb
	}
	busy := mb.cur != nil || len(mb.queue) > 0
	h.queued++
	it := &item{in: in, seq: h.queued}
	mb.queue = append(mb.queue, it)
	h.readyLocked(mb)
	if busy {
		rep := p.Reporter(in.Thread)
		h.choreLocked(func(ctx context.Context) { h.notice(ctx, rep, in, textQueued) })
	}
	h.scheduleLocked()
	return it
}

// readyLocked puts a waiting mailbox with work at the back of the line.
func (h *Hub) readyLocked(mb *mailbox) {
	if mb.cur == nil && !mb.inReady && len(mb.queue) > 0 {
		mb.inReady = true
		h.ready = append(h.ready, mb)
	}
}

// stopLocked cancels the thread's running turn and sets aside its queue.
// The stop message itself is completed last, after the cancelled turn and
// the set-aside messages: were the process to die first, the pending stop
// would set them aside again on restart instead of letting them run.
func (h *Hub) stopLocked(p Platform, mb *mailbox, stop core.Inbound) {
	var running *item
	var dropped []*item
	if mb != nil {
		running, dropped = mb.cur, mb.queue
		mb.queue = nil
		if running != nil {
			running.cancel(core.ErrStopped)
		}
	}
	rep := p.Reporter(stop.Thread)
	h.choreLocked(func(ctx context.Context) {
		defer h.forgetEvents(append(dropped, &item{in: stop})) // an adopted stop was in flight too
		if running != nil {
			select {
			case <-running.done:
			case <-ctx.Done():
				return // stays pending; a restart settles it
			}
		}
		for _, it := range dropped {
			h.complete(ctx, it.in)
		}
		h.notice(ctx, rep, stop, stopText(running != nil, len(dropped)))
		h.complete(ctx, stop)
	})
}

// forgetEvents removes settled messages from the in-flight set.
func (h *Hub) forgetEvents(items []*item) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, it := range items {
		delete(h.inflight, eventKey(it.in))
	}
}

// scheduleLocked starts workers while slots and waiting threads remain.
func (h *Hub) scheduleLocked() {
	for h.running < h.max {
		mb, it, ctx := h.nextLocked()
		if mb == nil {
			return
		}
		h.running++
		h.workers.Add(1)
		h.pool.Go(func() {
			defer h.workers.Done()
			h.work(ctx, mb, it)
		})
	}
}

// nextLocked takes the first thread in line whose next message's author
// is under MaxPerUser and starts its turn, or returns nil when nothing may
// run. Threads passed over keep their place.
func (h *Hub) nextLocked() (*mailbox, *item, context.Context) {
	for i := 0; h.state == stateRunning && i < len(h.ready); {
		mb := h.ready[i]
		if len(mb.queue) == 0 { // emptied by a stop while it waited
			h.ready = slices.Delete(h.ready, i, i+1)
			mb.inReady = false
			h.forgetLocked(mb)
			continue
		}
		if h.byUser[userKey(mb.queue[0].in)] >= h.maxPerUser {
			i++
			continue
		}
		h.ready = slices.Delete(h.ready, i, i+1)
		mb.inReady = false
		it := mb.queue[0]
		mb.queue[0] = nil
		mb.queue = mb.queue[1:]
		ctx, cancel := context.WithCancelCause(context.Background())
		ctx = core.WithIdler(ctx, h.idler)
		it.cancel, it.done = cancel, make(chan struct{})
		mb.cur = it
		h.byUser[userKey(it.in)]++
		return mb, it, ctx
	}
	return nil, nil, nil
}

// userID names a message's author across the hub.
type userID struct{ platform, user string }

// userKey is the author of in; building it allocates nothing, which
// matters to a scheduler that passes over a capped user's queued threads.
func userKey(in core.Inbound) userID { return userID{in.Thread.Platform, in.User} }

// releaseLocked gives up one slot and starts whatever may now run.
func (h *Hub) releaseLocked() {
	h.running--
	close(h.slotFree)
	h.slotFree = make(chan struct{})
	h.scheduleLocked()
}

// idler is every turn's core.Idler: a turn waiting on a person gives up
// its slot, and takes one back (waiting for it) before going on. Should
// the turn end meanwhile, it takes the slot back at once, to give it up
// as it ends.
func (h *Hub) idler() func(ctx context.Context) {
	h.mu.Lock()
	h.releaseLocked()
	h.mu.Unlock()
	return func(ctx context.Context) {
		h.mu.Lock()
		defer h.mu.Unlock()
		for h.running >= h.max && ctx.Err() == nil {
			free := h.slotFree
			h.resuming++
			h.mu.Unlock()
			select {
			case <-free:
			case <-ctx.Done():
			}
			h.mu.Lock()
			h.resuming--
		}
		h.running++
	}
}

// forgetLocked drops an idle mailbox, unless a newer one replaced it,
// and lets go of its thread's claim.
func (h *Hub) forgetLocked(mb *mailbox) {
	if mb.cur == nil && !mb.inReady && len(mb.queue) == 0 && h.threads[mb.key] == mb {
		delete(h.threads, mb.key)
		h.letGoLocked(mb.key)
	}
}

// work runs turns until no thread waits: after each turn its thread goes
// to the back of the line, behind every thread already waiting.
func (h *Hub) work(ctx context.Context, mb *mailbox, it *item) {
	for {
		c := h.claimed(ctx, mb, it)
		switch c {
		case claimRun:
			h.turn(ctx, it)
		case claimDrop:
			close(it.done)
			it.cancel(nil)
		case claimRequeue:
			it.cancel(nil) // back in the queue; it gets a new context when it runs
		}
		h.mu.Lock()
		mb.cur = nil
		if c != claimRequeue {
			delete(h.inflight, eventKey(it.in))
			h.settledLocked(mb.key, it.in.EventID)
		}
		if u := userKey(it.in); h.byUser[u] <= 1 {
			delete(h.byUser, u)
		} else {
			h.byUser[u]--
		}
		h.readyLocked(mb)
		h.forgetLocked(mb)
		mb, it, ctx = h.nextLocked()
		if mb == nil {
			h.releaseLocked()
			h.mu.Unlock()
			return
		}
		h.mu.Unlock()
	}
}

// turn runs one message through the Runner and settles it in the journal.
func (h *Hub) turn(ctx context.Context, it *item) {
	defer close(it.done)
	defer it.cancel(nil)
	in := it.in
	h.mu.Lock()
	p := h.platforms[in.Thread.Platform]
	h.mu.Unlock()
	if p == nil { // detached since; leave it pending for a restart
		h.log.Error().Str("thread", in.Thread.Key()).Str("event", in.EventID).Msg("no platform for turn")
		return
	}
	if td, ok := p.(Tidier); ok && (it.resumed || in.Redelivered) {
		if newest := td.Tidy(ctx, in.Thread); newest != "" {
			h.blameLeftovers(it, newest, td)
		}
	}
	if pr, ok := p.(core.Preparer); ok && in.Unprepared() {
		in = pr.Prepare(ctx, in)
	}
	h.mu.Lock()
	unsaid := it.unsaid
	h.mu.Unlock()
	t := core.Turn{Inbound: in, Reporter: p.Reporter(in.Thread), Approver: p.Approver(in.Thread, in.User), Unsaid: unsaid}
	err := h.run(core.WithTurn(ctx, &t), t)
	cause := context.Cause(ctx)
	switch {
	case err == nil, errors.Is(err, core.ErrAnswered):
		h.completeAnswered(ctx, in)
	case ctx.Err() != nil && errors.Is(cause, core.ErrStopped):
		h.complete(ctx, in) // the stop command posts the notice
	case ctx.Err() != nil && errors.Is(cause, errClaimLost):
		h.log.Warn().Str("thread", in.Thread.Key()).Str("event", in.EventID).Msg("turn stopped: this process lost the thread's claim; it resumes where the thread is claimed next")
	case ctx.Err() != nil && errors.Is(cause, errNotJournaled):
		h.log.Warn().Str("thread", in.Thread.Key()).Str("event", in.EventID).Msg("turn called off: its message could not be journaled")
	case ctx.Err() != nil && errors.Is(cause, core.ErrShutdown):
		h.log.Info().Str("thread", in.Thread.Key()).Str("event", in.EventID).Msg("turn interrupted by shutdown; resumes after restart")
	default:
		h.log.Error().Err(err).Str("thread", in.Thread.Key()).Str("event", in.EventID).Msg("turn failed")
		nctx, cancel := context.WithTimeout(ctx, h.noticeTimeout)
		h.notice(nctx, t.Reporter, in, failureText(err))
		cancel()
		h.complete(ctx, in)
	}
}

// blameLeftovers marks the message whose turn left the newest leftover
// Tidy found in its thread: the last of the thread's messages resumed from
// an earlier process, it or one queued behind it, that was posted before
// that leftover. A thread's turns run one at a time, and a turn posts only
// after its message arrived, so a leftover older than a message is no turn
// of that message's or of any after it: their answers are not said again.
// A leftover older than the first message belongs to a turn that ended
// before it, and blames nobody. The message blamed is that turn, or one
// whose turn never started, where Unsaid changes nothing; no answer is
// said twice, only the one of the turn that was cut short.
func (h *Hub) blameLeftovers(it *item, newest string, td Tidier) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var blamed *item
	candidates := []*item{it}
	if mb := h.threads[it.in.Thread.Key()]; mb != nil {
		for _, q := range mb.queue {
			if q.carried && q != it {
				candidates = append(candidates, q)
			}
		}
	}
	for _, c := range candidates {
		if c.in.MessageID != "" && !td.Before(c.in.MessageID, newest) {
			break
		}
		blamed = c
	}
	if blamed != nil {
		blamed.unsaid = true
	}
}

// run calls the Runner, turning a panic into an error so one bad turn does
// not take every thread down with it.
func (h *Hub) run(ctx context.Context, t core.Turn) (err error) {
	defer func() {
		if r := recover(); r != nil {
			h.log.Error().Str("stack", string(debug.Stack())).Msg("runner panicked")
			err = fmt.Errorf("conversation: runner panicked: %v", r)
		}
	}()
	return h.runner.Run(ctx, t)
}
