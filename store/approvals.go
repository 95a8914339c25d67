package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/neobot/neobot/core"
)

// GatesSince returns the stored gates created at or after since, oldest
// first: the approvals an audit export lists. Gates are kept until
// Retention.Decided after they expire.
func (db *DB) GatesSince(ctx context.Context, since time.Time) ([]core.Gate, error) {
	var out []core.Gate
	err := db.read(ctx, func(tx *bolt.Tx) error {
		out = nil
		return tx.Bucket(bucketGates).ForEach(func(k, v []byte) error {
			var g core.Gate
			if err := json.Unmarshal(v, &g); err != nil {
				return fmt.Errorf("decode gate: %w", err)
			}
			if !g.Created.Before(since) {
				out = append(out, g)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("store: gates: %w", err)
	}
	SortGates(out)
	return out, nil
}

// SortGates orders gates by creation, then by token.
func SortGates(gs []core.Gate) {
	slices.SortStableFunc(gs, func(a, b core.Gate) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.Token, b.Token)
	})
}
