package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/neobot/neobot/core/governance"
)

// ChannelPlaces carries a place whose settings changed (core/governance).
const ChannelPlaces = "neo_places"

// PlaceSettings returns place's newest settings; Number 0 when never set.
func (db *DB) PlaceSettings(ctx context.Context, place string) (governance.Version, error) {
	var raw []byte
	err := db.pool.QueryRow(ctx, `SELECT body FROM neo_place_settings WHERE place = $1 ORDER BY version DESC LIMIT 1`, place).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return governance.Version{Place: place}, nil
	}
	if err != nil {
		return governance.Version{}, fmt.Errorf("postgres: place settings: %w", err)
	}
	var v governance.Version
	if err := json.Unmarshal(raw, &v); err != nil {
		return governance.Version{}, fmt.Errorf("postgres: place settings of %s: %w", place, err)
	}
	return v, nil
}

// SetPlaceSettings stores v as its place's newest version, or fails with
// governance.ErrConflict when the newest is not v.Number-1 (another
// instance's change came first).
func (db *DB) SetPlaceSettings(ctx context.Context, v governance.Version) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("postgres: set place settings: %w", err)
	}
	err = db.tx(ctx, func(tx pgx.Tx) error {
		var newest int64
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM neo_place_settings WHERE place = $1`, v.Place).Scan(&newest); err != nil {
			return err
		}
		if newest != v.Number-1 {
			return governance.ErrConflict
		}
		_, err := tx.Exec(ctx, `INSERT INTO neo_place_settings (place, version, body) VALUES ($1, $2, $3)`, v.Place, v.Number, raw)
		if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == "23505" {
			return governance.ErrConflict // the same version, written meanwhile
		}
		if err != nil {
			return err
		}
		// Sent with the commit: every instance applies the change to its
		// next turn.
		_, err = tx.Exec(ctx, "SELECT pg_notify($1, $2)", ChannelPlaces, v.Place)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: set place settings of %s: %w", v.Place, err)
	}
	return nil
}

// PlaceHistory returns place's versions, oldest first.
func (db *DB) PlaceHistory(ctx context.Context, place string) ([]governance.Version, error) {
	return db.placeVersions(ctx, `SELECT body FROM neo_place_settings WHERE place = $1 ORDER BY version`, place)
}

// Places returns every place's newest version, by place.
func (db *DB) Places(ctx context.Context) ([]governance.Version, error) {
	return db.placeVersions(ctx, `SELECT DISTINCT ON (place) body FROM neo_place_settings ORDER BY place, version DESC`)
}

func (db *DB) placeVersions(ctx context.Context, query string, args ...any) ([]governance.Version, error) {
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: place settings: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (governance.Version, error) {
		var raw []byte
		if err := row.Scan(&raw); err != nil {
			return governance.Version{}, err
		}
		var v governance.Version
		err := json.Unmarshal(raw, &v)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: place settings: %w", err)
	}
	return out, nil
}
