package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/store"
)

// GatesSince returns the stored gates created at or after since, oldest
// first: the approvals an audit export lists.
func (db *DB) GatesSince(ctx context.Context, since time.Time) ([]core.Gate, error) {
	rows, err := db.pool.Query(ctx, `SELECT body FROM neo_gates`)
	if err != nil {
		return nil, fmt.Errorf("postgres: gates: %w", err)
	}
	var (
		out []core.Gate
		raw []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&raw}, func() error {
		g, err := decodeGate(raw)
		if err != nil {
			return err
		}
		if !g.Created.Before(since) {
			out = append(out, g)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: gates: %w", err)
	}
	store.SortGates(out)
	return out, nil
}
