package postgres_test

import (
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/store/postgres"
	"github.com/neobot/neobot/store/postgres/pgtest"
)

// TestCompleteInboundLater: an answered message's mark is not waited
// for, yet neither this instance nor the next to claim the thread runs
// the message again: PendingIn here leaves it out while its mark cannot
// commit (its row is locked), and Release commits the mark before the
// thread is let go.
func TestCompleteInboundLater(t *testing.T) {
	ctx := t.Context()
	url, a, b, ca, cb := twoInstances(t)
	th := thread("lazy")
	if ok, err := ca.Claim(ctx, th.Key()); !ok || err != nil {
		t.Fatalf("Claim = %v, %v", ok, err)
	}
	for _, ev := range []string{"E1", "E2"} {
		if _, err := a.JournalInbound(ctx, core.Inbound{Thread: th, EventID: ev}); err != nil {
			t.Fatal(err)
		}
	}
	pending := func(db *postgres.DB) []string {
		t.Helper()
		in, err := db.PendingIn(ctx, th.Key())
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range in {
			ids = append(ids, m.EventID)
		}
		return ids
	}

	// Hold E1's row, so that its mark waits.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	lock, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec(ctx, `SELECT 1 FROM neo_inbound WHERE event_id = 'E1' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	a.CompleteInboundLater(th, "E1")
	if got := pending(a); len(got) != 1 || got[0] != "E2" {
		t.Errorf("PendingIn here with E1's mark queued = %q, want [E2]", got)
	}
	if got := pending(b); len(got) != 2 {
		t.Errorf("PendingIn on another instance before the mark commits = %q, want [E1 E2]", got)
	}
	if err := lock.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ca.Release(ctx, th.Key()); err != nil {
		t.Fatal(err)
	}
	if got := pending(b); len(got) != 1 || got[0] != "E2" {
		t.Errorf("PendingIn on the instance claiming next = %q, want [E2]", got)
	}
	if ok, err := cb.Claim(ctx, th.Key()); !ok || err != nil {
		t.Errorf("Claim after Release = %v, %v", ok, err)
	}
}

// TestCompleteInboundLaterClockAhead: a message journaled by an instance
// whose clock runs ahead is still marked done by the one that answered
// it; else it would resume again and again.
func TestCompleteInboundLaterClockAhead(t *testing.T) {
	ctx := t.Context()
	url := pgtest.Database(t)
	ahead := func() time.Time { return time.Now().Add(time.Hour) }
	a, b := openURL(t, url, postgres.Options{}), openURL(t, url, postgres.Options{Now: ahead})
	th := thread("skew")
	if _, err := b.JournalInbound(ctx, core.Inbound{Thread: th, EventID: "E1"}); err != nil {
		t.Fatal(err)
	}
	ca := a.Claims()
	defer ca.Close()
	if ok, err := ca.Claim(ctx, th.Key()); !ok || err != nil {
		t.Fatalf("Claim = %v, %v", ok, err)
	}
	a.CompleteInboundLater(th, "E1")
	if err := ca.Release(ctx, th.Key()); err != nil {
		t.Fatal(err)
	}
	if in, err := b.PendingIn(ctx, th.Key()); err != nil || len(in) != 0 {
		t.Errorf("PendingIn after the mark = %d messages, %v; want none", len(in), err)
	}
}

// TestJournalInboundAhead: a fresh message comes back with its thread's
// messages pending before it, in the same statement: not itself, not
// another thread's, not one completed or whose mark is queued here; a
// duplicate with none.
func TestJournalInboundAhead(t *testing.T) {
	ctx := t.Context()
	db := openURL(t, pgtest.Database(t), postgres.Options{})
	th, other := thread("ahead"), thread("elsewhere")
	journal := func(in core.Thread, ev string, wantFresh bool, want ...string) {
		t.Helper()
		fresh, ahead, err := db.JournalInboundAhead(ctx, core.Inbound{Thread: in, EventID: ev})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(ahead)
		if fresh != wantFresh || !slices.Equal(ahead, want) {
			t.Errorf("journal %s = %v, %q; want %v, %q", ev, fresh, ahead, wantFresh, want)
		}
	}
	journal(th, "E1", true)
	journal(other, "X1", true)
	journal(th, "E2", true, "E1")
	journal(th, "E2", false)
	if err := db.CompleteInbound(ctx, th, "E1"); err != nil {
		t.Fatal(err)
	}
	journal(th, "E3", true, "E2")
	db.CompleteInboundLater(th, "E2") // queued or committed: either way not ahead
	journal(th, "E4", true, "E3")
}
