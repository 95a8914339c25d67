package postgres_test

import (
	"os"
	"testing"
	"time"

	"github.com/neobot/neobot/store/postgres"
	"github.com/neobot/neobot/store/postgres/pgtest"
	"github.com/neobot/neobot/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func open(t testing.TB, opts postgres.Options) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(t.Context(), pgtest.Database(t), opts)
	if err != nil {
		t.Fatalf("Open = %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) storetest.Backend {
		return open(t, postgres.Options{Now: now})
	})
}
