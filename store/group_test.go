package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func openGroup(t *testing.T, max int) (*group, *bolt.DB) {
	t.Helper()
	b, err := bolt.Open(filepath.Join(t.TempDir(), "g.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if err := b.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("b")); return err }); err != nil {
		t.Fatal(err)
	}
	return &group{bolt: b, max: max}, b
}

// TestGroupCommit: concurrent writes all commit; a write whose fn fails
// gets its own error and changes nothing, while the writes beside it
// commit; a panicking write is an error, and the group goes on.
func TestGroupCommit(t *testing.T) {
	g, b := openGroup(t, 8)
	boom := errors.New("refused")
	var wg sync.WaitGroup
	errs := make([]error, 200)
	for i := range errs {
		wg.Go(func() {
			errs[i] = g.write(func(tx *bolt.Tx) error {
				if i%50 == 7 {
					return boom
				}
				return tx.Bucket([]byte("b")).Put(fmt.Appendf(nil, "k%03d", i), []byte("v"))
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		want := error(nil)
		if i%50 == 7 {
			want = boom
		}
		if !errors.Is(err, want) && err != want {
			t.Errorf("write %d = %v, want %v", i, err, want)
		}
	}
	_ = b.View(func(tx *bolt.Tx) error {
		if n := tx.Bucket([]byte("b")).Stats().KeyN; n != 196 {
			t.Errorf("%d keys stored, want 196: every write but the 4 refused", n)
		}
		for i := range errs {
			got := tx.Bucket([]byte("b")).Get(fmt.Appendf(nil, "k%03d", i))
			if (got == nil) != (i%50 == 7) {
				t.Errorf("key %d stored = %v", i, got != nil)
			}
		}
		return nil
	})

	if err := g.write(func(*bolt.Tx) error { panic("bad write") }); err == nil {
		t.Error("a panicking write returned no error")
	}
	if err := g.write(func(tx *bolt.Tx) error { return tx.Bucket([]byte("b")).Put([]byte("after"), []byte("v")) }); err != nil {
		t.Errorf("a write after a panic = %v, want the group still working", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.busy || len(g.queue) != 0 {
		t.Errorf("idle group: busy %v, %d queued", g.busy, len(g.queue))
	}
}

// TestGroupLazy: a lazy write commits with the next write, or on its own
// when none comes; one queued ahead of waiting writers does not stall
// them; flush commits what is left.
func TestGroupLazy(t *testing.T) {
	g, b := openGroup(t, 8)
	g.lazyDelay = time.Hour // only another write (or flush) commits it
	put := func(k string) func(*bolt.Tx) error {
		return func(tx *bolt.Tx) error { return tx.Bucket([]byte("b")).Put([]byte(k), []byte("v")) }
	}
	has := func(k string) bool {
		var ok bool
		_ = b.View(func(tx *bolt.Tx) error { ok = tx.Bucket([]byte("b")).Get([]byte(k)) != nil; return nil })
		return ok
	}
	g.later(put("lazy1"), nil)
	if has("lazy1") {
		t.Fatal("a lazy write committed before any write or its timer")
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if err := g.write(put(fmt.Sprint("w", i))); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if !has("lazy1") {
		t.Error("the lazy write did not ride along with the writes after it")
	}
	g.later(put("lazy2"), nil)
	if err := g.flush(); err != nil || !has("lazy2") {
		t.Errorf("flush = %v; lazy2 stored %v", err, has("lazy2"))
	}

	g.lazyDelay = time.Millisecond // now its timer commits it
	g.later(put("lazy3"), nil)
	deadline := time.Now().Add(10 * time.Second)
	for !has("lazy3") && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // polling for the commit, not timing it
	}
	if !has("lazy3") {
		t.Error("a lazy write with no write after it never committed")
	}
}

// TestGroupRerunsAfterAFailingMember: writes that queue behind a running
// commit share the next transaction; when one of them fails, the others
// run again in a fresh transaction (their functions run twice, so they
// must derive their results from tx) and commit once.
func TestGroupRerunsAfterAFailingMember(t *testing.T) {
	g, b := openGroup(t, 8)
	hold, holding := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- g.write(func(*bolt.Tx) error { close(holding); <-hold; return nil })
	}()
	<-holding // the first commit runs; the next two queue behind it
	runs := 0
	var mu sync.Mutex
	results := make(chan error, 2)
	queued := func(fn func(*bolt.Tx) error) {
		go func() { results <- g.write(fn) }()
		for { // wait until the write is queued, not for time
			g.mu.Lock()
			n := len(g.queue)
			g.mu.Unlock()
			if n > 0 {
				return
			}
			runtime.Gosched()
		}
	}
	queued(func(tx *bolt.Tx) error {
		mu.Lock()
		runs++
		mu.Unlock()
		return tx.Bucket([]byte("b")).Put([]byte("kept"), []byte("v"))
	})
	go func() { results <- g.write(func(*bolt.Tx) error { return errors.New("refused") }) }() // behind it
	for {
		g.mu.Lock()
		n := len(g.queue)
		g.mu.Unlock()
		if n == 2 {
			break
		}
		runtime.Gosched()
	}
	close(hold)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	var errs []error
	for range 2 {
		errs = append(errs, <-results)
	}
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Errorf("results = %v, want one refusal and one success", errs)
	}
	mu.Lock()
	defer mu.Unlock()
	if runs != 2 {
		t.Errorf("the good write ran %d times, want 2: once beside the refused one, once after it", runs)
	}
	_ = b.View(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte("b")).Get([]byte("kept")) == nil {
			t.Error("the good write was not committed")
		}
		return nil
	})
}

// TestGroupLazyBacklog: a writer with more lazy writes queued ahead of it
// than one transaction holds commits them in turn, then itself; it does
// not wait for a lead it handed itself.
func TestGroupLazyBacklog(t *testing.T) {
	g, b := openGroup(t, 2)
	g.lazyDelay = time.Hour
	put := func(k string) func(*bolt.Tx) error {
		return func(tx *bolt.Tx) error { return tx.Bucket([]byte("b")).Put([]byte(k), []byte("v")) }
	}
	for i := range 5 {
		g.later(put(fmt.Sprint("lazy", i)), nil)
	}
	done := make(chan error, 1)
	go func() { done <- g.write(put("w")) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second): // a bound on a hang, not a timing
		t.Fatal("a write behind 5 lazy writes in a group of 2 never returned")
	}
	_ = b.View(func(tx *bolt.Tx) error {
		for _, k := range []string{"lazy0", "lazy4", "w"} {
			if tx.Bucket([]byte("b")).Get([]byte(k)) == nil {
				t.Errorf("%s not stored", k)
			}
		}
		return nil
	})
}

// TestGroupLaterWithin: a lazy write with a shorter bound brings the
// commit forward for every lazy write queued, and one with a longer bound
// does not put it off.
func TestGroupLaterWithin(t *testing.T) {
	g, b := openGroup(t, 8)
	g.lazyDelay = time.Hour
	put := func(k string) func(*bolt.Tx) error {
		return func(tx *bolt.Tx) error { return tx.Bucket([]byte("b")).Put([]byte(k), []byte("v")) }
	}
	committed := make(chan string, 3)
	heard := func(k string) func(error) {
		return func(err error) {
			if err != nil {
				t.Errorf("%s: %v", k, err)
			}
			committed <- k
		}
	}
	g.later(put("slow"), heard("slow"))
	g.laterWithin(time.Millisecond, put("soon"), heard("soon"))
	g.laterWithin(time.Hour, put("after"), heard("after"))
	var got []string
	for len(got) < 3 {
		select {
		case k := <-committed:
			got = append(got, k)
		case <-time.After(20 * time.Second):
			t.Fatalf("committed %v; the short bound never brought the commit forward", got)
		}
	}
	_ = b.View(func(tx *bolt.Tx) error {
		for _, k := range []string{"slow", "soon", "after"} {
			if tx.Bucket([]byte("b")).Get([]byte(k)) == nil {
				t.Errorf("%s not stored", k)
			}
		}
		return nil
	})
}

// TestGroupTakeHoldsHeldWritesTogether: a batch is the queue in order;
// held writes stay out of it, keeping their place, until the oldest is
// ripe, and then all of them go.
func TestGroupTakeHoldsHeldWritesTogether(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name  string
		max   int
		queue string // a letter is a write; hN a held one, ripe N-2 seconds from now
		batch string
		left  string
	}{
		{"none ripe", 8, "a h3 b h4 c", "a b c", "h3 h4"},
		{"the oldest ripe", 8, "a h1 b h3 c", "a h1 b h3 c", ""},
		{"none ripe, max 2", 2, "a h3 b h4 c", "a b", "h3 h4 c"},
		{"the oldest ripe, max 2", 2, "a h2 b h3 c", "a h2", "b h3 c"},
	} {
		names := map[*queued]string{}
		var queue []*queued
		for _, name := range strings.Fields(tc.queue) {
			w := &queued{fn: func(*bolt.Tx) error { return nil }, due: now.Add(time.Hour)}
			if name[0] == 'h' {
				w.ripe = now.Add(time.Duration(int(name[1]-'0')-2) * time.Second)
			}
			names[w] = name
			queue = append(queue, w)
		}
		order := func(ws []*queued) string {
			var out []string
			for _, w := range ws {
				out = append(out, names[w])
			}
			return strings.Join(out, " ")
		}
		g := &group{max: tc.max, queue: queue}
		if got := order(g.takeLocked(now)); got != tc.batch || order(g.queue) != tc.left {
			t.Errorf("%s: batch %q, left %q; want %q, left %q", tc.name, got, order(g.queue), tc.batch, tc.left)
		}
		if tc.left == "" {
			continue
		}
		g.release()
		want := tc.left
		if len(strings.Fields(want)) > tc.max {
			want = strings.Join(strings.Fields(want)[:tc.max], " ")
		}
		if got := order(g.takeLocked(now)); got != want {
			t.Errorf("%s: after release, batch %q; want %q", tc.name, got, want)
		}
	}
}

// TestGroupHeldWriteOutlivesAnEarlierTimer: a timer armed for an earlier
// lazy write commits it and leaves the held write behind; the held write
// then gets a timer of its own, for its own due time.
func TestGroupHeldWriteOutlivesAnEarlierTimer(t *testing.T) {
	g, b := openGroup(t, 8)
	g.lazyDelay = time.Hour
	put := func(k string) func(*bolt.Tx) error {
		return func(tx *bolt.Tx) error { return tx.Bucket([]byte("b")).Put([]byte(k), []byte("v")) }
	}
	g.hold(put("held"))
	g.mu.Lock()
	heldDue := g.queue[0].due
	g.mu.Unlock()
	committed := make(chan error, 1)
	g.laterWithin(time.Millisecond, put("soon"), func(err error) { committed <- err })
	if err := <-committed; err != nil {
		t.Fatal(err)
	}
	for { // the timer's writer ends its commit after telling "soon"
		g.mu.Lock()
		busy := g.busy
		g.mu.Unlock()
		if !busy {
			break
		}
		runtime.Gosched()
	}
	g.mu.Lock()
	timer, due, queued := g.timer, g.due, len(g.queue)
	g.mu.Unlock()
	if queued != 1 || timer == nil || !due.Equal(heldDue) {
		t.Errorf("after the early timer: %d queued, timer %v, due %v; want the held write with a timer for %v", queued, timer != nil, due, heldDue)
	}
	var stored bool
	_ = b.View(func(tx *bolt.Tx) error { stored = tx.Bucket([]byte("b")).Get([]byte("held")) != nil; return nil })
	if stored {
		t.Error("the held write committed with the early timer's batch")
	}
	if err := g.flush(); err != nil {
		t.Fatal(err)
	}
	_ = b.View(func(tx *bolt.Tx) error { stored = tx.Bucket([]byte("b")).Get([]byte("held")) != nil; return nil })
	if !stored {
		t.Error("flush left the held write uncommitted")
	}
}

// TestGroupLoneWriteCommitsAtOnce: a durable write with no company, or
// with only a held write queued that is not ripe, commits at once: it
// never waits the lazy delay (an hour here) for others to join it.
func TestGroupLoneWriteCommitsAtOnce(t *testing.T) {
	tests := []struct {
		name  string
		queue func(g *group)
	}{
		{"alone", func(*group) {}},
		{"beside a held write", func(g *group) {
			g.hold(func(tx *bolt.Tx) error { return tx.Bucket([]byte("b")).Put([]byte("held"), []byte("v")) })
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, b := openGroup(t, 8)
			g.lazyDelay = time.Hour
			tt.queue(g)
			done := make(chan error, 1)
			go func() {
				done <- g.write(func(tx *bolt.Tx) error { return tx.Bucket([]byte("b")).Put([]byte("lone"), []byte("v")) })
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("write = %v", err)
				}
			case <-time.After(30 * time.Second): // a guard against a hang, far below the hour
				t.Fatal("a lone write waited for company instead of committing")
			}
			_ = b.View(func(tx *bolt.Tx) error {
				if tx.Bucket([]byte("b")).Get([]byte("lone")) == nil {
					t.Error("the lone write is not stored")
				}
				return nil
			})
		})
	}
}
