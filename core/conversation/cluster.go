package conversation

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/neobot/neobot/core"
)

// Cluster lets the hubs of several processes share one journal (neobot
// instances on one PostgreSQL database): each thread's turns run in one
// process at a time, in order, whichever process received the message.
// Nil, the default, is a process alone.
type Cluster interface {
	// Claim makes this process the one that runs thread's turns until it
	// calls Release: false when another process holds the thread.
	Claim(ctx context.Context, thread string) (bool, error)
	// Release gives a claimed thread up.
	Release(ctx context.Context, thread string) error
	// Hand tells the other processes that a message for thread was
	// journaled here while another process holds the thread; that
	// process calls [Hub.Handed].
	Hand(ctx context.Context, thread string) error
	// Pending returns thread's journaled messages not yet completed,
	// in journal order.
	Pending(ctx context.Context, thread string) ([]core.Inbound, error)
}

// claim is what a worker does with the message it took, once it knows
// who holds the thread.
type claim int

const (
	claimRun     claim = iota // this process holds the thread: run the turn
	claimDrop                 // not to run here: held elsewhere, or completed meanwhile
	claimRequeue              // an earlier message of the thread runs first
)

// claimed makes sure this process holds mb's thread before it runs its
// turn. When another process holds it, the thread's messages here are let
// go (they stay in the journal, for that process) and handed over. Before
// a turn the thread's queue is brought in line with the journal:
// messages another process completed are dropped, those it journaled are
// adopted, and the earliest runs first, so a thread's turns run in
// journal order whichever process received each message. A message
// submitAhead found nothing unknown ahead of, in a thread held and read
// here since before it was journaled, needs no read: it runs.
func (h *Hub) claimed(ctx context.Context, mb *mailbox, it *item) claim {
	if h.cluster == nil {
		return claimRun
	}
	h.mu.Lock()
	for h.releasing[mb.key] != nil {
		done := h.releasing[mb.key]
		h.mu.Unlock()
		<-done
		h.mu.Lock()
	}
	owned := h.owned[mb.key]
	if owned && it.known != 0 && h.verified[mb.key] == it.known {
		h.mu.Unlock()
		return claimRun // held, read and known since before it was journaled (submitAhead)
	}
	read := h.queued // messages queued after this were journaled after the read below began
	unsure := h.unsure
	h.mu.Unlock()
	ok, err := owned, error(nil)
	if !owned {
		if ok, err = h.cluster.Claim(ctx, mb.key); err != nil {
			h.log.Error().Err(err).Str("thread", mb.key).Msg("claim thread; its messages wait in the journal")
		}
	}
	var pending []core.Inbound
	if ok {
		if pending, err = h.cluster.Pending(ctx, mb.key); err != nil && owned {
			return claimRun // the turn meets the same store, and says what failed
		}
		if err != nil {
			h.log.Error().Err(err).Str("thread", mb.key).Msg("read the thread's journal after claiming it")
			ok = false
			if rerr := h.cluster.Release(context.WithoutCancel(ctx), mb.key); rerr != nil {
				h.log.Error().Err(rerr).Str("thread", mb.key).Msg("release thread")
			}
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !ok {
		for _, q := range mb.queue {
			delete(h.inflight, eventKey(q.in))
		}
		mb.queue = nil
		if err == nil {
			h.handLocked(mb.key)
		}
		return claimDrop
	}
	h.owned[mb.key] = true
	if h.verified[mb.key] == 0 && h.unsure == unsure {
		h.marks++
		h.verified[mb.key] = h.marks
	}
	pending = h.stopsLocked(pending)
	pos := journalOrder(pending)
	mb.queue = slices.DeleteFunc(mb.queue, func(q *item) bool {
		if _, ok := pos[eventKey(q.in)]; ok || q.seq > read {
			return false // pending, or queued since the read: too new for it
		}
		delete(h.inflight, eventKey(q.in)) // completed by another process
		return true
	})
	for _, plan := range h.planLocked(pending) {
		h.resumeLocked(plan)
	}
	if _, ok := pos[eventKey(it.in)]; !ok {
		return claimDrop
	}
	inJournalOrder(mb.queue, pos)
	if len(mb.queue) > 0 && pos[eventKey(mb.queue[0].in)] < pos[eventKey(it.in)] {
		it.resumed = false
		mb.queue = append(mb.queue, it)
		inJournalOrder(mb.queue, pos)
		return claimRequeue
	}
	return claimRun
}

// errClaimLost is the cause of a turn stopped because this process lost
// its thread's claim: another process may run the thread now.
var errClaimLost = errors.New("conversation: this process lost the thread's claim")

// ClaimsLost stops what runs here under claims this process no longer
// holds, because the cluster lost them (its claims connection broke):
// those threads are no longer held here, and their running turns are
// cancelled and left pending in the journal, for whichever process
// claims the thread next to resume (this one too, at the thread's next
// message or the next look for orphaned threads). Keys this process does
// not hold are ignored.
func (h *Hub) ClaimsLost(threads []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	stopped := 0
	for _, key := range threads {
		if !h.owned[key] {
			continue
		}
		h.unsure++
		delete(h.owned, key)
		delete(h.verified, key)
		delete(h.settled, key)
		if t := h.lingering[key]; t != nil {
			t.Stop()
			delete(h.lingering, key)
			delete(h.idleGen, key)
		}
		if mb := h.threads[key]; mb != nil && mb.cur != nil {
			mb.cur.cancel(errClaimLost)
			stopped++
		}
	}
	h.log.Warn().Int("claims", len(threads)).Int("turns_stopped", stopped).Msg("lost thread claims; their turns stop here and resume where the threads are claimed next")
}

// clusterTimeout bounds a hand-over or a release the hub sends to the
// other instances in the background, where no caller's context does: a
// database that stops answering fails the chore instead of holding a
// goroutine (and, for a release, the thread's next claim) forever.
const clusterTimeout = 10 * time.Second

// handLocked tells the other processes, in the background, that thread
// has a message journaled here for whoever holds it. Callers hold h.mu.
func (h *Hub) handLocked(thread string) {
	h.choreGroup.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
		defer cancel()
		if err := h.cluster.Hand(ctx, thread); err != nil {
			h.log.Error().Err(err).Str("thread", thread).Msg("hand a message over to the process that runs its thread")
		}
	})
}

