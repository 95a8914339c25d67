package store

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/memory"
	bolt "go.etcd.io/bbolt"
)

// entries returns the data of t's live entries, in order, with their
// numbers.
func entries(t *testing.T, db *DB, th core.Thread) ([]uint64, []string) {
	t.Helper()
	_, es, err := db.LoadTranscript(context.Background(), th)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	var data []string
	for _, e := range es {
		seqs = append(seqs, e.Seq)
		data = append(data, string(e.Data))
	}
	return seqs, data
}

// TestAppendEntriesLater: lazy entries are numbered at once, after the
// thread's stored and lazily appended entries; they commit before the next
// durable write, in order, and by Close; the numbering survives a reopen.
func TestAppendEntriesLater(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "neobot.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.group.lazyDelay = time.Hour // only a write or Close commits them
	a := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1.1"}
	b := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "2.2"}
	if last, err := db.AppendEntries(ctx, a, []byte("a1")); err != nil || last != 1 {
		t.Fatalf("AppendEntries = %d, %v; want 1", last, err)
	}
	if last, err := db.AppendEntriesLater(ctx, a, []byte("a2"), []byte("a3")); err != nil || last != 3 {
		t.Fatalf("AppendEntriesLater = %d, %v; want 3", last, err)
	}
	if last, err := db.AppendEntriesLater(ctx, a, []byte("a4")); err != nil || last != 4 {
		t.Fatalf("AppendEntriesLater after a lazy one = %d, %v; want 4", last, err)
	}
	if _, data := entries(t, db, a); len(data) != 1 {
		t.Fatalf("before any write, entries = %q; want only a1", data)
	}
	// A durable write anywhere carries them along.
	if _, err := db.AppendEntries(ctx, b, []byte("b1")); err != nil {
		t.Fatal(err)
	}
	if seqs, data := entries(t, db, a); strings.Join(data, " ") != "a1 a2 a3 a4" || seqs[3] != 4 {
		t.Fatalf("after a durable write, entries = %q %v; want a1-a4 numbered 1-4", data, seqs)
	}
	if last, err := db.AppendEntries(ctx, a, []byte("a5")); err != nil || last != 5 {
		t.Fatalf("AppendEntries after the lazy ones = %d, %v; want 5", last, err)
	}
	if last, err := db.AppendEntriesLater(ctx, a, []byte("a6")); err != nil || last != 6 {
		t.Fatalf("AppendEntriesLater = %d, %v; want 6", last, err)
	}
	db = reopen(t, db, path)
	defer db.Close()
	if _, data := entries(t, db, a); strings.Join(data, " ") != "a1 a2 a3 a4 a5 a6" {
		t.Fatalf("after Close and a reopen, entries = %q", data)
	}
	if last, err := db.AppendEntriesLater(ctx, a, []byte("a7")); err != nil || last != 7 {
		t.Errorf("AppendEntriesLater after a reopen = %d, %v; want 7", last, err)
	}
	if _, err := db.AppendEntriesLater(ctx, core.Thread{Platform: "slack"}, []byte("x")); err == nil {
		t.Error("AppendEntriesLater(an invalid thread) = nil, want an error")
	}
	if _, err := db.AppendEntriesLater(ctx, a); err == nil {
		t.Error("AppendEntriesLater(no entries) = nil, want an error")
	}
}

