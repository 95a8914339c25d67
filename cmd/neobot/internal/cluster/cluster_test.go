package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/store/postgres"
)

// world is a cluster over fakes that report everything done to them, in
// order, on events.
type world struct {
	c      *Cluster
	notes  chan [2]string // what the fake database's Listen delivers: channel, payload
	lost   chan []string  // what the fake claims' Watch reports lost
	events chan string
	db     *fakeDB
	claims *fakeClaims
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{notes: make(chan [2]string), lost: make(chan []string), events: make(chan string, 64)}
	w.db = &fakeDB{w: w, orphans: make(chan []string, 4)}
	w.claims = &fakeClaims{w: w, grant: make(chan bool, 4)}
	w.c = New(w.db, w.claims, Intervals{ClaimWatch: time.Millisecond, OrphanScan: time.Millisecond, ListenRetry: time.Millisecond}, zerolog.Nop())
	return w
}

// run runs the cluster until the end of the test.
func (w *world) run(t *testing.T, web bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	to := Targets{Hub: fakeHub{w}, Gates: fakeGates{w}, Memory: fakeMemory{w}}
	if web {
		to.Web = fakeWeb{w}
	}
	go func() { defer close(done); w.c.Run(ctx, to) }()
	t.Cleanup(func() { cancel(); <-done })
}

// want waits for the next event, which must be want.
func (w *world) want(t *testing.T, want string) {
	t.Helper()
	select {
	case got := <-w.events:
		if got != want {
			t.Fatalf("event = %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second): // a deadline for a broken test, not a timing assertion
		t.Fatalf("no event; want %q", want)
	}
}

func (w *world) note(channel, payload string) { w.notes <- [2]string{channel, payload} }

type fakeDB struct {
	w       *world
	orphans chan []string // what the next scans find, if anything
}

func (d *fakeDB) Instance() string { return "me" }
func (d *fakeDB) Listening(string) <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}
func (d *fakeDB) Listen(ctx context.Context, _ time.Duration, fn func(channel, payload string), _ ...string) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case n := <-d.w.notes:
			fn(n[0], n[1])
		}
	}
}
func (d *fakeDB) Orphans(context.Context, int) ([]string, error) {
	select {
	case o := <-d.orphans:
		return o, nil
	default:
		return nil, nil
	}
}
func (d *fakeDB) Hand(context.Context, string) error                        { return nil }
func (d *fakeDB) RelayWeb(context.Context, []byte) error                    { return nil }
func (d *fakeDB) PendingIn(context.Context, string) ([]core.Inbound, error) { return nil, nil }

type fakeClaims struct {
	w     *world
	grant chan bool // the answers to the next claims; false when empty
}

func (c *fakeClaims) Claim(_ context.Context, key string) (bool, error) {
	c.w.events <- "claim " + key
	select {
	case ok := <-c.grant:
		return ok, nil
	default:
		return false, nil
	}
}
func (c *fakeClaims) Release(context.Context, string) error { return nil }
func (c *fakeClaims) Watch(ctx context.Context, _ time.Duration, lost func([]string)) {
	for {
		select {
		case <-ctx.Done():
			return
		case l := <-c.w.lost:
			lost(l)
		}
	}
}
func (c *fakeClaims) Close() {}

type fakeHub struct{ w *world }

func (h fakeHub) Adopt(_ context.Context, thread string) error {
	h.w.events <- "adopt " + thread
	return nil
}
func (h fakeHub) Handed(_ context.Context, thread string) error {
	h.w.events <- "handed " + thread
	return nil
}
func (h fakeHub) ClaimsLost(threads []string) { h.w.events <- "lost " + strings.Join(threads, ",") }

type fakeGates struct{ w *world }

func (g fakeGates) Changed(_ context.Context, id string) error {
	g.w.events <- "gate " + id
	return nil
}

type fakeMemory struct{ w *world }

func (m fakeMemory) Changed(_ context.Context, ids ...string) error {
	m.w.events <- fmt.Sprintf("memory %v", ids)
	return nil
}

type fakeWeb struct{ w *world }

func (f fakeWeb) Receive(_ context.Context, note []byte) error {
	f.w.events <- "web " + string(note)
	return nil
}

