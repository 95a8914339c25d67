package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/feedback"
)

// Ratings live in ratings/<thread key>\x00<turn>\x00<user> as JSON
// core.Rating: one per user and turn, the latest wins.

var _ feedback.Store = (*DB)(nil)

func ratingKey(r core.Rating) []byte {
	return []byte(r.Thread.Key() + "\x00" + r.Turn + "\x00" + r.User)
}

// SaveRating stores r, replacing the user's earlier rating of the turn.
func (db *DB) SaveRating(ctx context.Context, r core.Rating) error {
	v, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("store: encode a rating: %w", err)
	}
	err = db.write(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketRatings).Put(ratingKey(r), v)
	})
	if err != nil {
		return fmt.Errorf("store: save the rating of turn %s: %w", r.Turn, err)
	}
	return nil
}

// Ratings returns the ratings made at or after since, oldest first.
func (db *DB) Ratings(ctx context.Context, since time.Time) ([]core.Rating, error) {
	var out []core.Rating
	err := db.read(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketRatings).ForEach(func(k, v []byte) error {
			var r core.Rating
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("decode rating %q: %w", k, err)
			}
			if !r.At.Before(since) {
				out = append(out, r)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("store: read ratings: %w", err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}