// TestAppendEntriesLaterRefusedAfterARace: lazy entries numbered while
// another append to the thread was still on its way are refused when they
// commit, and the failure is reported; the other append stands.
func TestAppendEntriesLaterRefusedAfterARace(t *testing.T) {
	ctx := context.Background()
	db := openTempInternal(t)
	var mu sync.Mutex
	var failures []error
	db.group.lazyFailed = func(err error) { mu.Lock(); failures = append(failures, err); mu.Unlock() }
	th := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1.1"}

	// Hold a commit open, queue a durable append behind it, then number
	// lazy entries while that append is not yet stored.
	holding, release := make(chan struct{}), make(chan struct{})
	go func() {
		_ = db.group.write(func(*bolt.Tx) error { close(holding); <-release; return nil })
	}()
	<-holding
	appended := make(chan error, 1)
	go func() {
		_, err := db.AppendEntries(ctx, th, []byte("durable"))
		appended <- err
	}()
	for !queuedWrites(db, 1) {
		time.Sleep(time.Millisecond) // waiting for the append to queue, not timing it
	}
	if last, err := db.AppendEntriesLater(ctx, th, []byte("lazy")); err != nil || last != 1 {
		t.Fatalf("AppendEntriesLater = %d, %v; want 1 (numbered from what is stored)", last, err)
	}
	close(release)
	if err := <-appended; err != nil {
		t.Fatal(err)
	}
	if err := db.group.flush(); err != nil {
		t.Fatal(err)
	}
	if _, data := entries(t, db, th); strings.Join(data, " ") != "durable" {
		t.Errorf("entries = %q, want only the durable one", data)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failures) != 1 || !strings.Contains(failures[0].Error(), "appended meanwhile") {
		t.Errorf("failures reported = %v, want the lazy entries refused", failures)
	}
	if _, ok := db.numbered[th.Key()]; ok {
		t.Error("the refused entries' numbering is still held")
	}
}