// TestNotificationsWakeTheirTargets: each notification reaches what it is
// for; memory this instance wrote itself is not reloaded, while its own
// web events are shown as every instance shows them, in the database's
// order.
func TestNotificationsWakeTheirTargets(t *testing.T) {
	w := newWorld(t)
	w.run(t, true)
	for _, tc := range []struct {
		channel, payload string
		want             string // "" for nothing
	}{
		{postgres.ChannelInbound, "slack:T1/C1/1.1", "handed slack:T1/C1/1.1"},
		{postgres.ChannelGate, "g-42", "gate g-42"},
		{postgres.ChannelMemory, "other m1,m2", "memory [m1 m2]"},
		{postgres.ChannelMemory, "other *", "memory []"},
		{postgres.ChannelMemory, "me m3", ""}, // written here: the index has it
		{postgres.ChannelWeb, "other {\"turn\":1}", "web {\"turn\":1}"},
		{postgres.ChannelWeb, "me {\"turn\":2}", "web {\"turn\":2}"}, // its own too: one order, one numbering everywhere
	} {
		w.note(tc.channel, tc.payload)
		if tc.want != "" {
			w.want(t, tc.want)
		}
	}
	// A notification nobody answers leaves nothing behind: the next one
	// is the next event.
	w.note(postgres.ChannelGate, "g-43")
	w.want(t, "gate g-43")
}

// TestWebNotesWithoutWeb: an instance without a web chat ignores the web
// channel.
func TestWebNotesWithoutWeb(t *testing.T) {
	w := newWorld(t)
	w.run(t, false)
	w.note(postgres.ChannelWeb, "other {}")
	w.note(postgres.ChannelGate, "g-1")
	w.want(t, "gate g-1")
}

// TestReconnectAdoptsAndReloads: after the notifications connection came
// back, what may have been missed is caught up: orphaned threads adopted,
// memory reloaded whole.
func TestReconnectAdoptsAndReloads(t *testing.T) {
	w := newWorld(t)
	w.run(t, false)
	w.db.orphans <- []string{"slack:T1/C1/9.9"}
	w.note("", "")
	got := map[string]bool{}
	for range 2 {
		select {
		case e := <-w.events:
			got[e] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("after a reconnect: %v, want an adoption and a reload", got)
		}
	}
	if !got["adopt slack:T1/C1/9.9"] || !got["memory []"] {
		t.Fatalf("after a reconnect: %v, want the orphan adopted and memory reloaded", got)
	}
}

// TestOrphansAdoptedByTheScan: a thread a dead instance left is adopted by
// the periodic scan, with no notification at all.
func TestOrphansAdoptedByTheScan(t *testing.T) {
	w := newWorld(t)
	w.run(t, false)
	w.db.orphans <- []string{"discord:G1/C1/5", "web:alice/7"}
	w.want(t, "adopt discord:G1/C1/5")
	w.want(t, "adopt web:alice/7")
}

// TestLostClaimsStopTurnsAndTheShard: when the claims' connection breaks,
// the hub stops the turns under the lost claims, and a Discord session
// held under a lost shard claim ends with ErrShardLost; one held under a
// claim still kept goes on.
func TestLostClaimsStopTurnsAndTheShard(t *testing.T) {
	w := newWorld(t)
	w.run(t, false)
	held, release := w.c.HoldShard(context.Background(), 0)
	defer release()
	kept, releaseKept := w.c.HoldShard(context.Background(), 1)
	defer releaseKept()

	w.lost <- []string{"slack:T1/C1/1.1", "discord/shard/0"}
	w.want(t, "lost slack:T1/C1/1.1,discord/shard/0")
	<-held.Done()
	if cause := context.Cause(held); !errors.Is(cause, ErrShardLost) {
		t.Fatalf("the shard's session ended with %v, want ErrShardLost", cause)
	}
	if kept.Err() != nil {
		t.Fatalf("shard 1's session ended (%v); its claim was not lost", context.Cause(kept))
	}
}

// TestShardWaitsForTheClaim: a standby tries the shard's claim until it is
// granted (its holder died), and gives up when its context ends.
func TestShardWaitsForTheClaim(t *testing.T) {
	w := newWorld(t)
	got := make(chan bool)
	go func() { got <- w.c.Shard(context.Background(), 3) }()
	w.want(t, "claim discord/shard/3") // refused: another instance holds it
	w.want(t, "claim discord/shard/3")
	w.claims.grant <- true
	// Shard's answer; claims it made meanwhile may still be reported.
	result := func() bool {
		for {
			select {
			case ok := <-got:
				return ok
			case <-w.events:
			}
		}
	}
	if !result() {
		t.Fatal("Shard = false, want true once the claim is granted")
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { got <- w.c.Shard(ctx, 4) }()
	w.want(t, "claim discord/shard/4")
	cancel()
	if result() {
		t.Fatal("Shard = true after its context ended with the claim never granted")
	}
}
