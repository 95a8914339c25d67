package store

import (
	"context"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Slack installations ("Add to Slack") live in slack_installs/<key>, one
// per workspace or Enterprise Grid org, sealed by adapters/slack before
// they get here: the file never holds a bot token in clear.

// SlackInstall returns the sealed installation stored under key, or nil.
func (db *DB) SlackInstall(ctx context.Context, key string) ([]byte, error) {
	return db.sealed(ctx, bucketSlackInstalls, key, "slack install")
}

// PutSlackInstall stores a sealed installation under key, replacing any.
func (db *DB) PutSlackInstall(ctx context.Context, key string, sealed []byte) error {
	return db.putSealed(ctx, bucketSlackInstalls, key, sealed, "slack install")
}

// DeleteSlackInstall removes the installation under key; a missing key is
// fine.
func (db *DB) DeleteSlackInstall(ctx context.Context, key string) error {
	return db.deleteSealed(ctx, bucketSlackInstalls, key, "slack install")
}

// sealed returns the value under key in bucket, or nil; what names the
// kind of value in errors.
func (db *DB) sealed(ctx context.Context, bucket []byte, key, what string) ([]byte, error) {
	var out []byte
	err := db.read(ctx, func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucket).Get([]byte(key)); v != nil {
			out = append([]byte(nil), v...)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", what, err)
	}
	return out, nil
}

// putSealed stores value under key in bucket, replacing any.
func (db *DB) putSealed(ctx context.Context, bucket []byte, key string, value []byte, what string) error {
	if key == "" || len(value) == 0 {
		return fmt.Errorf("store: put %s: %w", what, errEmptySealed)
	}
	err := db.write(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucket).Put([]byte(key), value)
	})
	if err != nil {
		return fmt.Errorf("store: put %s: %w", what, err)
	}
	return nil
}

// deleteSealed removes key from bucket; a missing key is fine.
func (db *DB) deleteSealed(ctx context.Context, bucket []byte, key, what string) error {
	err := db.write(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucket).Delete([]byte(key))
	})
	if err != nil {
		return fmt.Errorf("store: delete %s: %w", what, err)
	}
	return nil
}

var errEmptySealed = errors.New("empty key or value")
