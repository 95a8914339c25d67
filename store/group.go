package store

import (
	"fmt"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// group commits durable writes together without waiting on a timer. A
// write that finds no commit running commits at once, alone; writes that
// arrive while a commit runs queue up and go together in the next one: one
// transaction, one fsync. The writer whose commit ends hands the next one
// to the oldest queued writer, so nobody commits for others for long.
type group struct {
	bolt *bolt.DB
	max  int // most writes in one transaction
	// lazyDelay is the longest a lazy write waits for a commit to join
	// before it commits on its own; lazyFailed hears a lazy write's error.
	lazyDelay  time.Duration
	lazyFailed func(error)

	mu    sync.Mutex
	queue []*queued
	busy  bool        // a writer is committing
	timer *time.Timer // flushes lazy writes nobody else committed
	due   time.Time   // when timer fires
}

// queued is one write waiting in the group.
type queued struct {
	fn   func(*bolt.Tx) error
	done chan error    // the write's outcome; nil for a lazy write
	lead chan struct{} // this writer commits next
	then func(error)   // a lazy write's outcome, when its writer wants it
	due  time.Time     // a lazy write commits by then, company or not
	// ripe is when a held write starts joining other commits; before it,
	// only its own class of write (release) or a flush takes it along.
	ripe time.Time
	// told is set when then hands a failure to a caller who reports it,
	// so the group does not log it as well.
	told bool
}

// later queues fn to commit with the next write, or on its own after
// lazyDelay, and returns at once. A crash before then loses it: only for
// writes whose loss the restart repairs. then, when not nil, hears the
// outcome once the transaction fn ran in has committed or failed.
// A failure is logged (Options.Logger).
func (g *group) later(fn func(*bolt.Tx) error, then func(error)) {
	g.enqueue(&queued{fn: fn, then: then, due: time.Now().Add(g.lazyDelay)})
}

// laterWithin is later with its own bound on the wait: fn commits with the
// next write, or on its own within d. then hands the outcome to a caller
// who reports a failure; the group does not log it.
func (g *group) laterWithin(d time.Duration, fn func(*bolt.Tx) error, then func(error)) {
	g.enqueue(&queued{fn: fn, then: then, due: time.Now().Add(d), told: true})
}

// hold is later for a write that need not join the very next commit.
// Held writes wait together: once the oldest is lazyDelay/2 old, all of
// them join the next commit, or commit on its own at lazyDelay as a lazy
// write does. A B+tree they all touch is then written once for all of
// them, not once per write (a turn's memory write-back: the memories tree
// stays out of most replies' commits). release takes them along at once.
func (g *group) hold(fn func(*bolt.Tx) error) {
	now := time.Now()
	g.enqueue(&queued{fn: fn, due: now.Add(g.lazyDelay), ripe: now.Add(g.lazyDelay / 2)})
}

// release makes every held write join the next commit: a write that must
// come after them (a durable write to what they write) calls it first.
func (g *group) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, w := range g.queue {
		w.ripe = time.Time{}
	}
}

// enqueue queues the lazy write w.
func (g *group) enqueue(w *queued) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.queue = append(g.queue, w)
	g.armLocked(w.due)
}

// armLocked makes sure the timer fires by due, to commit the lazy writes
// queued. A timer replaced or stopped after it fired does nothing: the
// one that replaced it, or whoever stopped it, sees to the writes.
func (g *group) armLocked(due time.Time) {
	if g.timer != nil && !due.Before(g.due) {
		return
	}
	if g.timer != nil {
		g.timer.Stop()
	}
	g.due = due
	var t *time.Timer
	t = time.AfterFunc(time.Until(due), func() {
		g.mu.Lock()
		current := g.timer == t
		if current {
			g.timer = nil // writes this commit leaves behind (held ones) get a timer of their own
		}
		g.mu.Unlock()
		if current {
			_ = g.write(func(*bolt.Tx) error { return nil })
		}
	})
	g.timer = t
}

// flush commits every lazy write still queued (Close calls it).
func (g *group) flush() error {
	g.mu.Lock()
	pending := len(g.queue) > 0
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
	g.mu.Unlock()
	if !pending {
		return nil
	}
	g.release()
	return g.write(func(*bolt.Tx) error { return nil })
}

