package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/store"
)

// PlanSpends stores the intent's planned calls unless it has some, and
// returns the intent's calls as stored, in order. Two instances planning
// the same intent take turns, and the second gets the first's plan.
func (db *DB) PlanSpends(ctx context.Context, intentID string, calls []core.Spend) ([]core.Spend, error) {
	if len(calls) == 0 { // a look-up: no lock, no transaction
		out, err := querySpends(ctx, db.pool, `SELECT body, chain_seq, chain_hash FROM neo_spends WHERE intent_id = $1 ORDER BY seq`, intentID)
		if err != nil {
			return nil, fmt.Errorf("postgres: spends of %s: %w", intentID, err)
		}
		return out, nil
	}
	var out []core.Spend
	err := db.tx(ctx, func(tx pgx.Tx) error {
		out = nil
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockKey("intent\x00"+intentID)); err != nil {
			return err
		}
		existing, err := querySpends(ctx, tx, `SELECT body, chain_seq, chain_hash FROM neo_spends WHERE intent_id = $1 ORDER BY seq`, intentID)
		if err != nil || len(existing) > 0 {
			out = existing
			return err
		}
		if err := core.CheckPlan(intentID, calls); err != nil {
			return err
		}
		out = make([]core.Spend, len(calls))
		for i, s := range calls {
			if out[i], err = appendSpend(ctx, tx, s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: plan spends of %s: %w", intentID, err)
	}
	return out, nil
}

// UpdateSpend applies fn to the call with id, with the other calls of its
// workspace and day, and stores the result, in one transaction holding
// the workspace-day's advisory lock.
func (db *DB) UpdateSpend(ctx context.Context, id string, fn func(s *core.Spend, sameDay []core.Spend) error) (core.Spend, error) {
	var (
		out   core.Spend
		fnErr error
	)
	err := db.tx(ctx, func(tx pgx.Tx) error {
		fnErr = nil
		var wsDay string
		if err := tx.QueryRow(ctx, `SELECT ws_day FROM neo_spends WHERE id = $1`, id).Scan(&wsDay); err != nil {
			return errNoRows(err, core.ErrNotFound)
		}
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockKey("day\x00"+wsDay)); err != nil {
			return err
		}
		day, err := querySpends(ctx, tx, `SELECT body, chain_seq, chain_hash FROM neo_spends WHERE ws_day = $1 ORDER BY created_ns, id`, wsDay)
		if err != nil {
			return err
		}
		var s core.Spend
		found := false
		others := day[:0:0]
		for _, d := range day {
			if d.ID == id {
				s, found = d, true
				continue
			}
			others = append(others, d)
		}
		if !found {
			return core.ErrNotFound
		}
		if out, fnErr = s.Edit(others, fn); fnErr != nil {
			return nil
		}
		if same, err := sameRecord(s, out); err != nil || same {
			out = s // unchanged: nothing to record
			return err
		}
		out, err = appendSpend(ctx, tx, out)
		return err
	})
	switch {
	case err != nil:
		return core.Spend{}, fmt.Errorf("postgres: update spend %s: %w", id, err)
	case fnErr != nil:
		return out, fnErr
	}
	return out, nil
}

// SpendsSince returns the calls created at or after since, oldest first.
func (db *DB) SpendsSince(ctx context.Context, since time.Time) ([]core.Spend, error) {
	out, err := querySpends(ctx, db.pool, `SELECT body, chain_seq, chain_hash FROM neo_spends WHERE created_ns >= $1`, ns(since))
	if err != nil {
		return nil, fmt.Errorf("postgres: spends: %w", err)
	}
	store.SortSpends(out)
	return out, nil
}

// BeginCall records key as calling, begun by run; when key was begun
// before, it returns the entry as found.
func (db *DB) BeginCall(ctx context.Context, key, run string) (core.Begun, error) {
	// A concurrent DropCall can remove the entry between the insert and
	// the look-up: then the insert is tried again.
	for range 3 {
		tag, err := db.pool.Exec(ctx, `INSERT INTO neo_calls (key, begun_ns, run) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING`, key, ns(db.now()), run)
		if err != nil {
			return core.Begun{}, fmt.Errorf("postgres: begin call %s: %w", key, err)
		}
		if tag.RowsAffected() == 1 {
			return core.Begun{Fresh: true, Run: run}, nil
		}
		var found string
		err = db.pool.QueryRow(ctx, `SELECT run FROM neo_calls WHERE key = $1`, key).Scan(&found)
		if err == nil {
			return core.Begun{Run: found}, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return core.Begun{}, fmt.Errorf("postgres: begin call %s: %w", key, err)
		}
	}
	return core.Begun{}, fmt.Errorf("postgres: begin call %s: its entry kept changing", key)
}

// SetCallTask records that the call with key became task, beginning its
// entry by run when it had none.
func (db *DB) SetCallTask(ctx context.Context, key, run, task string) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO neo_calls (key, begun_ns, run, task) VALUES ($1, $2, $3, $4)
		ON CONFLICT (key) DO UPDATE SET task = EXCLUDED.task`, key, ns(db.now()), run, task)
	if err != nil {
		return fmt.Errorf("postgres: record the task of call %s: %w", key, err)
	}
	return nil
}

// CallTask returns the task recorded for the call with key, "" when none.
func (db *DB) CallTask(ctx context.Context, key string) (string, error) {
	var task string
	err := db.pool.QueryRow(ctx, `SELECT task FROM neo_calls WHERE key = $1`, key).Scan(&task)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("postgres: the task of call %s: %w", key, err)
	}
	return task, nil
}

// DropCall removes key's entry: the call never reached its tool.
func (db *DB) DropCall(ctx context.Context, key string) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM neo_calls WHERE key = $1`, key); err != nil {
		return fmt.Errorf("postgres: drop call %s: %w", key, err)
	}
	return nil
}

