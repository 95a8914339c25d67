package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/store"
)

// SetThreadTitle names thread t, which must be stored; Threads reports
// the name. It fails with core.ErrNotFound for a thread not stored.
func (db *DB) SetThreadTitle(ctx context.Context, t core.Thread, title string) error {
	switch {
	case strings.TrimSpace(title) == "":
		return fmt.Errorf("postgres: title of %s: the title is empty; give it a few words", t.Key())
	case len(title) > store.MaxTitle:
		return fmt.Errorf("postgres: title of %s: the title is over %d bytes; shorten it", t.Key(), store.MaxTitle)
	case strings.ContainsAny(title, "\n\r"):
		return fmt.Errorf("postgres: title of %s: the title has a line break; keep it to one line", t.Key())
	}
	tag, err := db.pool.Exec(ctx, `UPDATE neo_threads SET title = $2 WHERE key = $1`, t.Key(), title)
	if err != nil {
		return fmt.Errorf("postgres: title of %s: %w", t.Key(), err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: title of %s: %w", t.Key(), core.ErrNotFound)
	}
	return nil
}

// DeleteThread removes thread t with everything said in it: its
// transcript, archive, summary and title, and its finished delegations,
// in one transaction. Deleting a thread not stored does nothing.
func (db *DB) DeleteThread(ctx context.Context, t core.Thread) error {
	db.settleLazy(ctx, t.Key()) // else they would come back after the delete
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: delete %s: %w", t.Key(), err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	// The thread's row first: it locks the row, so an append to the
	// thread waits, and its entries are not among those deleted next.
	if _, err := tx.Exec(ctx, `DELETE FROM neo_threads WHERE key = $1`, t.Key()); err != nil {
		return fmt.Errorf("postgres: delete %s: %w", t.Key(), err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM neo_entries WHERE thread = $1`, t.Key()); err != nil {
		return fmt.Errorf("postgres: delete the transcript of %s: %w", t.Key(), err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM neo_delegations WHERE thread = $1 AND finished_ns IS NOT NULL`, t.Key()); err != nil {
		return fmt.Errorf("postgres: delete the delegations of %s: %w", t.Key(), err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM neo_files WHERE thread = $1`, t.Key()); err != nil {
		return fmt.Errorf("postgres: delete the files of %s: %w", t.Key(), err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: delete %s: %w", t.Key(), err)
	}
	return nil
}
