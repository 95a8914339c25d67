package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/store/postgres"
	"github.com/neobot/neobot/store/postgres/pgtest"
)

// TestClaimsAtOnce: two instances claim the same 40 threads at once, each
// thread by several goroutines in each. The claims go in batches; every
// thread ends up held by exactly one instance, and one Release frees it:
// a thread claimed twice in one session would still be locked.
func TestClaimsAtOnce(t *testing.T) {
	ctx := t.Context()
	url := pgtest.Database(t)
	a, b := openURL(t, url, postgres.Options{}), openURL(t, url, postgres.Options{})
	ca, cb := a.Claims(), b.Claims()
	defer ca.Close()
	defer cb.Close()
	const threads, claimers = 40, 3
	key := func(i int) string { return thread(fmt.Sprint("burst", i)).Key() }
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		won = map[string][]string{} // thread -> instances whose Claim said true
	)
	for _, in := range []struct {
		name   string
		claims *postgres.Claims
	}{{"a", ca}, {"b", cb}} {
		for i := range threads {
			for range claimers {
				wg.Go(func() {
					ok, err := in.claims.Claim(ctx, key(i))
					if err != nil {
						t.Errorf("%s: Claim(%s): %v", in.name, key(i), err)
						return
					}
					if ok {
						mu.Lock()
						won[key(i)] = append(won[key(i)], in.name)
						mu.Unlock()
					}
				})
			}
		}
	}
	wg.Wait()
	if ca.Held()+cb.Held() != threads {
		t.Errorf("held: a %d, b %d; want %d in all", ca.Held(), cb.Held(), threads)
	}
	for i := range threads {
		got := slices.Compact(slices.Sorted(slices.Values(won[key(i)])))
		if len(got) != 1 {
			t.Fatalf("%s won by %q, want exactly one instance", key(i), got)
		}
		holder, other := ca, cb
		if got[0] == "b" {
			holder, other = cb, ca
		}
		if err := holder.Release(ctx, key(i)); err != nil {
			t.Fatal(err)
		}
		if ok, err := other.Claim(ctx, key(i)); !ok || err != nil {
			t.Errorf("%s after one Release by its holder: other instance's Claim = %v, %v; want it free", key(i), ok, err)
		}
	}
}

// TestPendingInAtOnce: many instances' worth of PendingIn calls at once,
// several per thread, are read in batches; each caller gets its own
// thread's pending messages in journal order, never another thread's,
// and a completed message is not among them.
func TestPendingInAtOnce(t *testing.T) {
	ctx := t.Context()
	db := openURL(t, pgtest.Database(t), postgres.Options{})
	const threads, perThread = 12, 3
	want := map[string][]string{}
	for m := range perThread {
		for i := range threads {
			th := thread(fmt.Sprint("p", i))
			id := fmt.Sprintf("E%d.%d", i, m)
			if _, err := db.JournalInbound(ctx, core.Inbound{Thread: th, EventID: id, Text: id}); err != nil {
				t.Fatal(err)
			}
			want[th.Key()] = append(want[th.Key()], id)
		}
	}
	done := thread("p0")
	if err := db.CompleteInbound(ctx, done, "E0.0"); err != nil {
		t.Fatal(err)
	}
	want[done.Key()] = want[done.Key()][1:]
	var wg sync.WaitGroup
	for i := range threads {
		for range 4 {
			wg.Go(func() {
				key := thread(fmt.Sprint("p", i)).Key()
				pending, err := db.PendingIn(ctx, key)
				if err != nil {
					t.Errorf("PendingIn(%s): %v", key, err)
					return
				}
				var got []string
				for _, in := range pending {
					got = append(got, in.EventID)
				}
				if !slices.Equal(got, want[key]) {
					t.Errorf("PendingIn(%s) = %q, want %q", key, got, want[key])
				}
			})
		}
	}
	wg.Wait()

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := db.PendingIn(cancelled, done.Key()); !errors.Is(err, context.Canceled) {
		t.Errorf("PendingIn with a cancelled context = %v, want context.Canceled", err)
	}
}