// stopsLocked carries out the pending stops another process journaled for
// a thread busy here (cancelling its running turn and setting its queue
// aside, as a stop received here does) and returns the rest of pending.
// A stop for a thread idle here is left to planLocked, which settles it.
// Callers hold h.mu.
func (h *Hub) stopsLocked(pending []core.Inbound) []core.Inbound {
	return slices.DeleteFunc(slices.Clone(pending), func(in core.Inbound) bool {
		mb, p := h.threads[in.Thread.Key()], h.platforms[in.Thread.Platform]
		if !core.IsStop(in.Text) || h.inflight[eventKey(in)] || mb == nil || p == nil {
			return false
		}
		h.inflight[eventKey(in)] = true
		if h.stops == nil || in.AdminStop {
			h.stopLocked(p, mb, in)
			return true
		}
		h.choreLocked(func(ctx context.Context) { h.stopChecked(ctx, p, in) })
		return true
	})
}

// stopChecked carries out a stop another process received if its author
// may stop the turn running here, and otherwise tells them why not (in
// private where the platform can) and settles the stop: the other
// process checked only what the database holds, not what this process
// holds for the turn.
func (h *Hub) stopChecked(ctx context.Context, p Platform, stop core.Inbound) {
	ok, err := h.stops.MayStop(ctx, stop.Thread, stop.User, stop.Roles)
	if ok {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.stopLocked(p, h.threads[stop.Thread.Key()], stop)
		return
	}
	defer h.forgetEvents([]*item{{in: stop}})
	text := textStopRefused
	if err != nil {
		h.log.Warn().Err(err).Str("thread", stop.Thread.Key()).Str("user", stop.User).Msg("stop refused: who may stop could not be checked")
		text = textStopUnchecked
	} else {
		h.log.Info().Str("thread", stop.Thread.Key()).Str("user", stop.User).Msg("stop refused: only the turn's person may stop it")
	}
	rep := p.Reporter(stop.Thread)
	if pn, private := rep.(core.PrivateNoticer); private && stop.User != "" {
		if err := pn.PrivateNotice(core.WithTurn(ctx, &core.Turn{Inbound: stop, Reporter: rep}), stop.User, text); err != nil {
			h.log.Warn().Err(err).Str("thread", stop.Thread.Key()).Msg("tell a person their stop was refused")
		}
	} else {
		h.notice(ctx, rep, stop, text)
	}
	h.complete(ctx, stop)
}

// journalOrder maps each pending message to its place in the journal.
func journalOrder(pending []core.Inbound) map[string]int {
	pos := make(map[string]int, len(pending))
	for i, in := range pending {
		pos[eventKey(in)] = i
	}
	return pos
}

// inJournalOrder sorts a thread's queue by the journal's order; messages
// the journal read did not hold (submitted since) keep their order after
// the others.
func inJournalOrder(q []*item, pos map[string]int) {
	at := func(it *item) int {
		if p, ok := pos[eventKey(it.in)]; ok {
			return p
		}
		return len(pos)
	}
	slices.SortStableFunc(q, func(a, b *item) int { return cmp.Compare(at(a), at(b)) })
}