// reopen closes db, committing what it deferred, and opens path again.
func reopen(t *testing.T, db *DB, path string) *DB {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// queuedWrites reports whether at least n writers wait in db's group.
func queuedWrites(db *DB, n int) bool {
	db.group.mu.Lock()
	defer db.group.mu.Unlock()
	waiting := 0
	for _, w := range db.group.queue {
		if w.done != nil {
			waiting++
		}
	}
	return waiting >= n
}

// openTempInternal opens a store in a temporary directory, closed when the
// test ends.
func openTempInternal(t *testing.T) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "neobot.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// TestJournalInboundLater: a message is fresh or a duplicate at once; its
// record commits with the next durable write, or alone within
// JournalDelay, and durable hears so; until then it is a duplicate to
// both journal calls, and after a reopen it is pending.
func TestJournalInboundLater(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "neobot.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	th := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1.1"}
	in := core.Inbound{Thread: th, User: "U1", Text: "hi", EventID: "Ev1"}
	wait := func(durable <-chan error) {
		t.Helper()
		select {
		case err := <-durable:
			if err != nil {
				t.Fatalf("durable = %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the record never committed")
		}
	}

	// Alone: it commits within JournalDelay of its own accord.
	fresh, durable, err := db.JournalInboundLater(ctx, in)
	if err != nil || !fresh {
		t.Fatalf("JournalInboundLater = %v, %v; want fresh", fresh, err)
	}
	if again, _, err := db.JournalInboundLater(ctx, in); again || err != nil {
		t.Errorf("JournalInboundLater(same event, on its way) = %v, %v; want a duplicate", again, err)
	}
	if again, err := db.JournalInbound(ctx, in); again || err != nil {
		t.Errorf("JournalInbound(same event, on its way) = %v, %v; want a duplicate", again, err)
	}
	wait(durable)
	if again, _, err := db.JournalInboundLater(ctx, in); again || err != nil {
		t.Errorf("JournalInboundLater(same event, stored) = %v, %v; want a duplicate", again, err)
	}

	// With company: the turn's first write carries it.
	db.group.lazyDelay = time.Hour
	in2 := in
	in2.EventID = "Ev2"
	fresh, durable, err = db.JournalInboundLater(ctx, in2)
	if err != nil || !fresh {
		t.Fatalf("JournalInboundLater(Ev2) = %v, %v; want fresh", fresh, err)
	}
	if _, err := db.AppendEntries(ctx, th, []byte("answer")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-durable:
		if err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatal("a durable write returned before the record queued ahead of it committed")
	}
	if known, err := db.ThreadKnown(ctx, th); err != nil || !known {
		t.Errorf("ThreadKnown = %v, %v after the record committed", known, err)
	}
	db = reopen(t, db, path)
	defer db.Close()
	pending, err := db.PendingInbound(ctx)
	if err != nil || len(pending) != 2 || pending[0].EventID != "Ev1" || pending[1].EventID != "Ev2" {
		t.Errorf("PendingInbound after a reopen = %+v, %v; want Ev1 and Ev2", pending, err)
	}
	if _, _, err := db.JournalInboundLater(ctx, core.Inbound{Thread: th}); err == nil {
		t.Error("JournalInboundLater(no event ID) = nil error, want one")
	}
}

// TestJournalInboundLaterFailureToldOnce: a journal record that fails to
// commit reaches its caller, who reports it; the store does not log it as
// a deferred write failing besides.
func TestJournalInboundLaterFailureToldOnce(t *testing.T) {
	ctx := context.Background()
	db := openTempInternal(t)
	var mu sync.Mutex
	var logged []error
	db.group.lazyFailed = func(err error) { mu.Lock(); logged = append(logged, err); mu.Unlock() }
	in := core.Inbound{Thread: core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1.1"}, User: "U1", Text: "hi", EventID: "Ev1"}

	// Another writer journals the same event first, in the commit the
	// lazy record waits behind.
	holding, release := make(chan struct{}), make(chan struct{})
	go func() {
		_ = db.group.write(func(*bolt.Tx) error { close(holding); <-release; return nil })
	}()
	<-holding
	first := make(chan error, 1)
	go func() {
		first <- db.group.write(func(tx *bolt.Tx) error {
			_, err := db.journal(tx, in, inboundKey(in.Thread.Platform, in.EventID), db.now())
			return err
		})
	}()
	for !queuedWrites(db, 1) {
		time.Sleep(time.Millisecond) // waiting for the write to queue, not timing it
	}
	fresh, durable, err := db.JournalInboundLater(ctx, in)
	if err != nil || !fresh {
		t.Fatalf("JournalInboundLater = %v, %v; want fresh (nothing stored yet)", fresh, err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-durable; err == nil || !strings.Contains(err.Error(), "journaled meanwhile") {
		t.Fatalf("durable = %v, want the record refused", err)
	}
	if err := db.group.flush(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logged) != 0 {
		t.Errorf("the store logged %v as well; the caller reports it", logged)
	}
}

// TestWriteMemoriesLaterHeld: a write-back is held, not carried by the
// next durable write of something else; a durable memory write commits
// it first, in order (a forget after a write-back leaves the record
// gone); Close commits what is still held.
func TestWriteMemoriesLaterHeld(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "neobot.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.group.lazyDelay = time.Hour // held for half an hour: nothing ripens here
	scope := memory.Scope{Platform: "slack", Workspace: "T1", Channel: "C1"}
	rec := func(id string) memory.Record {
		return memory.Record{ID: id, Scope: scope, Kind: memory.KindTurn, Text: "excerpt " + id}
	}
	stored := func(db *DB) []string {
		t.Helper()
		var ids []string
		if err := db.ScanMemories(ctx, func(r memory.Record) error { ids = append(ids, r.ID); return nil }); err != nil {
			t.Fatal(err)
		}
		slices.Sort(ids)
		return ids
	}
	th := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1.1"}

	if err := db.WriteMemoriesLater([]memory.Record{rec("m1")}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendEntries(ctx, th, []byte("answer")); err != nil {
		t.Fatal(err)
	}
	if got := stored(db); len(got) != 0 {
		t.Errorf("after a transcript write, stored memories = %v; want the write-back still held", got)
	}
	if err := db.WriteMemoriesLater([]memory.Record{rec("m2")}, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.WriteMemories(ctx, []memory.Record{rec("m3")}, []string{"m1"}); err != nil {
		t.Fatal(err)
	}
	if got, want := stored(db), []string{"m2", "m3"}; !slices.Equal(got, want) {
		t.Errorf("after a durable memory write, stored = %v; want %v (m1 written back, then forgotten)", got, want)
	}
	if err := db.WriteMemoriesLater([]memory.Record{rec("m4")}, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got, want := stored(db), []string{"m2", "m3", "m4"}; !slices.Equal(got, want) {
		t.Errorf("after Close and a reopen, stored = %v; want %v", got, want)
	}
}