// write runs fn in a durable transaction, alone or with the writes queued
// beside it; fn must be idempotent only in the sense that it derives its
// outputs from tx (it runs once per transaction it is in, and a
// transaction whose commit fails is not retried).
func (g *group) write(fn func(*bolt.Tx) error) error {
	w := &queued{fn: fn, done: make(chan error, 1), lead: make(chan struct{}, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, w)
	leading := !g.busy
	g.busy = true
	g.mu.Unlock()
	if leading {
		g.commitNext()
	}
	// A batch holds at most max writes, so with more than that queued
	// ahead of it (lazy ones, say) this write is not in the batch its
	// writer commits, and the lead comes back to it for the next one.
	for {
		select {
		case err := <-w.done:
			return err
		case <-w.lead:
			g.commitNext()
		}
	}
}

// commitNext commits the writes queued now, then hands the next commit to
// the oldest writer still queued, or marks the group idle.
func (g *group) commitNext() {
	g.mu.Lock()
	batch := g.takeLocked(time.Now())
	g.retimeLocked()
	g.mu.Unlock()

	g.commit(batch)

	g.mu.Lock()
	defer g.mu.Unlock()
	// The oldest writer still waiting commits next. Lazy writes have no
	// writer: left alone they wait for the next write, or their timer.
	if i := slices.IndexFunc(g.queue, func(w *queued) bool { return w.done != nil }); i >= 0 {
		g.queue[i].lead <- struct{}{}
		return
	}
	g.busy = false
}

// retimeLocked sets the timer for the earliest due lazy write still
// queued, or stops it when none is: a timer left for writes a commit took
// would commit nothing but an fsync.
func (g *group) retimeLocked() {
	var due time.Time
	for _, w := range g.queue {
		if w.done == nil && (due.IsZero() || w.due.Before(due)) {
			due = w.due
		}
	}
	if g.timer != nil && due.Equal(g.due) {
		return
	}
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
	if !due.IsZero() {
		g.armLocked(due)
	}
}

// takeLocked removes the next batch from the queue: up to max writes, in
// queue order. Held writes go all together once the oldest of them is
// ripe at now; until then they keep their place and the rest go without
// them. (Taken one by one as each ripened, they would ride one per commit
// again.)
func (g *group) takeLocked(now time.Time) []*queued {
	n := min(len(g.queue), g.max)
	// Ripe times grow along the queue (release zeroes them all), so the
	// first held write is the oldest.
	i := slices.IndexFunc(g.queue, func(w *queued) bool { return !w.ripe.IsZero() })
	if i < 0 || !now.Before(g.queue[i].ripe) {
		batch := g.queue[:n:n]
		g.queue = g.queue[n:]
		return batch
	}
	batch := make([]*queued, 0, n)
	rest := g.queue[:0]
	for _, w := range g.queue {
		if len(batch) < n && w.ripe.IsZero() {
			batch = append(batch, w)
		} else {
			rest = append(rest, w)
		}
	}
	clear(g.queue[len(rest):])
	g.queue = rest
	return batch
}

// commit runs batch in one transaction. A write whose fn fails gets its
// error (it saw the writes before it, as it would have committed after
// them) and the rest commit without it.
func (g *group) commit(batch []*queued) {
	for len(batch) > 0 {
		failed := -1
		var fnErr error
		err := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("store: a write panicked: %v", r)
				}
			}()
			return g.bolt.Update(func(tx *bolt.Tx) error {
				pack(tx)
				for i, w := range batch {
					if err := w.fn(tx); err != nil {
						failed, fnErr = i, err
						return err
					}
				}
				return nil
			})
		}()
		if failed < 0 {
			for _, w := range batch {
				w.report(g, err)
			}
			return
		}
		batch[failed].report(g, fnErr)
		batch = append(batch[:failed:failed], batch[failed+1:]...)
	}
}

// report delivers a write's outcome: to its writer, or for a lazy write to
// lazyFailed when it failed.
func (w *queued) report(g *group, err error) {
	if w.done != nil {
		w.done <- err
		return
	}
	if w.then != nil {
		w.then(err)
	}
	if err != nil && !w.told && g.lazyFailed != nil {
		g.lazyFailed(err)
	}
}
