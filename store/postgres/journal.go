package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/neobot/neobot/core"
)

// JournalInbound records in before its turn runs. fresh is false, and
// nothing is written, when the same platform event was journaled within
// the dedupe TTL or is still pending. The event's primary key decides, in
// one statement, so an event delivered to two instances at once is
// journaled by exactly one of them.
func (db *DB) JournalInbound(ctx context.Context, in core.Inbound) (fresh bool, err error) {
	fresh, _, err = db.journal(ctx, in, false)
	return fresh, err
}

// JournalInboundAhead is JournalInbound that also returns, for a fresh
// message, the event IDs of its thread's messages pending when it was
// journaled (those whose marks are queued here left out), read in the
// same statement: the hub that holds the thread and knows them all needs
// no read of the thread's journal before the turn.
func (db *DB) JournalInboundAhead(ctx context.Context, in core.Inbound) (fresh bool, ahead []string, err error) {
	fresh, ahead, err = db.journal(ctx, in, true)
	if !fresh || err != nil {
		return fresh, nil, err
	}
	if done := db.completing(in.Thread.Key()); done != nil {
		ahead = slices.DeleteFunc(ahead, func(id string) bool { return done[[2]string{in.Thread.Platform, id}] })
	}
	return true, ahead, nil
}

// journalInsert journals a message (JournalInbound) and returns whether
// it was fresh; its last column is added by the caller.
const journalInsert = `
	WITH i AS (
		INSERT INTO neo_inbound AS i (platform, event_id, thread, body, journaled_ns, pending)
		VALUES ($1, $2, $3, $4, $5, nextval('neo_inbound_seq'))
		ON CONFLICT (platform, event_id) DO UPDATE
			SET thread = EXCLUDED.thread, body = EXCLUDED.body, journaled_ns = EXCLUDED.journaled_ns,
				pending = EXCLUDED.pending, completed_ns = NULL
			WHERE i.completed_ns IS NOT NULL AND $5 - i.journaled_ns >= $6
		RETURNING 1
	), t AS (
		INSERT INTO neo_threads (key, active_ns) SELECT $3, $5 FROM i
		ON CONFLICT (key) DO UPDATE SET active_ns = EXCLUDED.active_ns
	)
	SELECT (SELECT count(*) FROM i)`

// journal journals in; with ahead, the same statement reads the event
// IDs of the thread's other pending messages (its snapshot is taken
// before its insert, so in is not among them).
func (db *DB) journal(ctx context.Context, in core.Inbound, ahead bool) (fresh bool, ids []string, err error) {
	if err := in.Thread.Validate(); err != nil {
		return false, nil, fmt.Errorf("postgres: journal: %w", err)
	}
	if in.EventID == "" {
		return false, nil, fmt.Errorf("postgres: journal message in %s: empty event ID", in.Thread.Key())
	}
	body, err := json.Marshal(in)
	if err != nil {
		return false, nil, fmt.Errorf("postgres: journal %s: %w", in.EventID, err)
	}
	now := db.now().UnixNano()
	var n int
	err = db.batched(ctx, in.Thread.Key(), func(b *pgx.Batch) {
		args := []any{in.Thread.Platform, in.EventID, in.Thread.Key(), body, now, int64(db.ret.Dedupe)}
		if !ahead {
			b.Queue(journalInsert, args...).QueryRow(func(row pgx.Row) error { return row.Scan(&n) })
			return
		}
		b.Queue(journalInsert+`,
			ARRAY(SELECT event_id FROM neo_inbound WHERE thread = $3 AND pending IS NOT NULL)`, args...).QueryRow(func(row pgx.Row) error { return row.Scan(&n, &ids) })
	})
	if err != nil {
		return false, nil, fmt.Errorf("postgres: journal %s in %s: %w", in.EventID, in.Thread.Key(), err)
	}
	return n == 1, ids, nil
}

// CompleteInbound marks the journaled message eventID of thread t done.
// Completing twice is fine; an event never journaled is core.ErrNotFound.
func (db *DB) CompleteInbound(ctx context.Context, t core.Thread, eventID string) error {
	now := db.now().UnixNano()
	var one int
	err := db.batched(ctx, t.Key(), func(b *pgx.Batch) {
		b.Queue(`
			UPDATE neo_inbound SET completed_ns = coalesce(completed_ns, $3), pending = NULL
			WHERE platform = $1 AND event_id = $2 RETURNING 1`, t.Platform, eventID, now).QueryRow(func(row pgx.Row) error { return row.Scan(&one) })
	})
	if err = errNoRows(err, core.ErrNotFound); errors.Is(err, core.ErrNotFound) {
		return err
	}
	if err != nil {
		return fmt.Errorf("postgres: complete %s in %s: %w", eventID, t.Key(), err)
	}
	return nil
}

