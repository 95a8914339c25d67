package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	bolterrors "go.etcd.io/bbolt/errors"

	bolt "go.etcd.io/bbolt"
)

// Backup writes a consistent copy of the whole file while the store stays
// in use: first every write still queued commits, then one read
// transaction copies the pages as of that moment (bbolt's Tx.WriteTo), so
// writers carry on during the copy and none of their later writes is in
// it. start is called inside the transaction with the copy's size in
// bytes and returns where to write it. Backup returns the bytes written.
func (db *DB) Backup(ctx context.Context, start func(size int64) (io.Writer, error)) (int64, error) {
	db.group.release()
	if err := db.group.write(func(*bolt.Tx) error { return nil }); err != nil {
		return 0, fmt.Errorf("store: backup %s: commit the queued writes: %w", db.path, db.diskFull(err))
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("store: backup %s: %w", db.path, err)
	}
	var n int64
	err := db.bolt.View(func(tx *bolt.Tx) error {
		w, err := start(tx.Size())
		if err != nil {
			return err
		}
		n, err = tx.WriteTo(w)
		return err
	})
	if err != nil {
		return n, fmt.Errorf("store: backup %s: %w", db.path, err)
	}
	return n, nil
}

// Contents is what Verify found in a database file.
type Contents struct {
	// Schema is the file's schema version.
	Schema uint64
	// Keys counts the top-level keys of each bucket, by bucket name.
	Keys map[string]int
	// Size is the file's size in bytes.
	Size int64
}

// Verify opens the database file at path read-only and checks it is one
// this neobot can serve: bbolt's consistency check passes, the schema
// version is known, and every bucket is there and can be read to its
// end. It never changes the file. A file held by a running process fails
// with ErrLocked after lockTimeout.
func Verify(ctx context.Context, path string, lockTimeout time.Duration) (Contents, error) {
	var c Contents
	st, err := os.Stat(path)
	if err != nil {
		return c, fmt.Errorf("store: verify: %w", err)
	}
	c.Size = st.Size()
	b, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: lockTimeout})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return c, fmt.Errorf("store: verify %s: another process holds it: %w", path, ErrLocked)
	}
	if err != nil {
		return c, fmt.Errorf("store: verify %s: not a neobot database (%w)", path, err)
	}
	defer b.Close()
	err = b.View(func(tx *bolt.Tx) error {
		var damage error
		for err := range tx.Check() { // drained: the check runs to its end inside tx
			if damage == nil {
				damage = err
			}
		}
		if damage != nil {
			return fmt.Errorf("damaged: %w", damage)
		}
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return errors.New("no meta bucket: not a neobot database")
		}
		v := meta.Get(keySchema)
		if len(v) != 8 {
			return errors.New("no schema version: not a neobot database")
		}
		c.Schema = binary.BigEndian.Uint64(v)
		if c.Schema > SchemaVersion {
			return &SchemaError{Path: path, Found: c.Schema, Want: SchemaVersion}
		}
		c.Keys = map[string]int{}
		for _, name := range allBuckets {
			if err := ctx.Err(); err != nil {
				return err
			}
			bk := tx.Bucket(name)
			if bk == nil {
				if c.Schema == SchemaVersion {
					return fmt.Errorf("bucket %s is missing", name)
				}
				continue // an older file: opening it creates the bucket
			}
			n, cur := 0, bk.Cursor()
			for k, _ := cur.First(); k != nil; k, _ = cur.Next() {
				n++
			}
			c.Keys[string(name)] = n
		}
		return nil
	})
	var se *SchemaError
	if errors.As(err, &se) {
		return c, se
	}
	if err != nil {
		return c, fmt.Errorf("store: verify %s: %w", path, err)
	}
	return c, nil
}

// Restore replaces the database file at path with the backup at from,
// after checking the backup with Verify. It refuses while another process
// (a running neobot) holds path, and holds path's lock itself until the
// replacement is in place, so no neobot starts on the old file meanwhile.
// The copy is written beside path, synced, checked again, and renamed
// over it; the file it replaced is kept as the returned name ("" when
// there was none).
func Restore(ctx context.Context, from, path string, lockTimeout time.Duration) (Contents, string, error) {
	c, err := Verify(ctx, from, lockTimeout)
	if err != nil {
		return c, "", fmt.Errorf("store: restore: the backup %s: %w", from, err)
	}
	if _, err := os.Stat(path); err == nil {
		held, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockTimeout})
		if errors.Is(err, bolterrors.ErrTimeout) {
			return c, "", fmt.Errorf("store: restore: %s is held by a running neobot; stop it first (a restore never replaces a database in use): %w", path, ErrLocked)
		}
		if err == nil {
			defer held.Close()
		} // a damaged file cannot be opened, nor be in use: it is replaced
	}
	tmp := path + ".restoring"
	if err := copyFile(from, tmp); err != nil {
		os.Remove(tmp)
		return c, "", fmt.Errorf("store: restore: copy %s beside %s: %w", from, path, err)
	}
	if _, err := Verify(ctx, tmp, lockTimeout); err != nil {
		os.Remove(tmp)
		return c, "", fmt.Errorf("store: restore: the copy %s: %w", tmp, err)
	}
	var kept string
	if _, err := os.Stat(path); err == nil {
		kept = path + ".before-restore-" + time.Now().UTC().Format("20060102T150405Z")
		if err := os.Rename(path, kept); err != nil {
			os.Remove(tmp)
			return c, "", fmt.Errorf("store: restore: set %s aside: %w", path, err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return c, kept, fmt.Errorf("store: restore: rename %s to %s: %w", tmp, path, err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return c, kept, fmt.Errorf("store: restore: %w", err)
	}
	return c, kept, nil
}

// copyFile copies from to a new file to, synced to disk.
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// SyncDir makes a rename in dir durable, for callers writing a file
// beside the database (a backup's temporary file renamed into place).
func SyncDir(dir string) error { return syncDir(dir) }
