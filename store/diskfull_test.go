package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/neobot/neobot/core"
	"syscall"
)

func TestDiskFullIsNamedAndEnds(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "neobot.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	enospc := &os.PathError{Op: "write", Path: db.Path(), Err: syscall.ENOSPC}
	for range 2 { // the second failure of an episode is not logged again
		err := db.diskFull(enospc)
		if !errors.Is(err, core.ErrDiskFull) || !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("diskFull(ENOSPC) = %v, want core.ErrDiskFull wrapping ENOSPC", err)
		}
	}
	if !db.DiskFull() {
		t.Errorf("DiskFull after ENOSPC = false")
	}
	other := errors.New("boom")
	if err := db.diskFull(other); err != other || !db.DiskFull() {
		t.Errorf("diskFull(other) = %v (full %v), want it unchanged and the episode still open", err, db.DiskFull())
	}
	if err := db.diskFull(nil); err != nil || db.DiskFull() {
		t.Errorf("a successful write leaves DiskFull = %v, want the episode ended", db.DiskFull())
	}
}

// TestFsyncByDefault: every write reaches the disk before it returns
// unless a benchmark asks otherwise.
func TestFsyncByDefault(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "neobot.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.bolt.NoSync {
		t.Errorf("a store opened with default options skips fsync")
	}
}
