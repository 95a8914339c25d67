package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/neobot/neobot/core"
)

// CreateGate stores a new gate. A token already in use is an error.
func (db *DB) CreateGate(ctx context.Context, g core.Gate) error {
	if g.Token == "" {
		return errors.New("postgres: create gate: empty token")
	}
	raw, err := json.Marshal(g)
	if err != nil {
		return fmt.Errorf("postgres: create gate: %w", err)
	}
	var n int
	err = db.batched(ctx, "\x00gate "+g.Token, func(b *pgx.Batch) {
		b.Queue(`
			WITH g AS (
				INSERT INTO neo_gates (token, body, state, expires_ns, node_key) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (token) DO NOTHING
				RETURNING 1
			), n AS (
				INSERT INTO neo_gate_nodes (binding, token) SELECT $5, $1 FROM g
				ON CONFLICT (binding) DO UPDATE SET token = EXCLUDED.token
			)
			SELECT count(*) FROM g`, g.Token, raw, string(g.State), ns(g.Expires), gateNodeKey(g)).QueryRow(func(row pgx.Row) error { return row.Scan(&n) })
	})
	if err == nil && n == 0 {
		err = errors.New("token already in use")
	}
	if err != nil {
		return fmt.Errorf("postgres: create gate for %s/%s: %w", g.IntentID, g.NodeID, err)
	}
	return nil
}

// LoadGate returns the gate with token, or core.ErrGateUnknown.
func (db *DB) LoadGate(ctx context.Context, token string) (core.Gate, error) {
	var raw []byte
	err := db.pool.QueryRow(ctx, `SELECT body FROM neo_gates WHERE token = $1`, token).Scan(&raw)
	if err != nil {
		if err = errNoRows(err, core.ErrGateUnknown); errors.Is(err, core.ErrGateUnknown) {
			return core.Gate{}, err
		}
		return core.Gate{}, fmt.Errorf("postgres: load gate: %w", err)
	}
	return decodeGate(raw)
}

// UpdateGate applies fn to the gate with token and stores the result, in
// one transaction holding the gate's row lock, so decisions made on two
// instances at once are applied one after the other. When fn fails
// nothing is written and UpdateGate returns the gate as stored together
// with fn's error, unwrapped. It returns core.ErrGateUnknown when no gate
// has that token.
func (db *DB) UpdateGate(ctx context.Context, token string, fn func(*core.Gate) error) (core.Gate, error) {
	var (
		out   core.Gate
		fnErr error
	)
	err := db.tx(ctx, func(tx pgx.Tx) error {
		var raw []byte
		if err := tx.QueryRow(ctx, `SELECT body FROM neo_gates WHERE token = $1 FOR UPDATE`, token).Scan(&raw); err != nil {
			return errNoRows(err, core.ErrGateUnknown)
		}
		stored, err := decodeGate(raw)
		if err != nil {
			return err
		}
		if out, fnErr = stored.Edit(fn); fnErr != nil {
			return nil
		}
		if raw, err = json.Marshal(out); err != nil {
			return err
		}
		if _, err = tx.Exec(ctx, `UPDATE neo_gates SET body = $2, state = $3, expires_ns = $4 WHERE token = $1`, token, raw, string(out.State), ns(out.Expires)); err != nil {
			return err
		}
		if out.State == stored.State {
			return nil // only a decision wakes anyone
		}
		_, err = tx.Exec(ctx, "SELECT pg_notify($1, $2)", ChannelGate, token)
		return err
	})
	switch {
	case errors.Is(err, core.ErrGateUnknown):
		return core.Gate{}, err
	case err != nil:
		return core.Gate{}, fmt.Errorf("postgres: update gate: %w", err)
	case fnErr != nil:
		return out, fnErr
	}
	return out, nil
}

// GateBound returns the latest gate opened with binding, or
// core.ErrNotFound.
func (db *DB) GateBound(ctx context.Context, binding string) (core.Gate, error) {
	if binding == "" {
		return core.Gate{}, core.ErrNotFound
	}
	var raw []byte
	err := db.pool.QueryRow(ctx, `
		SELECT g.body FROM neo_gate_nodes n JOIN neo_gates g ON g.token = n.token
		WHERE n.binding = $1`, binding).Scan(&raw)
	if err != nil {
		if err = errNoRows(err, core.ErrNotFound); errors.Is(err, core.ErrNotFound) {
			return core.Gate{}, err
		}
		return core.Gate{}, fmt.Errorf("postgres: gate bound to %s: %w", binding, err)
	}
	return decodeGate(raw)
}

// PendingGates counts the gates waiting for a decision (for metrics).
func (db *DB) PendingGates(ctx context.Context) (int, error) {
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM neo_gates WHERE state = 'pending'`).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: count pending gates: %w", err)
	}
	return n, nil
}

func decodeGate(raw []byte) (core.Gate, error) {
	var g core.Gate
	if err := json.Unmarshal(raw, &g); err != nil {
		return core.Gate{}, fmt.Errorf("postgres: decode gate: %w", err)
	}
	return g, nil
}

// gateNodeKey is g's key in neo_gate_nodes: its binding, or for gates
// from before bindings existed, its intent and node (which no binding
// ever matches: they hold a \x01, which PostgreSQL text allows where
// bbolt's key used a NUL, which it does not).
func gateNodeKey(g core.Gate) string {
	if g.Binding == "" {
		return g.IntentID + "\x01" + g.NodeID
	}
	return g.Binding
}

var _ core.ThreadGates = (*DB)(nil)

// GatesIn returns the pending gates of thread t, wherever the turns
// waiting on them run: a stop reaching this instance is checked against
// them. Pending gates are few (one per waiting turn), so they are read
// through the pending index and picked here.
func (db *DB) GatesIn(ctx context.Context, t core.Thread) ([]core.Gate, error) {
	out, err := db.pending(ctx, func(g core.Gate) bool { return g.Thread.Key() == t.Key() })
	if err != nil {
		return nil, fmt.Errorf("postgres: read the pending gates of %s: %w", t.Key(), err)
	}
	return out, nil
}

// GatesOn returns the pending gates asked on platform, on every
// instance: the web's approvals list reads them here, so an instance
// started after a gate was asked lists it too.
func (db *DB) GatesOn(ctx context.Context, platform string) ([]core.Gate, error) {
	out, err := db.pending(ctx, func(g core.Gate) bool { return g.Thread.Platform == platform })
	if err != nil {
		return nil, fmt.Errorf("postgres: read the pending gates on %s: %w", platform, err)
	}
	return out, nil
}

// pending returns the pending gates keep keeps.
func (db *DB) pending(ctx context.Context, keep func(core.Gate) bool) ([]core.Gate, error) {
	rows, err := db.pool.Query(ctx, `SELECT body FROM neo_gates WHERE state = 'pending'`)
	if err != nil {
		return nil, err
	}
	raws, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, err
	}
	var out []core.Gate
	for _, raw := range raws {
		g, err := decodeGate(raw)
		if err != nil {
			return nil, err
		}
		if g.State == core.GatePending && keep(g) {
			out = append(out, g)
		}
	}
	return out, nil
}
