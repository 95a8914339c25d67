package conversation

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
)

// fakeCluster is the claims table and hand-over of processes sharing one
// journal; each hub gets a member.
type fakeCluster struct {
	journal *memJournal
	mu      sync.Mutex
	owner   map[string]*clusterMember
	members []*clusterMember
	// afterPending, when set, runs once, right after the next Pending
	// read the journal.
	afterPending func()
	// released, when set, hears each thread a member let go.
	released chan string
}

type clusterMember struct {
	c   *fakeCluster
	hub *Hub
}

// clusterHubs makes one hub per platform, each a member of c with opts
// (its Cluster that member), closed when the test ends. They are not
// started.
func clusterHubs(t *testing.T, c *fakeCluster, opts Options, plats ...*fakePlatform) []*Hub {
	t.Helper()
	var hubs []*Hub
	for _, p := range plats {
		m := &clusterMember{c: c}
		o := opts
		o.Cluster = m
		h := New(o)
		h.Attach("test", p)
		m.hub = h
		c.members = append(c.members, m)
		hubs = append(hubs, h)
		t.Cleanup(func() { _ = h.Close(context.Background()) })
	}
	return hubs
}

// startHubs starts each hub in turn.
func startHubs(t *testing.T, hubs []*Hub) {
	t.Helper()
	for _, h := range hubs {
		if err := h.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}

func (m *clusterMember) Claim(ctx context.Context, thread string) (bool, error) {
	m.c.mu.Lock()
	defer m.c.mu.Unlock()
	if o := m.c.owner[thread]; o != nil && o != m {
		return false, nil
	}
	m.c.owner[thread] = m
	return true, nil
}

func (m *clusterMember) Release(ctx context.Context, thread string) error {
	m.c.mu.Lock()
	defer m.c.mu.Unlock()
	if m.c.owner[thread] == m {
		delete(m.c.owner, thread)
		if m.c.released != nil {
			m.c.released <- thread
		}
	}
	return nil
}

func (m *clusterMember) Hand(ctx context.Context, thread string) error {
	m.c.mu.Lock()
	others := slices.DeleteFunc(slices.Clone(m.c.members), func(o *clusterMember) bool { return o == m })
	m.c.mu.Unlock()
	for _, o := range others {
		go o.hub.Handed(context.Background(), thread) //nolint:errcheck // the fake journal does not fail
	}
	return nil
}

func (m *clusterMember) Pending(ctx context.Context, thread string) ([]core.Inbound, error) {
	all, err := m.c.journal.PendingInbound(ctx)
	m.c.mu.Lock()
	after := m.c.afterPending
	m.c.afterPending = nil
	m.c.mu.Unlock()
	if after != nil {
		after()
	}
	return slices.DeleteFunc(all, func(in core.Inbound) bool { return in.Thread.Key() != thread }), err
}

// orderRunner records each thread's turns in order, and fails the test
// when one thread's turns overlap, in any process.
type orderRunner struct {
	t      *testing.T
	mu     sync.Mutex
	active map[string]string // thread -> event running
	order  map[string][]string
	runs   map[string]int
}

func (r *orderRunner) Run(ctx context.Context, turn core.Turn) error {
	key := turn.Inbound.Thread.Key()
	r.mu.Lock()
	if ev, busy := r.active[key]; busy {
		r.t.Errorf("thread %s runs %s while %s runs", key, turn.Inbound.EventID, ev)
	}
	r.active[key] = turn.Inbound.EventID
	r.order[key] = append(r.order[key], turn.Inbound.EventID)
	r.runs[turn.Inbound.EventID]++
	r.mu.Unlock()
	runtime.Gosched() // let the other hub try the thread meanwhile
	r.mu.Lock()
	delete(r.active, key)
	r.mu.Unlock()
	return nil
}

// TestClusterKeepsAMessageQueuedDuringTheJournalRead: a message submitted
// while a turn's claim reads the thread's journal is not in what that
// read returned, and was not completed elsewhere: it runs. It was taken
// for one another process had completed, and lost until a restart
// (TestClusterRunsEachThreadOnceInOrder, under load).
func TestClusterKeepsAMessageQueuedDuringTheJournalRead(t *testing.T) {
	j := newMemJournal()
	c := &fakeCluster{journal: j, owner: map[string]*clusterMember{}}
	r := &sayRunner{}
	// The claim lingers: released at once, the thread's journal would be
	// read again on the release, and the message found there.
	hubs := clusterHubs(t, c, Options{Runner: r, Journal: j, Linger: time.Hour, Now: func() time.Time { return epoch.Add(time.Minute) }}, newFakePlatform())
	startHubs(t, hubs)
	h := hubs[0]
	c.afterPending = func() {
		if _, err := h.Submit(t.Context(), msg("A", "A2", "and another thing")); err != nil {
			t.Error(err)
		}
	}
	if _, err := h.Submit(t.Context(), msg("A", "A1", "hi")); err != nil {
		t.Fatal(err)
	}
	j.waitCompleted(t, 2)
	if got := r.calls(); !slices.Equal(got, []string{"A1", "A2"}) {
		t.Errorf("turns = %v, want [A1 A2]", got)
	}
}

// TestClusterRunsEachThreadOnceInOrder: two hubs share a journal; the
// messages of 20 threads arrive at either, alternately. Every message
// runs once, a thread's turns never overlap across the hubs, and each
// thread's turns run in the order its messages were journaled: with
// claims released as soon as a thread is idle (each turn may move), and
// kept (every message the other hub gets is handed over).
func TestClusterRunsEachThreadOnceInOrder(t *testing.T) {
	for _, linger := range []time.Duration{0, time.Hour} {
		for _, ahead := range []bool{false, true} {
			t.Run(fmt.Sprint("linger=", linger, "/ahead=", ahead), func(t *testing.T) { clusterOnceInOrder(t, linger, ahead) })
		}
	}
}

// clusterOnceInOrder drives two hubs; with ahead, their journal is an
// AheadJournal (PostgreSQL's kind), so threads are claimed before their
// messages are journaled and held threads skip their reads.
func clusterOnceInOrder(t *testing.T, linger time.Duration, ahead bool) {
	j := newMemJournal()
	var journal Journal = j
	if ahead {
		journal = &aheadJournal{memJournal: j}
	}
	c := &fakeCluster{journal: j, owner: map[string]*clusterMember{}}
	runner := &orderRunner{t: t, active: map[string]string{}, order: map[string][]string{}, runs: map[string]int{}}
	hubs := clusterHubs(t, c, Options{Runner: runner, Journal: journal, Linger: linger, MaxConcurrent: 8, Now: func() time.Time { return epoch.Add(time.Minute) }},
		newFakePlatform(), newFakePlatform())
	startHubs(t, hubs)
	const threads, perThread = 20, 5
	want := map[string][]string{}
	for k := range perThread {
		for i := range threads {
			in := msg(fmt.Sprint("t", i), fmt.Sprintf("t%d-m%d", i, k), "hello")
			in.At = epoch.Add(time.Duration(k) * time.Second)
			want[in.Thread.Key()] = append(want[in.Thread.Key()], in.EventID)
			if _, err := hubs[(i+k)%2].Submit(t.Context(), in); err != nil {
				t.Fatal(err)
			}
		}
	}
	j.waitCompleted(t, threads*perThread)
	runner.mu.Lock()
	defer runner.mu.Unlock()
	for ev, n := range runner.runs {
		if n != 1 {
			t.Errorf("%s ran %d times, want once", ev, n)
		}
	}
	for key, w := range want {
		if got := runner.order[key]; !slices.Equal(got, w) {
			t.Errorf("thread %s ran %v, want %v", key, got, w)
		}
	}
}

// TestClusterStopReachesTheOwner: "stop" delivered to the process that
// does not run the thread cancels the turn running in the other one.
func TestClusterStopReachesTheOwner(t *testing.T) {
	j := newMemJournal()
	c := &fakeCluster{journal: j, owner: map[string]*clusterMember{}}
	started := make(chan struct{}, 1)
	runner := runFunc(func(ctx context.Context, turn core.Turn) error {
		started <- struct{}{}
		<-ctx.Done() // a long turn, until stopped
		return ctx.Err()
	})
	plats := []*fakePlatform{newFakePlatform(), newFakePlatform()}
	hubs := clusterHubs(t, c, Options{Runner: runner, Journal: j, Linger: time.Hour, Now: func() time.Time { return epoch.Add(time.Minute) }}, plats...)
	startHubs(t, hubs)
	ask := msg("t1", "ask", "do the long thing")
	if _, err := hubs[0].Submit(t.Context(), ask); err != nil {
		t.Fatal(err)
	}
	<-started
	stop := msg("t1", "stop", "stop")
	if _, err := hubs[1].Submit(t.Context(), stop); err != nil {
		t.Fatal(err)
	}
	j.waitCompleted(t, 2)
	if !j.completed(ask) || !j.completed(stop) {
		t.Errorf("completed %v, want the stopped turn and the stop", j.doneOrder)
	}
	notices, err := plats[0].rec(ask.Thread).WaitNotices(waitCtx(t), 1)
	if err != nil || notices[0] != stopText(true, 0) {
		t.Errorf("the owner's notices = %q, %v; want %q", notices, err, stopText(true, 0))
	}
}

// stopRule lets everyone stop a turn but bob (refused) and carol (whose
// check fails), as a turn holding a task only its person may stop.
type stopRule struct{}

func (stopRule) MayStop(_ context.Context, _ core.Thread, user string, _ []string) (bool, error) {
	switch user {
	case "bob":
		return false, nil
	case "carol":
		return false, errors.New("the database did not answer")
	}
	return true, nil
}

// TestClusterStopCheckedByTheOwner: a stop delivered to the process that
// does not run the thread is checked again by the one that does, which
// alone knows what its turn holds. Bob's is refused and carol's cannot be
// checked: each is settled, its author told why, and the turn runs on. A
// stop let through as an admin's where it arrived stops it.
func TestClusterStopCheckedByTheOwner(t *testing.T) {
	j := newMemJournal()
	c := &fakeCluster{journal: j, owner: map[string]*clusterMember{}}
	started := make(chan struct{}, 1)
	runner := runFunc(func(ctx context.Context, turn core.Turn) error {
		started <- struct{}{}
		<-ctx.Done() // a long turn, until stopped
		return ctx.Err()
	})
	plats := []*fakePlatform{newFakePlatform(), newFakePlatform()}
	hubs := clusterHubs(t, c, Options{Runner: runner, Journal: j, Stops: stopRule{}, Linger: time.Hour, Now: func() time.Time { return epoch.Add(time.Minute) }}, plats...)
	startHubs(t, hubs)
	ask := msg("t1", "ask", "do the long thing")
	if _, err := hubs[0].Submit(t.Context(), ask); err != nil {
		t.Fatal(err)
	}
	<-started
	stops := []struct {
		user   string
		admin  bool
		notice string
	}{
		{"bob", false, textStopRefused},
		{"carol", false, textStopUnchecked},
		{"bob", true, stopText(true, 0)},
	}
	for i, tc := range stops {
		stop := msg("t1", fmt.Sprintf("stop%d", i), "stop")
		stop.User, stop.AdminStop = tc.user, tc.admin
		if _, err := hubs[1].Submit(t.Context(), stop); err != nil {
			t.Fatal(err)
		}
		notices, err := plats[0].rec(ask.Thread).WaitNotices(waitCtx(t), i+1)
		if err != nil || notices[i] != tc.notice {
			t.Fatalf("stop %d (%s, admin %v): the owner's notices = %q, %v; want %q last", i, tc.user, tc.admin, notices, err, tc.notice)
		}
		settled := i + 1 // the refused stops before, and this one
		if tc.admin {
			settled++ // and the stopped turn
		}
		j.waitCompleted(t, settled)
		if !j.completed(stop) {
			t.Errorf("stop %d (%s) was not settled", i, tc.user)
		}
		if done := j.completed(ask); done != tc.admin {
			t.Errorf("after stop %d (%s, admin %v) the turn ended: %v", i, tc.user, tc.admin, done)
		}
	}
}

// TestClusterSettlesOnce: two processes start at once over a journal that
// holds a message too old to resume. Only the one that claims its thread
// settles it: one notice, not two. The other then adopts nothing.
func TestClusterSettlesOnce(t *testing.T) {
	j := newMemJournal()
	old := msg("t1", "old", "hello")
	old.At = epoch.Add(-48 * time.Hour)
	if _, err := j.JournalInbound(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	// Both starts read the journal before either settles anything.
	var reads sync.WaitGroup
	reads.Add(2)
	var calls atomic.Int32
	j.onPending = func() {
		if calls.Add(1) <= 2 {
			reads.Done()
			reads.Wait()
		}
	}
	c := &fakeCluster{journal: j, owner: map[string]*clusterMember{}}
	plats := []*fakePlatform{newFakePlatform(), newFakePlatform()}
	hubs := clusterHubs(t, c, Options{Runner: runFunc(func(context.Context, core.Turn) error { return nil }), Journal: j, Linger: time.Hour, Now: func() time.Time { return epoch }}, plats...)
	var wg sync.WaitGroup
	for _, h := range hubs {
		wg.Go(func() {
			if err := h.Start(t.Context()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	j.waitCompleted(t, 1)
	for _, h := range hubs {
		if err := h.Adopt(t.Context(), old.Thread.Key()); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range hubs {
		if err := h.Close(context.Background()); err != nil { // waits for every notice
			t.Fatal(err)
		}
	}
	n := len(plats[0].rec(old.Thread).Notices()) + len(plats[1].rec(old.Thread).Notices())
	if n != 1 {
		t.Errorf("notices for the expired message = %d, want 1", n)
	}
}

// TestClusterClaimLostStopsTheTurn: a process whose claims connection
// broke stops the turn it runs under the lost claim, leaving the message
// pending; the process that claims the thread next resumes it, and the
// message is answered once.
func TestClusterClaimLostStopsTheTurn(t *testing.T) {
	j := newMemJournal()
	c := &fakeCluster{journal: j, owner: map[string]*clusterMember{}}
	causes := make(chan error, 2)
	var runs atomic.Int32
	runner := runFunc(func(ctx context.Context, turn core.Turn) error {
		if runs.Add(1) == 1 {
			causes <- nil // running, until stopped
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return ctx.Err()
		}
		return nil
	})
	hubs := clusterHubs(t, c, Options{Runner: runner, Journal: j, Linger: time.Hour, Now: func() time.Time { return epoch.Add(time.Minute) }},
		newFakePlatform(), newFakePlatform())
	startHubs(t, hubs)
	ask := msg("t1", "ask", "do the long thing")
	if _, err := hubs[0].Submit(t.Context(), ask); err != nil {
		t.Fatal(err)
	}
	<-causes

	// The server dropped hub 0's claims session: the thread is free, and
	// the cluster tells hub 0 what it lost.
	c.mu.Lock()
	delete(c.owner, ask.Thread.Key())
	c.mu.Unlock()
	hubs[0].ClaimsLost([]string{ask.Thread.Key(), "discord/shard/0"})
	select {
	case cause := <-causes:
		if !errors.Is(cause, errClaimLost) {
			t.Fatalf("turn stopped by %v, want errClaimLost", cause)
		}
	case <-waitCtx(t).Done():
		t.Fatal("the turn under the lost claim kept running")
	}
	if j.completed(ask) {
		t.Fatal("the stopped turn's message was completed; nobody would resume it")
	}

	// Hub 1 finds the thread orphaned and resumes the message.
	if err := hubs[1].Adopt(t.Context(), ask.Thread.Key()); err != nil {
		t.Fatal(err)
	}
	j.waitCompleted(t, 1)
	if !j.completed(ask) {
		t.Errorf("completed %v, want the resumed message", j.doneOrder)
	}
}