// CompleteInboundLater is CompleteInbound without waiting: the hub calls
// it once the turn's answer is stored. The marks queued while one commits
// go together, one statement in a batch of other writes, so an answered
// message costs neither a round trip nor a commit of its own. Until its
// mark commits, PendingIn here leaves the message out, and Claims.Release
// waits for the mark, so neither this instance nor the next one to claim
// the thread runs it again. A crash before the mark commits resumes the
// message after the restart (or in the instance that adopts the thread),
// and the turn finds itself answered and says nothing, as with the bbolt
// store's lazy mark.
func (db *DB) CompleteInboundLater(t core.Thread, eventID string) {
	c := completion{platform: t.Platform, eventID: eventID, thread: t.Key(), at: db.now().UnixNano()}
	db.completes.queue(func(into *[]completion) { *into = append(*into, c) })
}

// completion is an answered message to mark done.
type completion struct {
	platform, eventID, thread string
	at                        int64 // when it was answered (unix ns)
}

// completeAll marks cs done in one statement, as CompleteInbound marks
// one. (No check of the journal time against the mark's: instances'
// clocks differ, and a mark that never applied would resume the message
// again and again.)
func (db *DB) completeAll(ctx context.Context, cs *[]completion) error {
	var (
		platforms, events []string
		ats               []int64
	)
	for _, c := range *cs {
		platforms, events, ats = append(platforms, c.platform), append(events, c.eventID), append(ats, c.at)
	}
	return db.batched(ctx, "inbound", func(b *pgx.Batch) {
		b.Queue(`
			UPDATE neo_inbound i SET completed_ns = coalesce(i.completed_ns, c.at), pending = NULL
			FROM unnest($1::text[], $2::text[], $3::bigint[]) AS c(platform, event_id, at)
			WHERE i.platform = c.platform AND i.event_id = c.event_id`, platforms, events, ats)
	})
}

// completing returns the event keys (platform, event ID) of thread's
// messages whose marks are queued here and not yet committed.
func (db *DB) completing(thread string) map[[2]string]bool {
	var out map[[2]string]bool
	db.completes.each(func(cs *[]completion) {
		for _, c := range *cs {
			if c.thread != thread {
				continue
			}
			if out == nil {
				out = map[[2]string]bool{}
			}
			out[[2]string{c.platform, c.eventID}] = true
		}
	})
	return out
}

// PendingIn returns the messages of thread (its key) journaled and never
// completed, oldest first: what the instance that claims the thread runs.
func (db *DB) PendingIn(ctx context.Context, thread string) ([]core.Inbound, error) {
	pending, err := db.journals.read(ctx, thread)
	if done := db.completing(thread); done != nil {
		pending = slices.DeleteFunc(pending, func(in core.Inbound) bool { return done[[2]string{in.Thread.Platform, in.EventID}] })
	}
	return pending, err
}

// PendingInbound returns the messages journaled and never completed,
// oldest first: the turns to resume. The marks queued here commit first.
func (db *DB) PendingInbound(ctx context.Context) ([]core.Inbound, error) {
	if err := db.completes.flush(ctx); err != nil {
		return nil, fmt.Errorf("postgres: pending inbound: %w", err)
	}
	rows, err := db.pool.Query(ctx, `SELECT body FROM neo_inbound WHERE pending IS NOT NULL ORDER BY pending`)
	if err != nil {
		return nil, fmt.Errorf("postgres: pending inbound: %w", err)
	}
	return collectInbound(rows)
}

// collectInbound decodes rows of journaled message bodies.
func collectInbound(rows pgx.Rows) ([]core.Inbound, error) {
	defer rows.Close()
	var out []core.Inbound
	for rows.Next() {
		var (
			raw []byte
			in  core.Inbound
		)
		if err := rows.Scan(&raw); err != nil {
			return nil, fmt.Errorf("postgres: pending inbound: %w", err)
		}
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, fmt.Errorf("postgres: pending inbound: decode: %w", err)
		}
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: pending inbound: %w", err)
	}
	return out, nil
}
