package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/store"
)

// Sweeper is a backend with retention.
type Sweeper interface {
	Backend
	Sweep(ctx context.Context, now time.Time) (store.SweepStats, error)
}

// SweepOpener returns a new, empty backend whose clock is now, keeping
// what ret says.
type SweepOpener func(t *testing.T, now func() time.Time, ret store.Retention) Sweeper

// RunSweep checks retention: what each sweep drops, as days pass, and
// that work in flight survives every sweep.
func RunSweep(t *testing.T, open SweepOpener) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	clock := coretest.NewClock(t0)
	db := open(t, clock.Now, store.Retention{ThreadIdle: 30 * 24 * time.Hour})
	day := 24 * time.Hour
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	mustJournal := func(in core.Inbound) {
		t.Helper()
		_, err := db.JournalInbound(ctx, in)
		must(err)
	}

	// Day 0: an old thread with a finished and an in-flight delegation, a
	// completed and a pending message, and a gate.
	old, fresh := thread("old"), thread("fresh")
	_, err := db.AppendEntries(ctx, old, []byte("x"))
	must(err)
	must(db.SaveDelegation(ctx, core.Delegation{Thread: old, CallID: "done", IntentID: "i1", Started: t0}))
	must(db.SaveDelegation(ctx, core.Delegation{Thread: old, CallID: "live", IntentID: "i2", Started: t0}))
	must(db.FinishDelegation(ctx, old, "done"))
	mustJournal(core.Inbound{Thread: old, EventID: "E1"})
	must(db.CompleteInbound(ctx, old, "E1"))
	mustJournal(core.Inbound{Thread: old, EventID: "E2"})
	must(db.CreateGate(ctx, core.Gate{Token: "g1", IntentID: "i1", NodeID: "n", Binding: "b1", Thread: old, Expires: t0.Add(time.Hour)}))
	// An approved call that ended, and one that began and never ended
	// (neobot died during it).
	for _, key := range []string{"call-ended", "call-cut"} {
		_, err := db.BeginCall(ctx, key, "run1")
		must(err)
	}
	must(db.EndCall(ctx, "call-ended"))
	// A rating in each thread: it holds the thread's question and answer.
	for _, th := range []core.Thread{old, fresh} {
		must(db.SaveRating(ctx, core.Rating{Thread: th, Turn: "E1", User: "U1", At: t0, Up: true, Question: "q", Answer: "a"}))
	}

	// A file sent in the old thread, and an upload never sent.
	must(db.PutFile(ctx, core.StoredFile{ID: "f-old", Owner: "U1", Thread: old.Key(), Name: "a.txt", Data: []byte("a"), At: t0}))
	must(db.PutFile(ctx, core.StoredFile{ID: "f-unsent", Owner: "U1", Name: "b.txt", Data: []byte("b"), At: t0}))

	// Day 2: the dedupe key of the completed message has expired, and so
	// has the upload never sent.
	clock.Advance(2 * day)
	st, err := db.Sweep(ctx, clock.Now())
	if err != nil || st != (store.SweepStats{EventIDs: 1, Files: 1}) {
		t.Fatalf("Sweep(day 2) = %+v, %v; want 1 event ID and the upload never sent", st, err)
	}
	// Day 20: a fresh thread is active; the gate and the finished
	// delegation are past the 7-day default.
	clock.Advance(18 * day)
	_, err = db.AppendEntries(ctx, fresh, []byte("y"))
	must(err)
	must(db.PutFile(ctx, core.StoredFile{ID: "f-fresh", Owner: "U1", Thread: fresh.Key(), Name: "c.txt", Data: []byte("c"), At: clock.Now()}))
	st, err = db.Sweep(ctx, clock.Now())
	if err != nil || st != (store.SweepStats{Gates: 1, Delegations: 1, Calls: 1}) {
		t.Fatalf("Sweep(day 20) = %+v, %v; want 1 gate, 1 delegation, 1 ended call", st, err)
	}
	if _, err := db.GateBound(ctx, "b1"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("GateBound(swept) = %v, want ErrNotFound", err)
	}
	// Day 31: the old thread has been idle 31 days, the fresh one 11.
	clock.Advance(11 * day)
	st, err = db.Sweep(ctx, clock.Now())
	if err != nil || st != (store.SweepStats{Threads: 1, Ratings: 1, Files: 1}) {
		t.Fatalf("Sweep(day 31) = %+v, %v; want 1 thread, its rating and its file", st, err)
	}
	for id, want := range map[string]bool{"f-old": false, "f-unsent": false, "f-fresh": true} {
		if _, err := db.File(ctx, id); (err == nil) != want {
			t.Errorf("File(%s) after the sweeps = %v, want it kept: %v", id, err, want)
		}
	}
	if rs, err := db.Ratings(ctx, time.Time{}); err != nil || len(rs) != 1 || rs[0].Thread != fresh {
		t.Errorf("Ratings after the sweep = %+v, %v; want the fresh thread's alone", rs, err)
	}
	for _, tc := range []struct {
		t    core.Thread
		want bool
	}{{old, false}, {fresh, true}} {
		if got, _ := db.ThreadKnown(ctx, tc.t); got != tc.want {
			t.Errorf("ThreadKnown(%s) after sweep = %v, want %v", tc.t.ID, got, tc.want)
		}
	}
	// The swept thread's transcript went with it: a new message starts
	// it again at entry 1.
	if _, live, err := db.LoadTranscript(ctx, old); err != nil || len(live) != 0 {
		t.Errorf("transcript of the swept thread = %d entries, %v; want none", len(live), err)
	}
	if seq, err := db.AppendEntries(ctx, old, []byte("again")); err != nil || seq != 1 {
		t.Errorf("AppendEntries to the swept thread = %d, %v; want entry 1", seq, err)
	}
	// Work in flight survives every sweep.
	if ds, _ := db.Delegations(ctx); len(ds) != 1 || ds[0].CallID != "live" {
		t.Errorf("Delegations after sweeps = %+v, want the live one", ds)
	}
	if p, _ := db.PendingInbound(ctx); len(p) != 1 || p[0].EventID != "E2" {
		t.Errorf("PendingInbound after sweeps = %+v, want E2", p)
	}
	if got, err := db.BeginCall(ctx, "call-cut", "run2"); err != nil || got.Fresh {
		t.Errorf("BeginCall(call-cut) after sweeps = %+v, %v; want it still recorded: it may have run", got, err)
	}
	if got, err := db.BeginCall(ctx, "call-ended", "run2"); err != nil || !got.Fresh {
		t.Errorf("BeginCall(call-ended) after sweeps = %+v, %v; want it dropped", got, err)
	}
}
