package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/neobot/neobot/core"
)

// PutFile stores f under f.ID: a web upload, or a file a tool returned.
func (db *DB) PutFile(ctx context.Context, f core.StoredFile) error {
	switch {
	case f.ID == "" || f.Owner == "":
		return errors.New("postgres: put file: a file needs an ID and an owner")
	case len(f.Data) > core.MaxStoredFile:
		return fmt.Errorf("postgres: put file: %s is %d bytes, over the %d a store keeps", f.Name, len(f.Data), core.MaxStoredFile)
	}
	err := db.write(ctx, func(ctx context.Context) error {
		_, err := db.pool.Exec(ctx, `INSERT INTO neo_files (id, owner, thread, name, mime, at_ns, data) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			f.ID, f.Owner, f.Thread, f.Name, f.MIMEType, ns(f.At), f.Data)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: put file %s: %w", f.ID, err)
	}
	return nil
}

// File returns the file with id, or core.ErrNotFound.
func (db *DB) File(ctx context.Context, id string) (core.StoredFile, error) {
	f := core.StoredFile{ID: id}
	var at int64
	err := db.pool.QueryRow(ctx, `SELECT owner, thread, name, mime, at_ns, data FROM neo_files WHERE id = $1`, id).
		Scan(&f.Owner, &f.Thread, &f.Name, &f.MIMEType, &at, &f.Data)
	if err = errNoRows(err, core.ErrNotFound); errors.Is(err, core.ErrNotFound) {
		return core.StoredFile{}, err
	}
	if err != nil {
		return core.StoredFile{}, fmt.Errorf("postgres: read file %s: %w", id, err)
	}
	f.At = time.Unix(0, at).UTC()
	return f, nil
}

// SendFile records that the upload id went with a message in thread.
func (db *DB) SendFile(ctx context.Context, id, thread string) error {
	tag, err := db.pool.Exec(ctx, `UPDATE neo_files SET thread = $2 WHERE id = $1`, id, thread)
	if err != nil {
		return fmt.Errorf("postgres: send file %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return core.ErrNotFound
	}
	return nil
}

// sweepFilesSQL drops the uploads never sent after store.UploadTTL ($2)
// and the files whose thread is gone past an hour's grace ($3), as of
// $1.
const sweepFilesSQL = `DELETE FROM neo_files f WHERE
	(f.thread = '' AND f.at_ns <= $1::bigint - $2::bigint) OR
	(f.thread <> '' AND f.at_ns <= $1 - $3::bigint AND NOT EXISTS (SELECT 1 FROM neo_threads t WHERE t.key = f.thread))`
