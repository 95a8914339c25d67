package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/store"
)

// AppendEntries appends data as new entries of thread t, numbered after
// the last one, and returns the last number assigned. It is one statement:
// the thread's row hands out the numbers under its row lock, so appends to
// one thread from several instances never collide. Entries appended to t
// with AppendEntriesLater and not committed yet go first, in the same
// statement.
func (db *DB) AppendEntries(ctx context.Context, t core.Thread, data ...[]byte) (uint64, error) {
	if err := checkAppend(t, data); err != nil {
		return 0, err
	}
	key, at := t.Key(), db.now().UnixNano()
	le := db.takeLazy(key)
	if le == nil {
		last, err := db.appendKey(ctx, key, at, data)
		return uint64(last), err
	}
	defer db.doneLazy(key, le)
	last, err := db.appendKey(ctx, key, at, append(le.data, data...))
	if err != nil {
		return 0, err
	}
	db.checkNumbers(key, le, last-int64(len(data)), len(le.data))
	return uint64(last), nil
}

// appendKey appends data to the thread of key in one statement, and
// returns the last number assigned.
func (db *DB) appendKey(ctx context.Context, key string, at int64, data [][]byte) (int64, error) {
	var last int64
	err := db.batched(ctx, key, func(b *pgx.Batch) {
		b.Queue(`
			WITH t AS (
				INSERT INTO neo_threads (key, active_ns, last_seq) VALUES ($1, $2, $3)
				ON CONFLICT (key) DO UPDATE SET last_seq = neo_threads.last_seq + $3, active_ns = $2
				RETURNING last_seq
			), e AS (
				INSERT INTO neo_entries (thread, seq, at_ns, data)
				SELECT $1, t.last_seq - $3 + u.n, $2, u.d FROM t, unnest($4::bytea[]) WITH ORDINALITY AS u(d, n)
			)
			SELECT last_seq FROM t`, key, at, int64(len(data)), data).QueryRow(func(row pgx.Row) error { return row.Scan(&last) })
	})
	if err != nil {
		return 0, fmt.Errorf("postgres: append to %s: %w", key, err)
	}
	return last, nil
}

// LoadTranscript returns thread t's summary and its live entries in order,
// read in one statement (one snapshot) sent with the writes batched
// meanwhile, after the entries appended here lazily have committed. It remembers the thread's last entry number, for
// AppendEntriesLater.
func (db *DB) LoadTranscript(ctx context.Context, t core.Thread) (core.Summary, []core.Entry, error) {
	key := t.Key()
	db.settleLazy(ctx, key)
	// The read rides in the group's next batch of writes: one round trip
	// and one transaction for several statements instead of one of its
	// own, about a fifth of the database's CPU a turn (docs/scaling.md).
	// Its snapshot is its statement's, as alone.
	var tr transcriptRead
	err := db.group.write(ctx, key, tr.queue(key))
	if err == nil {
		err = tr.err
	}
	if err != nil {
		return core.Summary{}, nil, fmt.Errorf("postgres: load %s: %w", key, err)
	}
	if !slices.IsSortedFunc(tr.entries, byEntrySeq) {
		slices.SortFunc(tr.entries, byEntrySeq)
	}
	db.numbered(key, tr.last)
	return tr.sum, tr.entries, nil
}

// transcriptRead is what LoadTranscript's statement read: the thread's
// summary, last entry number and live entries, or why they could not be
// decoded.
type transcriptRead struct {
	sum     core.Summary
	entries []core.Entry
	last    int64
	err     error
}

// queue returns the group write that reads the transcript of the
// thread of key into r. A decoding error fails this read only, in r.err:
// returned from the batch's callback it would fail the whole batch after
// the server committed its writes, and they would run again.
func (r *transcriptRead) queue(key string) func(*pgx.Batch) {
	return func(b *pgx.Batch) {
		// The entries come in the primary key's order, after the
		// thread's row: no sort. Should a plan ever give them otherwise,
		// LoadTranscript sorts them.
		b.Queue(`
			SELECT NULL::bigint, last_seq, summary FROM neo_threads WHERE key = $1
			UNION ALL
			(SELECT seq, at_ns, data FROM neo_entries WHERE thread = $1 AND NOT archived ORDER BY seq)`, key).Query(func(rows pgx.Rows) error {
			*r = transcriptRead{}
			r.err = scanEntries(rows, func(lastSeq int64, raw []byte) error {
				r.last = lastSeq
				if raw == nil {
					return nil
				}
				if err := json.Unmarshal(raw, &r.sum); err != nil {
					return fmt.Errorf("decode summary: %w", err)
				}
				return nil
			}, &r.entries)
			return nil
		})
	}
}

// byEntrySeq orders entries by number.
func byEntrySeq(a, b core.Entry) int { return cmp.Compare(a.Seq, b.Seq) }

