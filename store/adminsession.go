package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The admin page's Slack sign-ins live in admin_sessions/<id>, id the
// SHA-256 of the session's token (never the token): the expiry in Unix
// nanoseconds (8 bytes, big-endian), then what adapters/web keeps.

// AdminSession returns the admin page session stored under id, or nil
// when there is none or it has expired.
func (db *DB) AdminSession(ctx context.Context, id string) ([]byte, error) {
	v, err := db.sealed(ctx, bucketAdminSessions, id, "admin session")
	if err != nil || len(v) < 8 || !db.now().Before(time.Unix(0, int64(binary.BigEndian.Uint64(v)))) {
		return nil, err
	}
	return v[8:], nil
}

// PutAdminSession stores data under id until expires, replacing any, and
// deletes the sessions that have expired.
func (db *DB) PutAdminSession(ctx context.Context, id string, data []byte, expires time.Time) error {
	if id == "" || len(data) == 0 {
		return fmt.Errorf("store: put admin session: %w", errEmptySealed)
	}
	v := binary.BigEndian.AppendUint64(nil, uint64(expires.UnixNano()))
	now := db.now()
	err := db.write(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAdminSessions)
		var gone [][]byte
		err := b.ForEach(func(k, v []byte) error {
			if len(v) < 8 || !now.Before(time.Unix(0, int64(binary.BigEndian.Uint64(v)))) {
				gone = append(gone, k)
			}
			return nil
		})
		for _, k := range gone {
			err = errors.Join(err, b.Delete(k))
		}
		return errors.Join(err, b.Put([]byte(id), append(v, data...)))
	})
	if err != nil {
		return fmt.Errorf("store: put admin session: %w", err)
	}
	return nil
}

// RenewAdminSession replaces the data of the session under id while it
// is stored: a session ended meanwhile (signed out on another instance)
// stays ended.
func (db *DB) RenewAdminSession(ctx context.Context, id string, data []byte) error {
	if id == "" || len(data) == 0 {
		return fmt.Errorf("store: renew admin session: %w", errEmptySealed)
	}
	err := db.write(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAdminSessions)
		v := b.Get([]byte(id))
		if len(v) < 8 {
			return nil
		}
		return b.Put([]byte(id), append(append([]byte(nil), v[:8]...), data...))
	})
	if err != nil {
		return fmt.Errorf("store: renew admin session: %w", err)
	}
	return nil
}

// DeleteAdminSession ends the session under id; a missing one is fine.
func (db *DB) DeleteAdminSession(ctx context.Context, id string) error {
	return db.deleteSealed(ctx, bucketAdminSessions, id, "admin session")
}
