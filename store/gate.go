package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/neobot/neobot/core"
	bolt "go.etcd.io/bbolt"
)

// Gates live in gates/<token> as JSON; gate_nodes/<binding> holds the token
// of the latest gate opened with that binding (core.GateRequest.Binding).

var _ core.GateStore = (*DB)(nil)

// CreateGate stores a new gate. A token already in use is an error.
func (db *DB) CreateGate(ctx context.Context, g core.Gate) error {
	if g.Token == "" {
		return errors.New("store: create gate: empty token")
	}
	raw, err := json.Marshal(g)
	if err != nil {
		return fmt.Errorf("store: create gate: %w", err)
	}
	err = db.write(ctx, func(tx *bolt.Tx) error {
		gates := tx.Bucket(bucketGates)
		if gates.Get([]byte(g.Token)) != nil {
			return errors.New("token already in use")
		}
		if err := gates.Put([]byte(g.Token), raw); err != nil {
			return err
		}
		return tx.Bucket(bucketGateNodes).Put(gateNodeKey(g), []byte(g.Token))
	})
	if err != nil {
		return fmt.Errorf("store: create gate for %s/%s: %w", g.IntentID, g.NodeID, err)
	}
	return nil
}

// LoadGate returns the gate with token, or core.ErrGateUnknown.
func (db *DB) LoadGate(ctx context.Context, token string) (core.Gate, error) {
	var g core.Gate
	err := db.read(ctx, func(tx *bolt.Tx) error {
		var err error
		g, err = getGate(tx, token)
		return err
	})
	return g, err
}

// UpdateGate applies fn to the gate with token and stores the result, in one
// transaction. When fn fails nothing is written and UpdateGate returns the
// gate as stored together with fn's error, unwrapped, so callers can test
// it with ==. It returns core.ErrGateUnknown when no gate has that token.
func (db *DB) UpdateGate(ctx context.Context, token string, fn func(*core.Gate) error) (core.Gate, error) {
	if err := ctx.Err(); err != nil {
		return core.Gate{}, err
	}
	var (
		out   core.Gate
		fnErr error
	)
	// A plain Update, not a batch: fn is the caller's and need not be
	// idempotent.
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		stored, err := getGate(tx, token)
		if err != nil {
			return err
		}
		if out, fnErr = stored.Edit(fn); fnErr != nil {
			return nil
		}
		raw, err := json.Marshal(out)
		if err != nil {
			return err
		}
		return tx.Bucket(bucketGates).Put([]byte(token), raw)
	})
	switch {
	case errors.Is(err, core.ErrGateUnknown):
		return core.Gate{}, err
	case err != nil:
		return core.Gate{}, fmt.Errorf("store: update gate: %w", err)
	case fnErr != nil:
		return out, fnErr
	}
	return out, nil
}

// GateBound returns the latest gate opened with binding, or
// core.ErrNotFound.
func (db *DB) GateBound(ctx context.Context, binding string) (core.Gate, error) {
	var g core.Gate
	if binding == "" {
		return g, core.ErrNotFound
	}
	err := db.read(ctx, func(tx *bolt.Tx) error {
		token := tx.Bucket(bucketGateNodes).Get([]byte(binding))
		if token == nil {
			return core.ErrNotFound
		}
		var err error
		g, err = getGate(tx, string(token))
		if errors.Is(err, core.ErrGateUnknown) {
			return core.ErrNotFound // swept
		}
		return err
	})
	return g, err
}

func getGate(tx *bolt.Tx, token string) (core.Gate, error) {
	v := tx.Bucket(bucketGates).Get([]byte(token))
	if v == nil {
		return core.Gate{}, core.ErrGateUnknown
	}
	var g core.Gate
	if err := json.Unmarshal(v, &g); err != nil {
		return core.Gate{}, fmt.Errorf("store: decode gate: %w", err)
	}
	return g, nil
}

// gateNodeKey is g's key in gate_nodes. Gates stored before bindings
// existed were keyed by intent and node; no binding ever matches such a
// key, so their decisions are never reused, and the sweep still finds them.
func gateNodeKey(g core.Gate) []byte {
	if g.Binding == "" {
		return []byte(g.IntentID + "\x00" + g.NodeID)
	}
	return []byte(g.Binding)
}

// PendingGates counts the gates waiting for a decision (for metrics). It
// reads every gate; retention keeps their number small.
func (db *DB) PendingGates(ctx context.Context) (int, error) {
	n := 0
	err := db.read(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketGates).ForEach(func(_, v []byte) error {
			var g struct {
				State core.GateState `json:"state"`
			}
			if json.Unmarshal(v, &g) == nil && g.State == core.GatePending {
				n++
			}
			return nil
		})
	})
	if err != nil {
		return 0, fmt.Errorf("store: count pending gates: %w", err)
	}
	return n, nil
}
