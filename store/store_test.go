package store_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/neobot/neobot/store"
	"github.com/neobot/neobot/store/storetest"
)

func openTemp(t testing.TB, opts store.Options) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "neobot.db"), opts)
	if err != nil {
		t.Fatalf("Open = %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) storetest.Backend {
		return openTemp(t, store.Options{Now: now})
	})
}
