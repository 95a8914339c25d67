package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/neobot/neobot/core/governance"
)

// Every version of every place's settings lives in place_settings under
// place + "\x00" + its number (8 bytes, big-endian), so a place's
// versions sort oldest first and its newest is the last.

func placeKey(place string, n int64) []byte {
	return append(append([]byte(place), 0), i64(n)...)
}

// newestPlaceLocked returns place's newest version in tx, Number 0 when
// it has none.
func newestPlaceLocked(tx *bolt.Tx, place string) (governance.Version, error) {
	c := tx.Bucket(bucketPlaces).Cursor()
	prefix := append([]byte(place), 0)
	k, v := c.Seek(placeKey(place, -1)) // past every version: -1 is the largest key
	if k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	if k == nil || !bytes.HasPrefix(k, prefix) || len(k) != len(prefix)+8 {
		return governance.Version{Place: place}, nil
	}
	var out governance.Version
	if err := json.Unmarshal(v, &out); err != nil {
		return governance.Version{}, fmt.Errorf("place %s: %w", place, err)
	}
	return out, nil
}

// PlaceSettings returns place's newest settings; Number 0 when never set.
func (db *DB) PlaceSettings(ctx context.Context, place string) (governance.Version, error) {
	var out governance.Version
	err := db.read(ctx, func(tx *bolt.Tx) (err error) {
		out, err = newestPlaceLocked(tx, place)
		return err
	})
	if err != nil {
		return governance.Version{}, fmt.Errorf("store: place settings: %w", err)
	}
	return out, nil
}

// SetPlaceSettings stores v as its place's newest version, or fails with
// governance.ErrConflict when the newest is not v.Number-1.
func (db *DB) SetPlaceSettings(ctx context.Context, v governance.Version) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("store: set place settings: %w", err)
	}
	err = db.write(ctx, func(tx *bolt.Tx) error {
		cur, err := newestPlaceLocked(tx, v.Place)
		if err != nil {
			return err
		}
		if cur.Number != v.Number-1 {
			return governance.ErrConflict
		}
		return tx.Bucket(bucketPlaces).Put(placeKey(v.Place, v.Number), raw)
	})
	if err != nil {
		return fmt.Errorf("store: set place settings of %s: %w", v.Place, err)
	}
	return nil
}

// PlaceHistory returns place's versions, oldest first.
func (db *DB) PlaceHistory(ctx context.Context, place string) ([]governance.Version, error) {
	var out []governance.Version
	prefix := append([]byte(place), 0)
	err := db.read(ctx, func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketPlaces).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(k) != len(prefix)+8 {
				continue // a longer place that starts with this one and a NUL: none are valid
			}
			var ver governance.Version
			if err := json.Unmarshal(v, &ver); err != nil {
				return err
			}
			out = append(out, ver)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: place history of %s: %w", place, err)
	}
	return out, nil
}

// Places returns every place's newest version, by place.
func (db *DB) Places(ctx context.Context) ([]governance.Version, error) {
	var out []governance.Version
	err := db.read(ctx, func(tx *bolt.Tx) error {
		var last []byte
		return tx.Bucket(bucketPlaces).ForEach(func(k, v []byte) error {
			if len(k) < 9 {
				return nil
			}
			place := k[:len(k)-9]
			var ver governance.Version
			if err := json.Unmarshal(v, &ver); err != nil {
				return err
			}
			if bytes.Equal(place, last) {
				out[len(out)-1] = ver
			} else {
				out = append(out, ver)
			}
			last = append(last[:0], place...)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("store: places: %w", err)
	}
	return out, nil
}