// EndCall records that the call with key returned; an unknown key is
// core.ErrNotFound.
func (db *DB) EndCall(ctx context.Context, key string) error {
	tag, err := db.pool.Exec(ctx, `UPDATE neo_calls SET ended_ns = coalesce(ended_ns, $2) WHERE key = $1`, key, ns(db.now()))
	if err == nil && tag.RowsAffected() == 0 {
		err = core.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("postgres: end call %s: %w", key, err)
	}
	return nil
}

// querier is what both a pool and a transaction can do.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// querySpends reads calls: each row's body, chain_seq and chain_hash.
func querySpends(ctx context.Context, q querier, sql string, args ...any) ([]core.Spend, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	var (
		out  []core.Spend
		raw  []byte
		seq  *int64
		hash *string
	)
	_, err = pgx.ForEachRow(rows, []any{&raw, &seq, &hash}, func() error {
		var s core.Spend
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("decode spend: %w", err)
		}
		if seq != nil && hash != nil {
			s.Seq, s.Hash = uint64(*seq), *hash
		}
		out = append(out, s)
		return nil
	})
	return out, err
}

// sameRecord reports whether a and b record the same content.
func sameRecord(a, b core.Spend) (bool, error) {
	ra, err := a.Record()
	if err != nil {
		return false, err
	}
	rb, err := b.Record()
	return bytes.Equal(ra, rb), err
}

// chainLock is the advisory lock an append to the spend chain holds until
// its transaction ends: appends take turns, so each reads the last
// entry its predecessor committed, and the chain has one order. It is
// always the last lock a transaction takes (after an intent's or a
// workspace-day's), so it closes no cycle.
var chainLock = lockKey("spend chain")

