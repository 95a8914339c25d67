package postgres

import (
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
		out, err := querySpends(ctx, db.pool, `SELECT body FROM neo_spends WHERE intent_id = $1 ORDER BY seq`, intentID)
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
		existing, err := querySpends(ctx, tx, `SELECT body FROM neo_spends WHERE intent_id = $1 ORDER BY seq`, intentID)
		if err != nil || len(existing) > 0 {
			out = existing
			return err
		}
		if err := core.CheckPlan(intentID, calls); err != nil {
			return err
		}
		for _, s := range calls {
			if err := putSpend(ctx, tx, s); err != nil {
				return err
			}
		}
		out = calls
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
		day, err := querySpends(ctx, tx, `SELECT body FROM neo_spends WHERE ws_day = $1 ORDER BY created_ns, id`, wsDay)
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
		return putSpend(ctx, tx, out)
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
	out, err := querySpends(ctx, db.pool, `SELECT body FROM neo_spends WHERE created_ns >= $1`, ns(since))
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

func querySpends(ctx context.Context, q querier, sql string, args ...any) ([]core.Spend, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	raws, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, err
	}
	out := make([]core.Spend, 0, len(raws))
	for _, raw := range raws {
		var s core.Spend
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("decode spend: %w", err)
		}
		out = append(out, s)
	}
	return out, nil
}

func putSpend(ctx context.Context, tx pgx.Tx, s core.Spend) error {
	raw, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode spend %s: %w", s.ID, err)
	}
	_, n, _ := strings.Cut(s.ID, "/")
	seq, _ := strconv.Atoi(n)
	_, err = tx.Exec(ctx, `
		INSERT INTO neo_spends (id, intent_id, seq, ws_day, created_ns, body) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (id) DO UPDATE SET body = EXCLUDED.body`,
		s.ID, s.IntentID, seq, s.Thread.Platform+"/"+s.Thread.Workspace+" "+s.Day, ns(s.Created), raw)
	return err
}

// lockKey maps a name to an advisory lock key.
func lockKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return int64(h.Sum64())
}
