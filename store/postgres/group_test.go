package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/neobot/neobot/store/postgres/pgtest"
)

// TestGroupIsolatesAFailingWrite: a batch with one failing statement
// commits the others (each retried alone) and gives the failing write,
// and only it, its error.
func TestGroupIsolatesAFailingWrite(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, pgtest.Database(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var writes []*groupWrite
	for i := range 10 {
		key := fmt.Sprint("k", i)
		if i == 4 {
			key = "bad\x00key" // text cannot hold a NUL: the statement fails
		}
		writes = append(writes, &groupWrite{done: make(chan error, 1), queue: func(b *pgx.Batch) {
			b.Queue(`INSERT INTO neo_meta (key, value) VALUES ($1, 'v')`, key)
		}})
	}
	db.group.send(writes)
	for i, w := range writes {
		if err := <-w.done; (err != nil) != (i == 4) {
			t.Errorf("write %d: %v", i, err)
		}
	}
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM neo_meta WHERE key LIKE 'k%'`).Scan(&n); err != nil || n != 9 {
		t.Errorf("committed %d rows (%v), want the 9 good ones", n, err)
	}
}

// TestGroupWriteBoundedWhenTheDatabaseHangs: a batch whose statement the
// server never answers (its table locked by another session, as a stuck
// server or a long migration would) fails after the group's timeout
// instead of holding the committer, and every later write behind it,
// forever; once the lock goes, writes commit again.
func TestGroupWriteBoundedWhenTheDatabaseHangs(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, pgtest.Database(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.group.timeout = 200 * time.Millisecond
	write := func(key string) error {
		return db.group.write(ctx, key, func(b *pgx.Batch) {
			b.Queue(`INSERT INTO neo_meta (key, value) VALUES ($1, 'v')`, key)
		})
	}

	locker, err := db.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Rollback(ctx) // first, should the test fail with the table locked
	if _, err := locker.Exec(ctx, `LOCK TABLE neo_meta IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- write("hung") }()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a write the server never answered = %v, want the group's deadline", err)
		}
	case <-time.After(time.Minute): // a broken test's bound, far beyond the 200 ms timeout
		t.Fatal("a write the server never answered is still waiting after a minute")
	}
	if err := locker.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := write("after"); err != nil {
		t.Fatalf("a write after the lock went = %v, want it committed", err)
	}
}