// appendSpend records s in tx: a chain entry after the chain's last, and
// s as its call's current record, with the entry's seq and hash. It
// returns s with them.
func appendSpend(ctx context.Context, tx pgx.Tx, s core.Spend) (core.Spend, error) {
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", chainLock); err != nil {
		return s, err
	}
	var (
		lastSeq  int64
		lastHash string
	)
	err := tx.QueryRow(ctx, `SELECT seq, hash FROM neo_spend_chain ORDER BY seq DESC LIMIT 1`).Scan(&lastSeq, &lastHash)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return s, err
	}
	e, s, err := core.NextEntry(uint64(lastSeq), lastHash, s)
	if err != nil {
		return s, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO neo_spend_chain (seq, prev, hash, spend_id, state, record) VALUES ($1, $2, $3, $4, $5, $6)`,
		int64(e.Seq), e.Prev, e.Hash, e.Spend, string(e.State), []byte(e.Record)); err != nil {
		return s, err
	}
	_, n, _ := strings.Cut(s.ID, "/")
	seq, _ := strconv.Atoi(n)
	_, err = tx.Exec(ctx, `
		INSERT INTO neo_spends (id, intent_id, seq, ws_day, created_ns, body, chain_seq, chain_hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (id) DO UPDATE SET body = EXCLUDED.body, chain_seq = EXCLUDED.chain_seq, chain_hash = EXCLUDED.chain_hash`,
		s.ID, s.IntentID, seq, s.Thread.Platform+"/"+s.Thread.Workspace+" "+s.Day, ns(s.Created), []byte(e.Record), int64(e.Seq), e.Hash)
	return s, err
}

// SpendEntries calls fn with every entry of the spend chain, in order, as
// stored. It reads in one snapshot (a repeatable-read transaction), so
// appends made meanwhile by any instance are not half seen.
func (db *DB) SpendEntries(ctx context.Context, fn func(core.LedgerEntry) error) error {
	err := pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT seq, prev, hash, spend_id, state, record FROM neo_spend_chain ORDER BY seq`)
		if err != nil {
			return err
		}
		var (
			e      core.LedgerEntry
			seq    int64
			state  string
			record []byte
		)
		_, err = pgx.ForEachRow(rows, []any{&seq, &e.Prev, &e.Hash, &e.Spend, &state, &record}, func() error {
			e.Seq, e.State, e.Record = uint64(seq), core.SpendState(state), string(record)
			return fn(e)
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: spend chain: %w", err)
	}
	return nil
}

// SpendRecords calls fn with every call's current record as stored.
func (db *DB) SpendRecords(ctx context.Context, fn func(id string, record []byte) error) error {
	rows, err := db.pool.Query(ctx, `SELECT id, body FROM neo_spends`)
	if err == nil {
		var (
			id   string
			body []byte
		)
		_, err = pgx.ForEachRow(rows, []any{&id, &body}, func() error { return fn(id, body) })
	}
	if err != nil {
		return fmt.Errorf("postgres: spend records: %w", err)
	}
	return nil
}

// chainUpgrade chains, once, the calls recorded before the chain existed
// (migration 0007 leaves a marker for it): oldest first
// (store.SortSpends), one entry each holding the call as it is now. It
// runs in one transaction that removes the marker, so of several
// instances starting together one does it.
func (db *DB) chainUpgrade(ctx context.Context) error {
	n := 0
	err := db.tx(ctx, func(tx pgx.Tx) error {
		n = 0
		var v string
		err := tx.QueryRow(ctx, `SELECT value FROM neo_meta WHERE key = 'spend_chain_upgrade' FOR UPDATE`).Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // done before
		}
		if err != nil {
			return err
		}
		all, err := querySpends(ctx, tx, `SELECT body, chain_seq, chain_hash FROM neo_spends WHERE chain_seq IS NULL`)
		if err != nil {
			return err
		}
		store.SortSpends(all)
		for _, s := range all {
			if _, err := appendSpend(ctx, tx, s); err != nil {
				return err
			}
		}
		n = len(all)
		_, err = tx.Exec(ctx, `DELETE FROM neo_meta WHERE key = 'spend_chain_upgrade'`)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: chain the spend ledger's earlier calls in %s: %w", db.name, err)
	}
	if n > 0 {
		db.log.Info().Int("spends", n).Str("database", db.name).Msg("postgres: the spend ledger's earlier calls chained")
	}
	return nil
}

// lockKey maps a name to an advisory lock key.
func lockKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return int64(h.Sum64())
}
