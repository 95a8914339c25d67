package postgres_test

import (
	"slices"
	"testing"

	"github.com/neobot/neobot/store/postgres"
	"github.com/neobot/neobot/store/postgres/pgtest"
)

// TestAppendEntriesLater: entries appended lazily are numbered at once,
// after the transcript read last; they commit with the thread's next
// append, in order before its entries, or when anything here reads or
// changes the thread's transcript, or at Close. With no number read,
// the append is durable at once.
func TestAppendEntriesLater(t *testing.T) {
	ctx := t.Context()
	url := pgtest.Database(t)
	a, b := openURL(t, url, postgres.Options{}), openURL(t, url, postgres.Options{})
	th := thread("lazy-append")
	stored := func(db *postgres.DB) []string {
		t.Helper()
		_, entries, err := db.LoadTranscript(ctx, th)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range entries {
			out = append(out, string(e.Data))
		}
		return out
	}
	want := func(db *postgres.DB, what string, w ...string) {
		t.Helper()
		if got := stored(db); !slices.Equal(got, w) {
			t.Errorf("%s: transcript = %q, want %q", what, got, w)
		}
	}

	// No number read here yet: stored at once.
	if last, err := a.AppendEntriesLater(ctx, th, []byte("u1")); err != nil || last != 1 {
		t.Fatalf("AppendEntriesLater before a read = %d, %v; want 1", last, err)
	}
	want(b, "another instance, after an append with no number read", "u1")
	if last, err := a.AppendEntries(ctx, th, []byte("a1")); err != nil || last != 2 {
		t.Fatalf("AppendEntries = %d, %v; want 2", last, err)
	}

	// Read, then lazy: numbered after the read, not stored yet; the
	// thread's next append carries it first.
	want(a, "this instance", "u1", "a1")
	if last, err := a.AppendEntriesLater(ctx, th, []byte("u2")); err != nil || last != 3 {
		t.Fatalf("AppendEntriesLater = %d, %v; want 3", last, err)
	}
	if last, err := a.AppendEntriesLater(ctx, th, []byte("u2b")); err != nil || last != 4 {
		t.Fatalf("AppendEntriesLater after a lazy one = %d, %v; want 4", last, err)
	}
	if last, err := a.AppendEntries(ctx, th, []byte("a2")); err != nil || last != 5 {
		t.Fatalf("AppendEntries after lazy ones = %d, %v; want 5", last, err)
	}
	want(b, "another instance, after the next append", "u1", "a1", "u2", "u2b", "a2")

	// A read here commits them first.
	want(a, "this instance", "u1", "a1", "u2", "u2b", "a2")
	if _, err := a.AppendEntriesLater(ctx, th, []byte("u3")); err != nil {
		t.Fatal(err)
	}
	want(a, "this instance, reading after a lazy append", "u1", "a1", "u2", "u2b", "a2", "u3")
	want(b, "another instance, after this one read", "u1", "a1", "u2", "u2b", "a2", "u3")

	// Something else appends between the read and the lazy append: the
	// entries still go in, in order, after it.
	if _, err := a.AppendEntriesLater(ctx, th, []byte("u4")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.AppendEntries(ctx, th, []byte("elsewhere")); err != nil {
		t.Fatal(err)
	}
	if last, err := a.AppendEntries(ctx, th, []byte("a4")); err != nil || last != 9 {
		t.Fatalf("AppendEntries after a foreign append = %d, %v; want 9", last, err)
	}
	want(b, "after a foreign append", "u1", "a1", "u2", "u2b", "a2", "u3", "elsewhere", "u4", "a4")

	// Close commits what is left.
	stored(a)
	if _, err := a.AppendEntriesLater(ctx, th, []byte("u5")); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	want(b, "after Close", "u1", "a1", "u2", "u2b", "a2", "u3", "elsewhere", "u4", "a4", "u5")
}

// TestAppendEntriesLaterThenDelete: a thread deleted while entries of
// its wait to commit stays deleted (they commit first, and go with it).
func TestAppendEntriesLaterThenDelete(t *testing.T) {
	ctx := t.Context()
	url := pgtest.Database(t)
	db := openURL(t, url, postgres.Options{})
	th := thread("lazy-delete")
	if _, _, err := db.LoadTranscript(ctx, th); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendEntriesLater(ctx, th, []byte("u1")); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteThread(ctx, th); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if known, err := openURL(t, url, postgres.Options{}).ThreadKnown(ctx, th); err != nil || known {
		t.Errorf("ThreadKnown after the delete = %v, %v; want false", known, err)
	}
}
