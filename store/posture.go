package store

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/neobot/neobot/core/llm"
)

// Postures live in model_postures/<model>\x00<endpoint> as the posture's
// word: what a model's answers taught about starting inside reasoning.

var _ llm.Postures = (*DB)(nil)

func postureKey(model, endpoint string) []byte { return []byte(model + "\x00" + endpoint) }

// ModelPosture returns the posture saved for model at endpoint, or "".
func (db *DB) ModelPosture(ctx context.Context, model, endpoint string) (string, error) {
	var p string
	err := db.read(ctx, func(tx *bolt.Tx) error {
		p = string(tx.Bucket(bucketPostures).Get(postureKey(model, endpoint)))
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("store: read the reasoning posture of %s: %w", model, err)
	}
	return p, nil
}

// SaveModelPosture saves the posture learned for model at endpoint.
func (db *DB) SaveModelPosture(ctx context.Context, model, endpoint, posture string) error {
	err := db.write(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPostures).Put(postureKey(model, endpoint), []byte(posture))
	})
	if err != nil {
		return fmt.Errorf("store: save the reasoning posture of %s: %w", model, err)
	}
	return nil
}
