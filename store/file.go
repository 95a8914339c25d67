package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/neobot/neobot/core"
)

// Files live in files/<id>: a 4-byte length, the file's fields but its
// data as JSON, then the data. Retention drops a file with its thread
// (DeleteThread, and the sweep: a file whose thread is gone), and an
// upload never sent after UploadTTL.

// UploadTTL is how long an upload never sent in a thread is kept.
const UploadTTL = 24 * time.Hour

// FileGrace is how long a file may name a thread not stored yet: an
// upload is sent just before its message is journaled.
const FileGrace = time.Hour

// PutFile stores f under f.ID.
func (db *DB) PutFile(ctx context.Context, f core.StoredFile) error {
	if err := checkFile(f); err != nil {
		return fmt.Errorf("store: put file: %w", err)
	}
	v, err := encodeFile(f)
	if err != nil {
		return fmt.Errorf("store: put file %s: %w", f.ID, err)
	}
	err = db.write(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketFiles)
		if b.Get([]byte(f.ID)) != nil {
			return errors.New("ID in use")
		}
		return b.Put([]byte(f.ID), v)
	})
	if err != nil {
		return fmt.Errorf("store: put file %s: %w", f.ID, err)
	}
	return nil
}

// checkFile refuses a file no store keeps.
func checkFile(f core.StoredFile) error {
	switch {
	case f.ID == "" || f.Owner == "":
		return errors.New("a file needs an ID and an owner")
	case len(f.Data) > core.MaxStoredFile:
		return fmt.Errorf("%s is %d bytes, over the %d a store keeps", f.Name, len(f.Data), core.MaxStoredFile)
	}
	return nil
}

// File returns the file with id, or core.ErrNotFound.
func (db *DB) File(ctx context.Context, id string) (core.StoredFile, error) {
	var f core.StoredFile
	err := db.read(ctx, func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketFiles).Get([]byte(id))
		if v == nil {
			return core.ErrNotFound
		}
		var err error
		f, err = decodeFile(v, true)
		return err
	})
	if errors.Is(err, core.ErrNotFound) {
		return core.StoredFile{}, err
	}
	if err != nil {
		return core.StoredFile{}, fmt.Errorf("store: read file %s: %w", id, err)
	}
	return f, nil
}

// SendFile records that the upload id went with a message in thread.
func (db *DB) SendFile(ctx context.Context, id, thread string) error {
	err := db.write(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketFiles)
		v := b.Get([]byte(id))
		if v == nil {
			return core.ErrNotFound
		}
		f, err := decodeFile(v, true)
		if err != nil {
			return err
		}
		f.Thread = thread
		if v, err = encodeFile(f); err != nil {
			return err
		}
		return b.Put([]byte(id), v)
	})
	if errors.Is(err, core.ErrNotFound) {
		return err
	}
	if err != nil {
		return fmt.Errorf("store: send file %s: %w", id, err)
	}
	return nil
}

func encodeFile(f core.StoredFile) ([]byte, error) {
	data := f.Data
	f.Data = nil
	head, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	v := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(head)+len(data)), uint32(len(head)))
	return append(append(v, head...), data...), nil
}

// decodeFile decodes a stored file, with a copy of its data when data is
// set (a value is valid only in its transaction).
func decodeFile(v []byte, data bool) (core.StoredFile, error) {
	var f core.StoredFile
	if len(v) < 4 || uint64(len(v)-4) < uint64(binary.BigEndian.Uint32(v)) {
		return f, errors.New("decode file: cut short")
	}
	n := 4 + int(binary.BigEndian.Uint32(v))
	if err := json.Unmarshal(v[4:n], &f); err != nil {
		return f, fmt.Errorf("decode file: %w", err)
	}
	if data {
		f.Data = append([]byte{}, v[n:]...)
	}
	return f, nil
}

// sweepFiles drops the uploads never sent after UploadTTL and the files
// whose thread is gone.
func sweepFiles(tx *bolt.Tx, now time.Time) (int, error) {
	threads := tx.Bucket(bucketThreads)
	var drop [][]byte
	err := tx.Bucket(bucketFiles).ForEach(func(k, v []byte) error {
		f, err := decodeFile(v, false)
		if err != nil {
			return err
		}
		if fileGone(f, now, func(key string) bool { return threads.Bucket([]byte(key)) != nil }) {
			drop = append(drop, k)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, k := range drop {
		if err := tx.Bucket(bucketFiles).Delete(k); err != nil {
			return 0, err
		}
	}
	return len(drop), nil
}

// fileGone reports whether retention drops f at now: an upload never sent
// after UploadTTL, or a file whose thread is not stored (deleted, or
// dropped) past the grace a message takes to be journaled.
func fileGone(f core.StoredFile, now time.Time, stored func(thread string) bool) bool {
	if f.Thread == "" {
		return now.Sub(f.At) >= UploadTTL
	}
	return now.Sub(f.At) >= FileGrace && !stored(f.Thread)
}

// deleteThreadFiles drops the files of thread key, in tx.
func deleteThreadFiles(tx *bolt.Tx, key string) error {
	b := tx.Bucket(bucketFiles)
	var drop [][]byte
	err := b.ForEach(func(k, v []byte) error {
		f, err := decodeFile(v, false)
		if err == nil && f.Thread == key {
			drop = append(drop, k)
		}
		return err
	})
	if err != nil {
		return err
	}
	for _, k := range drop {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