// Archived returns the entries of thread t that compaction moved out of
// the live transcript, in order.
func (db *DB) Archived(ctx context.Context, t core.Thread) ([]core.Entry, error) {
	var entries []core.Entry
	db.settleLazy(ctx, t.Key())
	rows, err := db.pool.Query(ctx, `SELECT seq, at_ns, data FROM neo_entries WHERE thread = $1 AND archived ORDER BY seq`, t.Key())
	if err == nil {
		err = scanEntries(rows, nil, &entries)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: archive of %s: %w", t.Key(), err)
	}
	return entries, nil
}

// scanEntries reads rows of (seq, at_ns, data); a row with a NULL seq is
// the thread's (last_seq, summary), handed to summary.
func scanEntries(rows pgx.Rows, summary func(lastSeq int64, raw []byte) error, out *[]core.Entry) error {
	defer rows.Close()
	for rows.Next() {
		var (
			seq, at *int64
			data    []byte
		)
		if err := rows.Scan(&seq, &at, &data); err != nil {
			return err
		}
		if seq == nil {
			var last int64
			if at != nil {
				last = *at
			}
			if err := summary(last, data); err != nil {
				return err
			}
			continue
		}
		*out = append(*out, core.Entry{Seq: uint64(*seq), At: fromNS(*at), Data: data})
	}
	return rows.Err()
}

// Compact stores s as thread t's summary and archives every live entry
// with Seq <= s.UpTo, in one transaction. A summary covering entries
// never appended, or older than the current one, fails with
// store.ErrCompactRange and changes nothing.
func (db *DB) Compact(ctx context.Context, t core.Thread, s core.Summary) error {
	if err := t.Validate(); err != nil {
		return fmt.Errorf("postgres: compact: %w", err)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("postgres: compact %s: %w", t.Key(), err)
	}
	now := db.now().UnixNano()
	db.settleLazy(ctx, t.Key())
	err = db.tx(ctx, func(tx pgx.Tx) error {
		var (
			last int64
			prev []byte
		)
		err := tx.QueryRow(ctx, `
			INSERT INTO neo_threads (key, active_ns) VALUES ($1, $2)
			ON CONFLICT (key) DO UPDATE SET active_ns = neo_threads.active_ns
			RETURNING last_seq, summary`, t.Key(), now).Scan(&last, &prev)
		if err != nil {
			return err
		}
		if s.UpTo > uint64(last) {
			return fmt.Errorf("%w: up to %d, last entry is %d", store.ErrCompactRange, s.UpTo, last)
		}
		if prev != nil {
			var p core.Summary
			if err := json.Unmarshal(prev, &p); err != nil {
				return fmt.Errorf("decode summary: %w", err)
			}
			if s.UpTo < p.UpTo {
				return fmt.Errorf("%w: up to %d, current summary covers up to %d", store.ErrCompactRange, s.UpTo, p.UpTo)
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE neo_entries SET archived = true WHERE thread = $1 AND seq <= $2 AND NOT archived`, t.Key(), int64(s.UpTo)); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE neo_threads SET summary = $2, active_ns = $3 WHERE key = $1`, t.Key(), raw, now)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: compact %s: %w", t.Key(), err)
	}
	return nil
}

// ThreadKnown reports whether thread t has any transcript entry or
// journaled inbound message.
func (db *DB) ThreadKnown(ctx context.Context, t core.Thread) (bool, error) {
	var known bool
	if err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM neo_threads WHERE key = $1)`, t.Key()).Scan(&known); err != nil {
		return false, fmt.Errorf("postgres: thread %s: %w", t.Key(), err)
	}
	return known, nil
}

// Threads lists every stored conversation, most recently active first.
func (db *DB) Threads(ctx context.Context) ([]store.ThreadInfo, error) {
	rows, err := db.pool.Query(ctx, `
		SELECT t.key, t.active_ns,
			count(e.seq) FILTER (WHERE NOT e.archived), count(e.seq) FILTER (WHERE e.archived), coalesce(t.title, '')
		FROM neo_threads t LEFT JOIN neo_entries e ON e.thread = t.key
		GROUP BY t.key, t.active_ns, t.title
		ORDER BY t.active_ns DESC`)
	if err != nil {
		return nil, fmt.Errorf("postgres: list threads: %w", err)
	}
	defer rows.Close()
	var out []store.ThreadInfo
	for rows.Next() {
		var (
			key             string
			active          int64
			live, archivedN int
			title           string
		)
		if err := rows.Scan(&key, &active, &live, &archivedN, &title); err != nil {
			return nil, fmt.Errorf("postgres: list threads: %w", err)
		}
		t, err := core.ParseThread(key)
		if err != nil {
			continue // not a conversation this version names
		}
		out = append(out, store.ThreadInfo{Thread: t, Active: fromNS(active), Entries: live, Archived: archivedN, Title: title})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: list threads: %w", err)
	}
	return out, nil
}

// errNoRows maps pgx's no-rows error to err.
func errNoRows(got, err error) error {
	if errors.Is(got, pgx.ErrNoRows) {
		return err
	}
	return got
}
