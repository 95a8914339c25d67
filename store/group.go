package store

import (
	"fmt"
	"sync"

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

	mu    sync.Mutex
	queue []*queued
	busy  bool // a writer is committing
}

// queued is one write waiting in the group.
type queued struct {
	fn   func(*bolt.Tx) error
	done chan error    // the write's outcome
	lead chan struct{} // this writer commits next
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
	if !leading {
		select {
		case err := <-w.done:
			return err
		case <-w.lead:
		}
	}
	g.commitNext()
	return <-w.done
}

// commitNext commits the writes queued now, then hands the next commit to
// the oldest writer still queued, or marks the group idle.
func (g *group) commitNext() {
	g.mu.Lock()
	n := min(len(g.queue), g.max)
	batch := g.queue[:n:n]
	g.queue = g.queue[n:]
	g.mu.Unlock()

	g.commit(batch)

	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].lead <- struct{}{}
	} else {
		g.busy = false
	}
	g.mu.Unlock()
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
				w.done <- err
			}
			return
		}
		batch[failed].done <- fnErr
		batch = append(batch[:failed:failed], batch[failed+1:]...)
	}
}
