package postgres

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// group commits single-statement writes together. A write that finds a
// committer free goes at once; writes that arrive while every committer
// is busy queue up and go together in the next batch: their statements
// pipelined in one round trip and one implicit transaction, so one commit
// (one WAL flush) serves them all. When a batch fails, its writes are
// retried one by one, so one bad write fails alone. A statement that ran
// but returned no row where its callback wanted one (pgx.ErrNoRows) fails
// its own write only: the batch committed, and running its other writes
// again would apply them twice.
type group struct {
	pool    *pgxpool.Pool
	max     int           // most statements in one batch
	par     int           // batches in flight at once
	timeout time.Duration // bounds one batch: writeTimeout

	mu      sync.Mutex
	queue   []*groupWrite
	running int
}

// groupWrite is one write: queue adds its statement to a batch, with the
// callback that reads its result. queue may run more than once (a failed
// batch is retried write by write): its callback assigns, never
// accumulates.
type groupWrite struct {
	key   string // the row it locks first: batches run in key order
	queue func(*pgx.Batch)
	done  chan error
	err   error // ErrNoRows from its callback in the last run
}

func newGroup(pool *pgxpool.Pool, par int) *group {
	return &group{pool: pool, max: 256, par: par, timeout: writeTimeout}
}

// write runs queue's statement durably, alone or in a batch.
func (g *group) write(ctx context.Context, key string, queue func(*pgx.Batch)) error {
	w := &groupWrite{key: key, queue: queue, done: make(chan error, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, w)
	start := g.running < g.par
	if start {
		g.running++
	}
	g.mu.Unlock()
	if start {
		go g.commit()
	}
	select {
	case err := <-w.done:
		return err
	case <-ctx.Done():
		// The statement may still commit: the caller learns it did not
		// wait, as with any cancelled database call.
		return ctx.Err()
	}
}

// commit sends batches while writes are queued, then ends.
func (g *group) commit() {
	for {
		g.mu.Lock()
		if len(g.queue) == 0 {
			g.running--
			g.mu.Unlock()
			return
		}
		n := min(len(g.queue), g.max)
		batch := slices.Clone(g.queue[:n])
		g.queue = g.queue[n:]
		g.mu.Unlock()
		slices.SortStableFunc(batch, func(a, b *groupWrite) int { return strings.Compare(a.key, b.key) })
		g.send(batch)
	}
}

// writeTimeout bounds one batch of writes. The writers wait on their own
// contexts, but a batch serves several of them, so none of theirs bounds
// it: a database that stops answering fails the batch after writeTimeout
// instead of holding the committing goroutine forever.
const writeTimeout = 30 * time.Second

// send runs writes in one batch; if it fails, each write again alone.
func (g *group) send(writes []*groupWrite) {
	err := g.runTimed(writes)
	if err == nil || len(writes) == 1 {
		for _, w := range writes {
			w.done <- cmp.Or(err, w.err)
		}
		return
	}
	for _, w := range writes {
		w.done <- cmp.Or(g.runTimed([]*groupWrite{w}), w.err)
	}
}

// runTimed is run under g.timeout.
func (g *group) runTimed(writes []*groupWrite) error {
	ctx, cancel := context.WithTimeout(context.Background(), g.timeout)
	defer cancel()
	return g.run(ctx, writes)
}

func (g *group) run(ctx context.Context, writes []*groupWrite) error {
	// pgx sends a batch's statements in one implicit transaction: they
	// commit together, or, when one fails, none does. Two batches (from
	// two instances, or two committers here) take row locks in their own
	// orders and may deadlock; the server aborts one, which runs again.
	return retried(func() error {
		var b pgx.Batch
		for _, w := range writes {
			w.err = nil
			n := len(b.QueuedQueries)
			w.queue(&b)
			for _, qq := range b.QueuedQueries[n:] {
				if fn := qq.Fn; fn != nil {
					qq.Fn = func(br pgx.BatchResults) error {
						err := fn(br)
						if errors.Is(err, pgx.ErrNoRows) {
							w.err = err
							return nil
						}
						return err
					}
				}
			}
		}
		return g.pool.SendBatch(ctx, &b).Close()
	})
}
