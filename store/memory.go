package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/neobot/neobot/core/memory"
	bolt "go.etcd.io/bbolt"
)

// Memory records live by kind: user profiles (profile and preference
// records) in profiles/, procedures in patterns/, everything else in
// memories/, each as JSON keyed by ID.

var _ memory.Store = (*DB)(nil)

func memoryBucket(k memory.Kind) []byte {
	switch k {
	case memory.KindProfile, memory.KindPreference:
		return bucketProfiles
	case memory.KindProcedure:
		return bucketPatterns
	}
	return bucketMemories
}

var memoryBuckets = [][]byte{bucketMemories, bucketProfiles, bucketPatterns}

// WriteMemories stores put and deletes del in one transaction. A record
// whose kind changed moves bucket.
func (db *DB) WriteMemories(ctx context.Context, put []memory.Record, del []string) error {
	fn, err := writeMemoriesFn(put, del)
	if err != nil {
		return err
	}
	db.group.release() // a write-back still held goes first, in order
	if err := db.write(ctx, fn); err != nil {
		return fmt.Errorf("store: write memories: %w", err)
	}
	return nil
}

// WriteMemoriesLater is WriteMemories without waiting (see
// memory.LaterStore): the write commits within 50 ms, with another write
// when there is one from 25 ms on, else on its own. Write-backs held
// together commit together, so the memories tree is written once for
// several turns instead of in every reply's commit. A WriteMemories
// commits them first. A failing commit is logged.
func (db *DB) WriteMemoriesLater(put []memory.Record, del []string) error {
	fn, err := writeMemoriesFn(put, del)
	if err != nil {
		return err
	}
	db.group.hold(func(tx *bolt.Tx) error {
		if err := fn(tx); err != nil {
			return fmt.Errorf("store: write memories: %w", err)
		}
		return nil
	})
	return nil
}

// writeMemoriesFn encodes put and returns the transaction that stores it
// and deletes del.
func writeMemoriesFn(put []memory.Record, del []string) (func(*bolt.Tx) error, error) {
	raws := make([][]byte, len(put))
	for i, r := range put {
		if r.ID == "" {
			return nil, fmt.Errorf("store: write memory: empty ID")
		}
		raw, err := json.Marshal(r)
		if err != nil {
			return nil, fmt.Errorf("store: write memory %s: %w", r.ID, err)
		}
		raws[i] = raw
	}
	return func(tx *bolt.Tx) error {
		for _, id := range del {
			for _, name := range memoryBuckets {
				if err := tx.Bucket(name).Delete([]byte(id)); err != nil {
					return err
				}
			}
		}
		for i, r := range put {
			for _, name := range memoryBuckets {
				if err := tx.Bucket(name).Delete([]byte(r.ID)); err != nil {
					return err
				}
			}
			if err := tx.Bucket(memoryBucket(r.Kind)).Put([]byte(r.ID), raws[i]); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// ScanMemories calls fn with every memory record. fn runs inside a read
// transaction: it must not write to the store.
func (db *DB) ScanMemories(ctx context.Context, fn func(memory.Record) error) error {
	return db.read(ctx, func(tx *bolt.Tx) error {
		for _, name := range memoryBuckets {
			err := tx.Bucket(name).ForEach(func(k, v []byte) error {
				var r memory.Record
				if err := json.Unmarshal(v, &r); err != nil {
					return fmt.Errorf("store: decode memory %s: %w", k, err)
				}
				return fn(r)
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
}
