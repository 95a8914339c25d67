package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/neobot/neobot/core/usage"
)

// AddUsage adds each row's tokens to the stored row with its key, in one
// transaction.
func (db *DB) AddUsage(ctx context.Context, rows []usage.Row) error {
	if len(rows) == 0 {
		return nil
	}
	err := db.tx(ctx, func(tx pgx.Tx) error {
		var b pgx.Batch
		for _, r := range rows {
			k := r.Key
			b.Queue(`
				INSERT INTO neo_usage (day, platform, workspace, channel, user_id, thread, model, calls, prompt, completion)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
				ON CONFLICT (day, platform, workspace, channel, user_id, thread, model) DO UPDATE SET
					calls = neo_usage.calls + EXCLUDED.calls,
					prompt = neo_usage.prompt + EXCLUDED.prompt,
					completion = neo_usage.completion + EXCLUDED.completion`,
				k.Day, k.Platform, k.Workspace, k.Channel, k.User, k.Thread, k.Model, r.Calls, r.Prompt, r.Completion)
		}
		return tx.SendBatch(ctx, &b).Close()
	})
	if err != nil {
		return fmt.Errorf("postgres: add usage: %w", err)
	}
	return nil
}

// Usage returns the rows of day since (2006-01-02) and later, in key
// order.
func (db *DB) Usage(ctx context.Context, since string) ([]usage.Row, error) {
	rows, err := db.pool.Query(ctx, `
		SELECT day, platform, workspace, channel, user_id, thread, model, calls, prompt, completion
		FROM neo_usage WHERE day >= $1
		ORDER BY day, platform, workspace, channel, user_id, thread, model`, since)
	if err != nil {
		return nil, fmt.Errorf("postgres: read usage since %s: %w", since, err)
	}
	defer rows.Close()
	var out []usage.Row
	for rows.Next() {
		var r usage.Row
		k := &r.Key
		if err := rows.Scan(&k.Day, &k.Platform, &k.Workspace, &k.Channel, &k.User, &k.Thread, &k.Model, &r.Calls, &r.Prompt, &r.Completion); err != nil {
			return nil, fmt.Errorf("postgres: read usage since %s: %w", since, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: read usage since %s: %w", since, err)
	}
	return out, nil
}

// UsageIn returns the tokens used on day under a place: of platform, and
// of workspace and channel unless they are "" (the primary key's first
// columns serve it).
func (db *DB) UsageIn(ctx context.Context, day, platform, workspace, channel string) (int64, error) {
	var n int64
	err := db.pool.QueryRow(ctx, `
		SELECT COALESCE(SUM(prompt + completion), 0)::bigint FROM neo_usage
		WHERE day = $1 AND platform = $2 AND ($3 = '' OR workspace = $3) AND ($4 = '' OR channel = $4)`,
		day, platform, workspace, channel).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("postgres: read usage of %s/%s/%s on %s: %w", platform, workspace, channel, day, err)
	}
	return n, nil
}
