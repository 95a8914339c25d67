package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/governance"
	"github.com/neobot/neobot/store"
	"github.com/neobot/neobot/store/storetest"
)

func openTemp(t testing.TB, opts store.Options) *store.DB {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "neobot.db"), opts)
}

// openAt opens the store at path, closed when the test ends.
func openAt(t testing.TB, path string, opts store.Options) *store.DB {
	t.Helper()
	db, err := store.Open(path, opts)
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

func TestMCPTokens(t *testing.T) {
	storetest.RunMCPTokens(t, func(t *testing.T) storetest.MCPTokens { return openTemp(t, store.Options{}) })
}

func TestAdminSessions(t *testing.T) {
	storetest.RunAdminSessions(t, func(t *testing.T) storetest.AdminSessions { return openTemp(t, store.Options{}) })
}

func TestSlackInstalls(t *testing.T) {
	storetest.RunSlackInstalls(t, func(t *testing.T) storetest.SlackInstalls { return openTemp(t, store.Options{}) })
}

func TestPlaceSettings(t *testing.T) {
	storetest.RunPlaceSettings(t, func(t *testing.T) governance.Store { return openTemp(t, store.Options{}) })
}

// TestLedgerErrorsSayWhich checks that ledger failures are wrapped with the
// store and the delegation they concern, and still match core.ErrNotFound.
func TestLedgerErrorsSayWhich(t *testing.T) {
	db := openTemp(t, store.Options{})
	th := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1.1"}
	tests := []struct {
		name string
		call func() error
	}{
		{"DelegationFor", func() error { _, err := db.DelegationFor(context.Background(), th, "call_9"); return err }},
		{"FinishDelegation", func() error { return db.FinishDelegation(context.Background(), th, "call_9") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, core.ErrNotFound) {
				t.Fatalf("%s(unknown) = %v, want core.ErrNotFound", tt.name, err)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "store: ") || !strings.Contains(msg, "call_9") {
				t.Errorf("%s(unknown) = %q, want it to name the store and the call", tt.name, msg)
			}
		})
	}
}

// TestCompleteLaterSurvivesClose: a deferred completion commits by Close,
// so a clean shutdown never resumes an answered message.
func TestCompleteLaterSurvivesClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "neobot.db")
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	th := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1.1"}
	in := core.Inbound{Thread: th, EventID: "E1", Text: "hi"}
	if _, err := db.JournalInbound(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	db.CompleteInboundLater(th, "E1")
	db.CompleteInboundLater(th, "E-never-journaled") // not an error worth more than nothing
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pending, err := db.PendingInbound(context.Background())
	if err != nil || len(pending) != 0 {
		t.Errorf("pending after a deferred completion and Close = %+v, %v; want none", pending, err)
	}
}
