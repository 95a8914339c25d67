package conversation

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
)

// aheadJournal is a memJournal that is an AheadJournal. With markLag, the
// message completed last still counts as pending ahead, as it does in
// PostgreSQL while its lazily queued mark commits.
type aheadJournal struct {
	*memJournal
	markLag bool
}

func (j *aheadJournal) JournalInboundAhead(ctx context.Context, in core.Inbound) (bool, []string, error) {
	j.mu.Lock()
	var ahead []string
	last := ""
	if n := len(j.doneOrder); j.markLag && n > 0 {
		last = j.doneOrder[n-1]
	}
	for _, p := range j.log {
		if p.Thread.Key() == in.Thread.Key() && (p.EventID == last || !j.done[eventKey(p)]) {
			ahead = append(ahead, p.EventID)
		}
	}
	j.mu.Unlock()
	fresh, err := j.JournalInbound(ctx, in)
	if !fresh {
		ahead = nil
	}
	return fresh, ahead, err
}

// countReads counts the journal reads the hubs make from now on.
func countReads(j *memJournal) *atomic.Int32 {
	var n atomic.Int32
	j.onPending = func() { n.Add(1) }
	return &n
}

// TestClusterSkipsTheReadOfAHeldThread: a thread this process holds,
// knowing what is pending in it since it claimed it, needs no read before
// each turn when the journal write says every message ahead is known here
// (with the marks of the turns before still committing, or not). A new
// thread is claimed before its first message is journaled, so even its
// first turn reads nothing.
func TestClusterSkipsTheReadOfAHeldThread(t *testing.T) {
	for _, lag := range []bool{false, true} {
		t.Run(map[bool]string{false: "marks committed", true: "marks committing"}[lag], func(t *testing.T) {
			r := &sayRunner{}
			j, _, hubs := aheadHub(t, r, time.Hour, lag)
			reads := countReads(j.memJournal)
			ids := []string{"A1", "A2", "A3", "A4", "A5", "A6"}
			for i, id := range ids {
				if _, err := hubs[0].Submit(t.Context(), msg("A", id, "hi")); err != nil {
					t.Fatal(err)
				}
				j.waitCompleted(t, i+1)
			}
			if got := r.calls(); !slices.Equal(got, ids) {
				t.Errorf("turns = %v, want %v", got, ids)
			}
			if n := reads.Load(); n != 0 {
				t.Errorf("journal reads = %d, want none", n)
			}
		})
	}
}

// TestClusterReadsWhenAMessageAheadIsUnknown: another process journaled
// a message into a thread held here, and its hand-over has not arrived.
// The next message journaled here finds it ahead, unknown: its turn reads
// the journal first, and runs the other message before its own, in
// journal order.
func TestClusterReadsWhenAMessageAheadIsUnknown(t *testing.T) {
	r := &sayRunner{}
	j, _, hubs := aheadHub(t, r, time.Hour, false)
	if _, err := hubs[0].Submit(t.Context(), msg("A", "A1", "hi")); err != nil {
		t.Fatal(err)
	}
	j.waitCompleted(t, 1)
	// Journaled by another process; its hand-over is still on its way.
	if _, err := j.JournalInbound(t.Context(), msg("A", "B1", "from elsewhere")); err != nil {
		t.Fatal(err)
	}
	if _, err := hubs[0].Submit(t.Context(), msg("A", "A2", "and here")); err != nil {
		t.Fatal(err)
	}
	j.waitCompleted(t, 3)
	if got := r.calls(); !slices.Equal(got, []string{"A1", "B1", "A2"}) {
		t.Errorf("turns = %v, want [A1 B1 A2]", got)
	}
}

// TestClusterFirstMessageFindsAnOrphanAhead: a thread with a message
// left pending by a process that died, and nobody holding it: the next
// message journaled here claims the thread first and finds that message
// ahead, unknown. Its turn reads the journal, and the orphan runs first,
// once.
func TestClusterFirstMessageFindsAnOrphanAhead(t *testing.T) {
	r := &sayRunner{}
	j, _, hubs := aheadHub(t, r, time.Hour, false)
	if _, err := j.JournalInbound(t.Context(), msg("A", "D1", "left by a process that died")); err != nil {
		t.Fatal(err)
	}
	reads := countReads(j.memJournal)
	if _, err := hubs[0].Submit(t.Context(), msg("A", "A1", "hi")); err != nil {
		t.Fatal(err)
	}
	j.waitCompleted(t, 2)
	if got := r.calls(); !slices.Equal(got, []string{"D1", "A1"}) {
		t.Errorf("turns = %v, want [D1 A1]", got)
	}
	if reads.Load() == 0 {
		t.Error("no journal read, with a message unknown here pending ahead")
	}
}

