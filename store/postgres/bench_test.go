package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/neobot/neobot/store/postgres"
	"github.com/neobot/neobot/store/postgres/pgtest"
	"github.com/neobot/neobot/store/storetest"
)

// BenchmarkJournal is storetest.BenchJournal on PostgreSQL with fsync on
// (a server of its own: the tests' shared one runs without fsync), over
// its unix socket.
func BenchmarkJournal(b *testing.B) {
	ctx := context.Background()
	srv, err := pgtest.Start(ctx, pgtest.Options{Durable: true})
	if err != nil {
		b.Skip(err)
	}
	defer srv.Stop()
	for _, writers := range []int{1, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			url, err := srv.CreateDatabase(ctx)
			if err != nil {
				b.Fatal(err)
			}
			db, err := postgres.Open(ctx, url, postgres.Options{MaxConns: 32})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			storetest.BenchJournal(b, db, writers)
		})
	}
}
