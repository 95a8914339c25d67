package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/neobot/neobot/core/llm"
)

var _ llm.Postures = (*DB)(nil)

// ModelPosture returns the posture saved for model at endpoint, or "".
func (db *DB) ModelPosture(ctx context.Context, model, endpoint string) (string, error) {
	var p string
	err := db.pool.QueryRow(ctx, `SELECT posture FROM neo_model_postures WHERE model = $1 AND endpoint = $2`, model, endpoint).Scan(&p)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("postgres: read the reasoning posture of %s: %w", model, err)
	}
	return p, nil
}

// SaveModelPosture saves the posture learned for model at endpoint.
func (db *DB) SaveModelPosture(ctx context.Context, model, endpoint, posture string) error {
	_, err := db.pool.Exec(ctx, `
		INSERT INTO neo_model_postures (model, endpoint, posture) VALUES ($1, $2, $3)
		ON CONFLICT (model, endpoint) DO UPDATE SET posture = EXCLUDED.posture`, model, endpoint, posture)
	if err != nil {
		return fmt.Errorf("postgres: save the reasoning posture of %s: %w", model, db.diskFull(err))
	}
	return nil
}
