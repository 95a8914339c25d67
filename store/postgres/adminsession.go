package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// AdminSession returns the admin page session stored under id (the
// SHA-256 of its token), or nil when there is none or it has expired.
func (db *DB) AdminSession(ctx context.Context, id string) ([]byte, error) {
	var out []byte
	err := db.pool.QueryRow(ctx, `SELECT data FROM neo_admin_sessions WHERE id = $1 AND expires_ns > $2`, id, db.now().UnixNano()).Scan(&out)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: admin session: %w", err)
	}
	return out, nil
}

// PutAdminSession stores data under id until expires, replacing any, and
// deletes the sessions that have expired.
func (db *DB) PutAdminSession(ctx context.Context, id string, data []byte, expires time.Time) error {
	if id == "" || len(data) == 0 {
		return errors.New("postgres: put admin session: empty key or value")
	}
	_, err := db.pool.Exec(ctx, `
		WITH gone AS (DELETE FROM neo_admin_sessions WHERE expires_ns <= $4 AND id <> $1)
		INSERT INTO neo_admin_sessions (id, data, expires_ns) VALUES ($1, $2, $3)
		ON CONFLICT (id) DO UPDATE SET data = EXCLUDED.data, expires_ns = EXCLUDED.expires_ns`,
		id, data, expires.UnixNano(), db.now().UnixNano())
	if err != nil {
		return fmt.Errorf("postgres: put admin session: %w", err)
	}
	return nil
}

// RenewAdminSession replaces the data of the session under id while it
// is stored: a session ended meanwhile (signed out on another instance)
// stays ended.
func (db *DB) RenewAdminSession(ctx context.Context, id string, data []byte) error {
	if id == "" || len(data) == 0 {
		return errors.New("postgres: renew admin session: empty key or value")
	}
	if _, err := db.pool.Exec(ctx, `UPDATE neo_admin_sessions SET data = $2 WHERE id = $1`, id, data); err != nil {
		return fmt.Errorf("postgres: renew admin session: %w", err)
	}
	return nil
}

// DeleteAdminSession ends the session under id; a missing one is fine.
func (db *DB) DeleteAdminSession(ctx context.Context, id string) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM neo_admin_sessions WHERE id = $1`, id); err != nil {
		return fmt.Errorf("postgres: delete admin session: %w", err)
	}
	return nil
}