// TestClusterFirstMessageOfADuplicate: a message already journaled (a
// platform's redelivery) claims its thread first, finds itself a
// duplicate, and lets the claim go: the thread is free for the process
// the first delivery reached.
func TestClusterFirstMessageOfADuplicate(t *testing.T) {
	r := &sayRunner{}
	j, c, hubs := aheadHub(t, r, 0, false)
	c.mu.Lock()
	c.released = make(chan string, 4)
	c.mu.Unlock()
	in := msg("A", "A1", "hi")
	released := func(what string) {
		t.Helper()
		select {
		case key := <-c.released:
			if key != in.Thread.Key() {
				t.Fatalf("released %s, want %s", key, in.Thread.Key())
			}
		case <-waitCtx(t).Done():
			t.Fatalf("the claim was never let go %s", what)
		}
	}
	if _, err := hubs[0].Submit(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	j.waitCompleted(t, 1)
	released("after the turn")
	if fresh, err := hubs[0].Submit(t.Context(), in); fresh || err != nil {
		t.Fatalf("Submit(duplicate) = %v, %v; want not fresh", fresh, err)
	}
	released("after the duplicate")
	if got := r.calls(); !slices.Equal(got, []string{"A1"}) {
		t.Errorf("turns = %v, want A1 once", got)
	}
}

// TestClusterReadsAfterTheClaimWasLost: a message journaled while the
// thread was held and known here, whose turn starts after the claim was
// lost and taken again, reads the journal first: another process may
// have held the thread meanwhile.
func TestClusterReadsAfterTheClaimWasLost(t *testing.T) {
	held := newHeldRunner()
	j, c, hubs := aheadHub(t, held, time.Hour, false)
	h := hubs[0]
	a1 := msg("A", "A1", "hi")
	if _, err := h.Submit(t.Context(), a1); err != nil {
		t.Fatal(err)
	}
	first := held.next(t)
	// A2 is journaled while A1 runs: known ahead, so A2 could skip its read.
	if _, err := h.Submit(t.Context(), msg("A", "A2", "more")); err != nil {
		t.Fatal(err)
	}
	reads := countReads(j.memJournal)
	// The claim goes (A1's turn is stopped, A1 stays pending), and another
	// process completes A2 meanwhile.
	h.ClaimsLost([]string{a1.Thread.Key()})
	c.mu.Lock()
	delete(c.owner, a1.Thread.Key())
	c.mu.Unlock()
	<-first.ctx.Done()
	if err := j.CompleteInbound(t.Context(), a1.Thread, "A2"); err != nil {
		t.Fatal(err)
	}
	// A2 comes up here next: it claims the thread again and reads the
	// journal, which has A2 done and A1 pending: A1 runs, A2 does not.
	again := held.next(t)
	if id := again.turn.Inbound.EventID; id != "A1" {
		t.Errorf("turn after the lost claim = %s, want A1 resumed (A2 was completed elsewhere)", id)
	}
	again.reply <- nil
	j.waitCompleted(t, 2)
	if reads.Load() == 0 {
		t.Error("no journal read after the claim was lost")
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertIdle(t, h)
}

// aheadHub starts one hub, a member of a fake cluster, on an aheadJournal
// (markLag as given), with runner and linger.
func aheadHub(t *testing.T, runner Runner, linger time.Duration, markLag bool) (*aheadJournal, *fakeCluster, []*Hub) {
	t.Helper()
	j := &aheadJournal{memJournal: newMemJournal(), markLag: markLag}
	c := &fakeCluster{journal: j.memJournal, owner: map[string]*clusterMember{}}
	hubs := clusterHubs(t, c, Options{Runner: runner, Journal: j, Linger: linger, Now: func() time.Time { return epoch.Add(time.Minute) }}, newFakePlatform())
	startHubs(t, hubs)
	return j, c, hubs
}
