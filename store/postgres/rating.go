package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/feedback"
)

var _ feedback.Store = (*DB)(nil)

// SaveRating stores r, replacing the user's earlier rating of the turn.
func (db *DB) SaveRating(ctx context.Context, r core.Rating) error {
	body, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("postgres: encode a rating: %w", err)
	}
	_, err = db.pool.Exec(ctx, `
		INSERT INTO neo_ratings (thread, turn, user_id, at_ns, body) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (thread, turn, user_id) DO UPDATE SET at_ns = EXCLUDED.at_ns, body = EXCLUDED.body`,
		r.Thread.Key(), r.Turn, r.User, ns(r.At), body)
	if err != nil {
		return fmt.Errorf("postgres: save the rating of turn %s: %w", r.Turn, db.diskFull(err))
	}
	return nil
}

// Ratings returns the ratings made at or after since, oldest first.
func (db *DB) Ratings(ctx context.Context, since time.Time) ([]core.Rating, error) {
	rows, err := db.pool.Query(ctx, `SELECT body FROM neo_ratings WHERE at_ns >= $1 ORDER BY at_ns, thread, turn, user_id`, ns(since))
	if err != nil {
		return nil, fmt.Errorf("postgres: read ratings: %w", err)
	}
	defer rows.Close()
	var out []core.Rating
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			return nil, fmt.Errorf("postgres: read ratings: %w", err)
		}
		var r core.Rating
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, fmt.Errorf("postgres: decode a rating: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: read ratings: %w", err)
	}
	return out, nil
}
