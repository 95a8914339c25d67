package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/neobot/neobot/store"
	"github.com/neobot/neobot/store/storetest"
)

func TestSweep(t *testing.T) {
	storetest.RunSweep(t, func(t *testing.T, now func() time.Time, ret store.Retention) storetest.Sweeper {
		return openTemp(t, store.Options{Now: now, Retention: ret})
	})
}

func TestSweepEveryStopsWithContext(t *testing.T) {
	db := openTemp(t, store.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- db.SweepEvery(ctx, time.Hour) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("SweepEvery after cancel = %v, want context.Canceled", err)
	}
}

func mustOK(t *testing.T, f func() error) {
	t.Helper()
	if err := f(); err != nil {
		t.Fatal(err)
	}
}
