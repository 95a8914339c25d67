package postgres

import (
	"context"
	"fmt"
	"testing"

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
