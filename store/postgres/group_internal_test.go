package postgres

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/store/postgres/pgtest"
)

// TestTranscriptReadFailsAlone checks that a transcript read that cannot
// be decoded, sent in a batch with a write, fails alone: the write
// commits once, not again when the batch is retried write by write.
func TestTranscriptReadFailsAlone(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, pgtest.Database(t), Options{})
	if err != nil {
		t.Fatalf("Open = %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	th := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1.1"}
	if _, err := db.AppendEntries(ctx, th, []byte(`{}`)); err != nil {
		t.Fatalf("AppendEntries = %v", err)
	}
	if _, err := db.pool.Exec(ctx, `UPDATE neo_threads SET summary = '\x7b' WHERE key = $1`, th.Key()); err != nil {
		t.Fatal(err)
	}

	var tr transcriptRead
	count := countRuns()
	read := &groupWrite{key: th.Key(), done: make(chan error, 1), queue: tr.queue(th.Key())}
	db.group.send([]*groupWrite{count, read})
	if err := <-count.done; err != nil {
		t.Fatalf("the write's batch = %v", err)
	}
	if err := <-read.done; err != nil {
		t.Errorf("the read's batch = %v", err)
	}
	if tr.err == nil {
		t.Error("the read of a summary that is not JSON succeeded")
	}
	if runs := readRuns(t, db); runs != "1" {
		t.Errorf("the write committed %s times, want 1", runs)
	}
}

// TestGroupNoRowFailsAlone checks that a write whose statement found no
// row (an unknown event's done mark), batched with another write, fails
// alone: the other commits once, not again when the batch is retried
// write by write.
func TestGroupNoRowFailsAlone(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, pgtest.Database(t), Options{})
	if err != nil {
		t.Fatalf("Open = %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	var one int
	missing := &groupWrite{key: "b", done: make(chan error, 1), queue: func(b *pgx.Batch) {
		b.Queue(`UPDATE neo_meta SET value = 'x' WHERE key = 'absent' RETURNING 1`).QueryRow(func(row pgx.Row) error { return row.Scan(&one) })
	}}
	db.group.send([]*groupWrite{countRuns(), missing})
	if err := <-missing.done; !errors.Is(err, pgx.ErrNoRows) {
		t.Errorf("the write that found no row = %v, want pgx.ErrNoRows", err)
	}
	if runs := readRuns(t, db); runs != "1" {
		t.Errorf("the other write committed %s times, want 1", runs)
	}
}

// countRuns is a write that counts its commits in neo_meta (readRuns).
func countRuns() *groupWrite {
	return &groupWrite{key: "a", done: make(chan error, 1), queue: func(b *pgx.Batch) {
		b.Queue(`INSERT INTO neo_meta (key, value) VALUES ('runs', '1')
			ON CONFLICT (key) DO UPDATE SET value = (neo_meta.value::int + 1)::text`)
	}}
}

// readRuns returns how many times countRuns' writes committed.
func readRuns(t *testing.T, db *DB) string {
	t.Helper()
	var runs string
	if err := db.pool.QueryRow(t.Context(), `SELECT value FROM neo_meta WHERE key = 'runs'`).Scan(&runs); err != nil {
		t.Fatal(err)
	}
	return runs
}
