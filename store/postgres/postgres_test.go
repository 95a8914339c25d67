package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/governance"
	"github.com/neobot/neobot/store"
	"github.com/neobot/neobot/store/postgres"
	"github.com/neobot/neobot/store/postgres/pgtest"
	"github.com/neobot/neobot/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func open(t testing.TB, opts postgres.Options) *postgres.DB {
	t.Helper()
	return openURL(t, pgtest.Database(t), opts)
}

// openURL opens the store at url, closed when the test ends.
func openURL(t testing.TB, url string, opts postgres.Options) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(t.Context(), url, opts)
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

func TestMCPTokens(t *testing.T) {
	storetest.RunMCPTokens(t, func(t *testing.T) storetest.MCPTokens { return open(t, postgres.Options{}) })
}

func TestAdminSessions(t *testing.T) {
	storetest.RunAdminSessions(t, func(t *testing.T) storetest.AdminSessions { return open(t, postgres.Options{}) })
}

func TestSlackInstalls(t *testing.T) {
	storetest.RunSlackInstalls(t, func(t *testing.T) storetest.SlackInstalls { return open(t, postgres.Options{}) })
}

func TestPlaceSettings(t *testing.T) {
	storetest.RunPlaceSettings(t, func(t *testing.T) governance.Store { return open(t, postgres.Options{}) })
}

func TestSweep(t *testing.T) {
	storetest.RunSweep(t, func(t *testing.T, now func() time.Time, ret store.Retention) storetest.Sweeper {
		return open(t, postgres.Options{Now: now, Retention: ret})
	})
}

// TestCrashChild is the child of TestCrashKeepsAcknowledgedEntries.
func TestCrashChild(t *testing.T) {
	storetest.CrashChild(t, func(url string) (storetest.Appender, error) {
		return postgres.Open(context.Background(), url, postgres.Options{})
	})
}

// TestCrashKeepsAcknowledgedEntries: a client SIGKILLed mid-writes loses
// no acknowledged entry and tears none.
func TestCrashKeepsAcknowledgedEntries(t *testing.T) {
	storetest.Crash(t, "TestCrashChild",
		func(t *testing.T) string { return pgtest.Database(t) },
		func(t *testing.T, url string) storetest.Backend { return openURL(t, url, postgres.Options{}) })
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	url := pgtest.Database(t)
	db := openURL(t, url, postgres.Options{})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	newer := postgres.SchemaVersion() + 1
	if _, err := conn.Exec(t.Context(), "INSERT INTO neo_schema (version) VALUES ($1)", newer); err != nil {
		t.Fatal(err)
	}
	_, err = postgres.Open(t.Context(), url, postgres.Options{})
	var se *postgres.SchemaError
	if !errors.As(err, &se) || se.Found != newer || se.Want != postgres.SchemaVersion() {
		t.Fatalf("Open(newer schema) = %v, want a *SchemaError naming %d and %d", err, newer, postgres.SchemaVersion())
	}
	if !strings.Contains(err.Error(), "NEO_DATABASE_URL") {
		t.Errorf("error %q does not say what to change", err)
	}
}

func TestOpenErrorsSayWhatToDo(t *testing.T) {
	_, err := postgres.Open(t.Context(), "postgres://neo:s3cret@[::1", postgres.Options{})
	if err == nil || !strings.Contains(err.Error(), "NEO_DATABASE_URL") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Open(malformed URL) = %v, want it to name NEO_DATABASE_URL and not the password", err)
	}
	if got := postgres.Describe("postgres://neo:s3cret@db.internal:5432/neobot?sslmode=require"); got != "db.internal:5432/neobot" {
		t.Errorf("Describe = %q, want host and database only", got)
	}
}

// TestInstancesJournalOnce: an event delivered to two instances at once
// is journaled by exactly one of them.
func TestInstancesJournalOnce(t *testing.T) {
	url := pgtest.Database(t)
	a, b := openURL(t, url, postgres.Options{}), openURL(t, url, postgres.Options{})
	const events = 100
	var fresh atomic.Int64
	var wg sync.WaitGroup
	for i := range events {
		for _, db := range []*postgres.DB{a, b} {
			wg.Go(func() {
				in := core.Inbound{Thread: core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: fmt.Sprint(i % 7)}, EventID: fmt.Sprint("Ev", i)}
				ok, err := db.JournalInbound(context.Background(), in)
				if err != nil {
					t.Error(err)
				}
				if ok {
					fresh.Add(1)
				}
			})
		}
	}
	wg.Wait()
	if fresh.Load() != events {
		t.Errorf("%d journal entries were fresh, want %d: each event once", fresh.Load(), events)
	}
	pending, err := b.PendingInbound(t.Context())
	if err != nil || len(pending) != events {
		t.Errorf("PendingInbound = %d, %v; want %d", len(pending), err, events)
	}
}
