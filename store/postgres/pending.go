package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/neobot/neobot/core"
)

// pendingReads reads threads' pending messages (PendingIn) for several
// callers at once: reads asked for while one runs wait and go together
// in the next, one statement for however many threads. An instance
// reads a thread's journal when it claims the thread and again when it
// lets it go, so a burst of fresh threads (a channel's new mentions)
// would otherwise cost two statements a thread. Each read begins after
// every call it serves was made, so it sees what a read of the caller's
// own would.
type pendingReads struct {
	pool    *pgxpool.Pool
	batches coalesced[*pendingRead]
}

// pendingRead is one caller's read waiting for its batch.
type pendingRead struct {
	thread string
	out    []core.Inbound
	err    error
	done   chan struct{}
}

// read returns thread's pending messages, oldest first.
func (r *pendingReads) read(ctx context.Context, thread string) ([]core.Inbound, error) {
	q := &pendingRead{thread: thread, done: make(chan struct{})}
	r.batches.add(q)
	select {
	case <-q.done:
		return q.out, q.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// readBatch reads the pending messages of batch's threads in one
// statement; a caller waiting for the same thread as another gets a copy
// of its own.
func (r *pendingReads) readBatch(batch []*pendingRead) {
	threads := make([]string, 0, len(batch))
	seen := make(map[string]bool, len(batch))
	for _, q := range batch {
		if !seen[q.thread] {
			seen[q.thread] = true
			threads = append(threads, q.thread)
		}
	}
	// Bounded as a batch of writes is: no caller's context bounds a read
	// that serves several.
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	byThread, err := r.query(ctx, threads)
	for _, q := range batch {
		if err != nil {
			q.err = fmt.Errorf("postgres: pending inbound of %s: %w", q.thread, err)
			continue
		}
		q.out = slices.Clone(byThread[q.thread])
	}
	for _, q := range batch {
		close(q.done)
	}
}

func (r *pendingReads) query(ctx context.Context, threads []string) (map[string][]core.Inbound, error) {
	// One lookup of each thread in the index of pending messages, as the
	// read of one thread makes: OFFSET 0 keeps the planner from joining
	// the threads with every pending message of every thread instead.
	rows, err := r.pool.Query(ctx, `
		SELECT i.thread, i.body FROM unnest($1::text[]) AS t(key)
		CROSS JOIN LATERAL (
			SELECT thread, body, pending FROM neo_inbound
			WHERE thread = t.key AND pending IS NOT NULL
			OFFSET 0
		) i
		ORDER BY i.pending`, threads)
	if err != nil {
		return nil, err
	}
	byThread := make(map[string][]core.Inbound, len(threads))
	var (
		thread string
		raw    []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&thread, &raw}, func() error {
		var in core.Inbound
		if err := json.Unmarshal(raw, &in); err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		byThread[thread] = append(byThread[thread], in)
		return nil
	})
	return byThread, err
}
