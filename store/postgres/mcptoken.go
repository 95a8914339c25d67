package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// MCPToken returns the sealed grant stored under key, or nil.
func (db *DB) MCPToken(ctx context.Context, key string) ([]byte, error) {
	var out []byte
	err := db.pool.QueryRow(ctx, `SELECT sealed FROM neo_mcp_tokens WHERE key = $1`, key).Scan(&out)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: mcp token: %w", err)
	}
	return out, nil
}

// PutMCPToken stores a sealed grant under key, replacing any.
func (db *DB) PutMCPToken(ctx context.Context, key string, sealed []byte) error {
	if key == "" || len(sealed) == 0 {
		return errors.New("postgres: put mcp token: empty key or value")
	}
	_, err := db.pool.Exec(ctx, `
		INSERT INTO neo_mcp_tokens (key, sealed, updated_ns) VALUES ($1, $2, $3)
		ON CONFLICT (key) DO UPDATE SET sealed = EXCLUDED.sealed, updated_ns = EXCLUDED.updated_ns`,
		key, sealed, db.now().UnixNano())
	if err != nil {
		return fmt.Errorf("postgres: put mcp token: %w", err)
	}
	return nil
}

// DeleteMCPToken removes the grant under key; a missing key is fine.
func (db *DB) DeleteMCPToken(ctx context.Context, key string) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM neo_mcp_tokens WHERE key = $1`, key); err != nil {
		return fmt.Errorf("postgres: delete mcp token: %w", err)
	}
	return nil
}
