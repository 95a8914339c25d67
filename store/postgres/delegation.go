package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/neobot/neobot/core"
)

// SaveDelegation records a delegation in flight, keyed by its thread and
// call ID. Saving the same key again overwrites it and clears any finish.
func (db *DB) SaveDelegation(ctx context.Context, d core.Delegation) error {
	if err := d.Thread.Validate(); err != nil {
		return fmt.Errorf("postgres: save delegation: %w", err)
	}
	if d.CallID == "" {
		return fmt.Errorf("postgres: save delegation in %s: empty call ID", d.Thread.Key())
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("postgres: save delegation: %w", err)
	}
	err = db.batched(ctx, d.Thread.Key(), func(b *pgx.Batch) {
		b.Queue(`
			INSERT INTO neo_delegations (thread, call_id, body, started_ns) VALUES ($1, $2, $3, $4)
			ON CONFLICT (thread, call_id) DO UPDATE SET body = EXCLUDED.body, started_ns = EXCLUDED.started_ns, finished_ns = NULL`,
			d.Thread.Key(), d.CallID, raw, ns(d.Started))
	})
	if err != nil {
		return fmt.Errorf("postgres: save delegation %s in %s: %w", d.CallID, d.Thread.Key(), err)
	}
	return nil
}

// DelegationFor returns the delegation recorded for (t, callID), finished
// or not, or core.ErrNotFound.
func (db *DB) DelegationFor(ctx context.Context, t core.Thread, callID string) (core.Delegation, error) {
	var raw []byte
	err := db.pool.QueryRow(ctx, `SELECT body FROM neo_delegations WHERE thread = $1 AND call_id = $2`, t.Key(), callID).Scan(&raw)
	var d core.Delegation
	if err == nil {
		err = json.Unmarshal(raw, &d)
	}
	if err != nil {
		return core.Delegation{}, fmt.Errorf("postgres: delegation %s in %s: %w", callID, t.Key(), errNoRows(err, core.ErrNotFound))
	}
	return d, nil
}

// FinishDelegation marks the delegation for (t, callID) finished.
// Finishing twice is fine; an unknown key is core.ErrNotFound.
func (db *DB) FinishDelegation(ctx context.Context, t core.Thread, callID string) error {
	now := db.now().UnixNano()
	var one int
	err := db.batched(ctx, t.Key(), func(b *pgx.Batch) {
		b.Queue(`
			UPDATE neo_delegations SET finished_ns = coalesce(finished_ns, $3)
			WHERE thread = $1 AND call_id = $2 RETURNING 1`, t.Key(), callID, now).QueryRow(func(row pgx.Row) error { return row.Scan(&one) })
	})
	if err != nil {
		return fmt.Errorf("postgres: finish delegation %s in %s: %w", callID, t.Key(), errNoRows(err, core.ErrNotFound))
	}
	return nil
}

// Delegations returns every delegation in flight (not finished), oldest
// first.
func (db *DB) Delegations(ctx context.Context) ([]core.Delegation, error) {
	rows, err := db.pool.Query(ctx, `SELECT body FROM neo_delegations WHERE finished_ns IS NULL ORDER BY started_ns, thread, call_id`)
	if err != nil {
		return nil, fmt.Errorf("postgres: delegations: %w", err)
	}
	defer rows.Close()
	var out []core.Delegation
	for rows.Next() {
		var (
			raw []byte
			d   core.Delegation
		)
		if err := rows.Scan(&raw); err != nil {
			return nil, fmt.Errorf("postgres: delegations: %w", err)
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("postgres: delegations: decode: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: delegations: %w", err)
	}
	return out, nil
}
