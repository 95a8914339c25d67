package store_test

import (
	"path/filepath"
	"testing"

	"github.com/neobot/neobot/store"
	"github.com/neobot/neobot/store/storetest"
)

// TestCrashChild is the child of TestCrashKeepsAcknowledgedEntries.
func TestCrashChild(t *testing.T) {
	storetest.CrashChild(t, func(path string) (storetest.Appender, error) {
		return store.Open(path, store.Options{Writers: 8})
	})
}

// TestCrashKeepsAcknowledgedEntries: SIGKILL mid-writes loses no
// acknowledged entry and tears none.
func TestCrashKeepsAcknowledgedEntries(t *testing.T) {
	storetest.Crash(t, "TestCrashChild",
		func(t *testing.T) string { return filepath.Join(t.TempDir(), "crash.db") },
		func(t *testing.T, path string) storetest.Backend { return openAt(t, path, store.Options{}) })
}