// letGoLocked releases the claim of a thread that has no work left here,
// after Options.Linger if the thread stays idle that long (a thread that
// is talking keeps its claim between turns), then looks at its journal
// once more: a message another process journaled while this one held the
// thread, whose hand-over came too late to be seen, is adopted now.
// Callers hold h.mu.
func (h *Hub) letGoLocked(key string) {
	if h.cluster == nil || !h.owned[key] {
		return
	}
	if h.linger > 0 && h.state == stateRunning {
		h.idleGen[key]++
		gen := h.idleGen[key]
		h.lingering[key] = time.AfterFunc(h.linger, func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.idleGen[key] != gen || h.threads[key] != nil || h.state != stateRunning {
				return // busy again, or a later idle spell has its own timer
			}
			delete(h.lingering, key)
			delete(h.idleGen, key)
			h.unclaimLocked(key)
		})
		return
	}
	h.unclaimLocked(key)
}

// unclaimLocked releases a thread's claim now. Callers hold h.mu.
func (h *Hub) unclaimLocked(key string) {
	if !h.owned[key] {
		return
	}
	h.unsure++
	delete(h.owned, key)
	delete(h.verified, key)
	delete(h.settled, key)
	done := make(chan struct{})
	h.releasing[key] = done
	h.choreGroup.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
		defer cancel()
		err := h.cluster.Release(ctx, key)
		h.mu.Lock()
		delete(h.releasing, key)
		close(done)
		h.mu.Unlock()
		if err != nil {
			h.log.Error().Err(err).Str("thread", key).Msg("release thread")
			return
		}
		if err := h.Adopt(ctx, key); err != nil {
			h.log.Error().Err(err).Str("thread", key).Msg("look for messages handed over meanwhile")
		}
	})
}

// stopLingering stops the timers of idle claims: the claims end with
// the process's claims session. Callers hold h.mu.
func (h *Hub) stopLingering() {
	for key, t := range h.lingering {
		t.Stop()
		delete(h.lingering, key)
	}
}

// Handed is the hand-over of a message another process journaled for
// thread: the process that holds thread queues it; the others do nothing.
func (h *Hub) Handed(ctx context.Context, thread string) error {
	h.mu.Lock()
	owned := h.owned[thread]
	if !owned {
		// A claim being made here now may not have its read see this
		// message: that read verifies nothing (claimed).
		h.unsure++
	}
	h.mu.Unlock()
	if !owned {
		return nil
	}
	return h.Adopt(ctx, thread)
}

// Adopt queues thread's journaled messages that this process has not
// queued: handed over by another process, or left by one that died. They
// run here if this process can claim the thread, else they are let go
// again. Like Start, Adopt settles a pending stop and messages older than
// MaxAge without a turn.
func (h *Hub) Adopt(ctx context.Context, thread string) error {
	if h.cluster == nil {
		return nil
	}
	h.mu.Lock()
	running := h.state == stateRunning
	h.mu.Unlock()
	if !running {
		// Start reads the journal; a closing hub leaves the messages
		// there for the next process, without claiming the thread again
		// (a claim made while closing could hold Close past its
		// deadline).
		return nil
	}
	pending, err := h.cluster.Pending(ctx, thread)
	if err != nil || len(pending) == 0 {
		return err
	}
	// Claimed first: only the process holding the thread settles a
	// pending stop or an expired message, so no notice is posted twice.
	if !h.claimThread(ctx, thread) {
		return nil // another process holds it, and its messages
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state != stateRunning {
		h.letIdleGoLocked([]string{thread})
		return nil // Start reads the journal, or the hub is closed
	}
	pending = h.stopsLocked(pending)
	for _, plan := range h.planLocked(pending) {
		h.resumeLocked(plan)
		if mb := h.threads[plan.thread.Key()]; mb != nil {
			inJournalOrder(mb.queue, journalOrder(pending))
		}
	}
	h.letIdleGoLocked([]string{thread})
	h.scheduleLocked()
	return nil
}

// claimThread makes this process hold thread: true when it did already or
// now does, false when another process holds it (or the claim failed,
// which is logged: the thread's messages wait in the journal).
func (h *Hub) claimThread(ctx context.Context, thread string) bool {
	h.mu.Lock()
	for h.releasing[thread] != nil {
		done := h.releasing[thread]
		h.mu.Unlock()
		<-done
		h.mu.Lock()
	}
	owned := h.owned[thread]
	h.mu.Unlock()
	if owned {
		return true
	}
	ok, err := h.cluster.Claim(ctx, thread)
	if err != nil {
		h.log.Error().Err(err).Str("thread", thread).Msg("claim thread; its messages wait in the journal")
	}
	if ok {
		h.mu.Lock()
		h.owned[thread] = true
		h.mu.Unlock()
	}
	return ok
}

// letIdleGoLocked lets go of the claims of threads that were claimed for
// their journal and have nothing queued or being settled here. Callers
// hold h.mu.
func (h *Hub) letIdleGoLocked(threads []string) {
	for _, key := range threads {
		if h.threads[key] == nil && !h.settling[key] {
			h.letGoLocked(key)
		}
	}
}
