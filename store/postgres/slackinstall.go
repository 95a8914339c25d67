package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// SlackInstall returns the sealed installation stored under key, or nil.
func (db *DB) SlackInstall(ctx context.Context, key string) ([]byte, error) {
	return db.sealed(ctx, "neo_slack_installs", key, "slack install")
}

// PutSlackInstall stores a sealed installation under key, replacing any.
func (db *DB) PutSlackInstall(ctx context.Context, key string, sealed []byte) error {
	return db.putSealed(ctx, "neo_slack_installs", key, sealed, "slack install")
}

// DeleteSlackInstall removes the installation under key; a missing key is
// fine.
func (db *DB) DeleteSlackInstall(ctx context.Context, key string) error {
	return db.deleteSealed(ctx, "neo_slack_installs", key, "slack install")
}

// sealed returns the sealed value under key in table (a constant of this
// package, never input), or nil; what names the value in errors.
func (db *DB) sealed(ctx context.Context, table, key, what string) ([]byte, error) {
	var out []byte
	err := db.pool.QueryRow(ctx, `SELECT sealed FROM `+table+` WHERE key = $1`, key).Scan(&out)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", what, err)
	}
	return out, nil
}

// putSealed stores a sealed value under key in table, replacing any.
func (db *DB) putSealed(ctx context.Context, table, key string, sealed []byte, what string) error {
	if key == "" || len(sealed) == 0 {
		return fmt.Errorf("postgres: put %s: empty key or value", what)
	}
	_, err := db.pool.Exec(ctx, `
		INSERT INTO `+table+` (key, sealed, updated_ns) VALUES ($1, $2, $3)
		ON CONFLICT (key) DO UPDATE SET sealed = EXCLUDED.sealed, updated_ns = EXCLUDED.updated_ns`,
		key, sealed, db.now().UnixNano())
	if err != nil {
		return fmt.Errorf("postgres: put %s: %w", what, err)
	}
	return nil
}

// deleteSealed removes key from table; a missing key is fine.
func (db *DB) deleteSealed(ctx context.Context, table, key, what string) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM `+table+` WHERE key = $1`, key); err != nil {
		return fmt.Errorf("postgres: delete %s: %w", what, err)
	}
	return nil
}
