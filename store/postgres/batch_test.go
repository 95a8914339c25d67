package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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
	_, _, _, ca, cb := twoInstances(t)
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

// TestClaimsHoldBackNothing: the claims session keeps a transaction open
// between its statements (so that no claim ends one), yet it holds no
// transaction ID and no snapshot: vacuum is never held back by it.
func TestClaimsHoldBackNothing(t *testing.T) {
	ctx := t.Context()
	url := pgtest.Database(t)
	db := openURL(t, url, postgres.Options{})
	claims := db.Claims()
	defer claims.Close()
	for i := range 3 {
		if ok, err := claims.Claim(ctx, thread(fmt.Sprint("v", i)).Key()); !ok || err != nil {
			t.Fatalf("Claim = %v, %v", ok, err)
		}
	}
	if err := claims.Release(ctx, thread("v0").Key()); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// The snapshot of the last claims statement is dropped once no
	// claim waits: soon after the last call returned.
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		var (
			state     string
			xmin, xid *string
		)
		err = conn.QueryRow(wait, `
			SELECT a.state, a.backend_xmin::text, a.backend_xid::text FROM pg_stat_activity a
			WHERE a.pid IN (SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
				AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))`).Scan(&state, &xmin, &xid)
		if err != nil {
			t.Fatalf("find the claims session: %v", err)
		}
		if xid != nil || state != "idle in transaction" && state != "active" {
			t.Fatalf("claims session: state %q, holding a transaction ID: %v; want idle in transaction without one", state, xid != nil)
		}
		if state == "idle in transaction" && xmin == nil {
			return
		}
		if err := pollAgain(wait); err != nil {
			t.Fatalf("the claims session still holds a snapshot (state %q) after its claims: it holds back vacuum", state)
		}
	}
}

// pollAgain waits a moment before a condition is checked again; an error
// once ctx ends.
func pollAgain(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(10 * time.Millisecond):
		return nil
	}
}

// TestClaimsAfterAFailedStatement: a claim the server refuses (a key
// that is not valid UTF-8) fails alone; the session's transaction is set
// right, so the claims it holds stay held and the next claim works.
func TestClaimsAfterAFailedStatement(t *testing.T) {
	ctx := t.Context()
	_, _, _, ca, cb := twoInstances(t)
	held := thread("held").Key()
	if ok, err := ca.Claim(ctx, held); !ok || err != nil {
		t.Fatalf("Claim(held) = %v, %v", ok, err)
	}
	if ok, err := ca.Claim(ctx, "slack/T/C/\xff"); ok || err == nil {
		t.Fatalf("Claim(invalid UTF-8) = %v, %v; want an error", ok, err)
	}
	if ok, err := ca.Claim(ctx, thread("next").Key()); !ok || err != nil {
		t.Errorf("Claim after the refused one = %v, %v; want it claimed", ok, err)
	}
	if ok, err := cb.Claim(ctx, held); ok || err != nil {
		t.Errorf("other instance's Claim(held) = %v, %v; want it still held by the first", ok, err)
	}
	if err := ca.Release(ctx, held); err != nil {
		t.Fatal(err)
	}
	if ok, err := cb.Claim(ctx, held); !ok || err != nil {
		t.Errorf("other instance's Claim(held) after its Release = %v, %v; want it free", ok, err)
	}
}

// twoInstances opens two instances on a new database, with their claims,
// which are closed when t ends.
func twoInstances(t *testing.T) (url string, a, b *postgres.DB, ca, cb *postgres.Claims) {
	t.Helper()
	url = pgtest.Database(t)
	a, b = openURL(t, url, postgres.Options{}), openURL(t, url, postgres.Options{})
	ca, cb = a.Claims(), b.Claims()
	t.Cleanup(ca.Close)
	t.Cleanup(cb.Close)
	return url, a, b, ca, cb
}
