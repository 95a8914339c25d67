package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/neobot/neobot/core/quota"
)

// Shares live in shares/<person> as a JSON quota.Account. One process
// holds a bbolt file, so neobot counts shares in memory over bbolt
// (quota.Limiter); TakeShare is here for the conformance suite and for a
// tool that wants the accounts kept across restarts.

var _ quota.Store = (*DB)(nil)

// TakeShare applies c to person's share in one transaction.
func (db *DB) TakeShare(ctx context.Context, person string, now time.Time, limits quota.Limits, c quota.Charge) (quota.Denial, error) {
	var d quota.Denial
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketShares)
		var a quota.Account
		if v := b.Get([]byte(person)); v != nil {
			if err := json.Unmarshal(v, &a); err != nil {
				return fmt.Errorf("decode: %w", err)
			}
		}
		a, d = limits.Take(a, now, c)
		v, err := json.Marshal(a)
		if err != nil {
			return err
		}
		return b.Put([]byte(person), v)
	})
	if err != nil {
		return quota.Denial{}, fmt.Errorf("store: take %s's share: %w", person, err)
	}
	return d, nil
}
