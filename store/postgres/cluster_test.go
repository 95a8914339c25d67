package postgres_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/memory"
	"github.com/neobot/neobot/core/quota"
	"github.com/neobot/neobot/store/postgres"
	"github.com/neobot/neobot/store/postgres/pgtest"
)

// TestClaims: a thread is claimed by one instance at a time; its claim
// goes with the instance's claims connection; a thread with pending
// messages that nobody claims is an orphan.
func TestClaims(t *testing.T) {
	ctx := t.Context()
	_, a, b, ca, cb := twoInstances(t)
	claim := func(c *postgres.Claims, thread string, want bool) {
		t.Helper()
		if ok, err := c.Claim(ctx, thread); err != nil || ok != want {
			t.Fatalf("Claim(%s) = %v, %v; want %v", thread, ok, err, want)
		}
	}
	th := thread("t1")
	claim(ca, th.Key(), true)
	claim(cb, th.Key(), false)
	claim(ca, th.Key(), true) // held here already
	if ca.Held() != 1 {
		t.Errorf("Held = %d, want 1", ca.Held())
	}
	if err := ca.Release(ctx, th.Key()); err != nil {
		t.Fatal(err)
	}
	claim(cb, th.Key(), true)

	// Pending messages in two threads: the one b claims is not an orphan.
	for _, id := range []string{"t1", "t2"} {
		if _, err := a.JournalInbound(ctx, core.Inbound{Thread: thread(id), EventID: "E" + id}); err != nil {
			t.Fatal(err)
		}
	}
	orphans, err := a.Orphans(ctx, 10)
	if err != nil || !slices.Equal(orphans, []string{thread("t2").Key()}) {
		t.Errorf("Orphans = %q, %v; want only t2", orphans, err)
	}
	// An instance that goes away takes its claims with it.
	claim(ca, thread("t2").Key(), true)
	if orphans, _ := b.Orphans(ctx, 10); len(orphans) != 0 {
		t.Errorf("Orphans with both claimed = %q, want none", orphans)
	}
	ca.Close()
	claim(cb, thread("t2").Key(), true)
}

// TestNotifications: a decided gate, written memory and a hand-over reach
// another instance's listener, each after its write committed.
func TestNotifications(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	url := pgtest.Database(t)
	a, b := openURL(t, url, postgres.Options{}), openURL(t, url, postgres.Options{})
	got := make(chan [2]string, 16)
	done := make(chan error, 1)
	go func() {
		done <- a.Listen(ctx, 10*time.Millisecond, func(ch, payload string) { got <- [2]string{ch, payload} },
			postgres.ChannelInbound, postgres.ChannelGate, postgres.ChannelMemory)
	}()
	next := func() [2]string {
		t.Helper()
		select {
		case n := <-got:
			return n
		case <-time.After(30 * time.Second):
			t.Fatal("no notification within 30s")
			return [2]string{}
		}
	}
	// LISTEN runs in the goroutine: hand over until the first arrives.
	for {
		if err := b.Hand(ctx, "slack:T1:C1:x"); err != nil {
			t.Fatal(err)
		}
		select {
		case n := <-got:
			if n != [2]string{postgres.ChannelInbound, "slack:T1:C1:x"} {
				t.Fatalf("first notification = %q", n)
			}
		case <-time.After(20 * time.Millisecond): // not listening yet
			continue
		}
		break
	}
	for len(got) > 0 {
		<-got // later copies of the hand-over
	}

	g := core.Gate{Token: "tok", Binding: "b", Thread: thread("t"), State: core.GatePending, Expires: time.Now().Add(time.Hour)}
	if err := b.CreateGate(ctx, g); err != nil {
		t.Fatal(err)
	}
	if _, err := b.UpdateGate(ctx, "tok", func(g *core.Gate) error { g.MessageRef = "C1:1"; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := b.UpdateGate(ctx, "tok", func(g *core.Gate) error { g.State, g.DecidedBy = core.GateApproved, "U1"; return nil }); err != nil {
		t.Fatal(err)
	}
	if n := next(); n != [2]string{postgres.ChannelGate, "tok"} {
		t.Errorf("after a decision: %q, want the gate's token (and nothing for recording its message)", n)
	}
	if err := b.WriteMemories(ctx, []memory.Record{{ID: "m1", Kind: memory.KindFact, Text: "x"}}, []string{"m0"}); err != nil {
		t.Fatal(err)
	}
	if n := next(); n[0] != postgres.ChannelMemory || n[1] != b.Instance()+" m0,m1" {
		t.Errorf("after a memory write: %q, want %q", n, b.Instance()+" m0,m1")
	}
	recs, err := a.LoadMemories(ctx, []string{"m0", "m1"})
	if err != nil || len(recs) != 1 || recs[0].ID != "m1" {
		t.Errorf("LoadMemories = %+v, %v; want m1 alone", recs, err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Listen after cancel = %v", err)
	}
	if a.Instance() == "" || a.Instance() == b.Instance() {
		t.Errorf("instances share an ID: %s", a.Instance())
	}
}

// TestClaimsLostWatched: when the connection holding the claims breaks,
// Watch reports every claim it held, once, and a new claim opens a new
// connection.
func TestClaimsLostWatched(t *testing.T) {
	ctx := t.Context()
	url, _, _, ca, cb := twoInstances(t)
	for _, id := range []string{"t1", "t2"} {
		if ok, err := ca.Claim(ctx, thread(id).Key()); !ok || err != nil {
			t.Fatalf("Claim(%s) = %v, %v", id, ok, err)
		}
	}
	lost := make(chan []string, 4)
	watchCtx, stop := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		ca.Watch(watchCtx, 10*time.Millisecond, func(claims []string) { lost <- claims })
	}()
	defer func() { stop(); <-watched }()

	// The server ends the session holding the claims, as it does when it
	// stops hearing from a machine.
	killer, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer killer.Close(ctx)
	var killed int
	if err := killer.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM (SELECT DISTINCT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())) s`).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminating the claims session = %d, %v; want one session ended", killed, err)
	}
	var got []string
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	select {
	case got = <-lost:
	case <-wait.Done():
		t.Fatal("Watch never reported the lost claims")
	}
	slices.Sort(got)
	if want := []string{thread("t1").Key(), thread("t2").Key()}; !slices.Equal(got, want) {
		t.Errorf("lost = %q, want %q", got, want)
	}
	if ca.Held() != 0 {
		t.Errorf("Held = %d after the break, want 0", ca.Held())
	}
	// Another instance may take a lost thread; this one claims again on a
	// new connection, and loses nothing more.
	if ok, err := cb.Claim(ctx, thread("t1").Key()); !ok || err != nil {
		t.Fatalf("other instance's Claim(t1) = %v, %v; want it free", ok, err)
	}
	if ok, err := ca.Claim(ctx, thread("t2").Key()); !ok || err != nil {
		t.Fatalf("Claim(t2) after the break = %v, %v; want it claimed again", ok, err)
	}
	select {
	case again := <-lost:
		t.Errorf("lost reported again: %q", again)
	default:
	}
}

// TestStopRuleAcrossInstances: a turn on one instance waits on an
// approval; a stop reaching another instance is checked against that
// gate as it would be on the turn's own instance.
func TestStopRuleAcrossInstances(t *testing.T) {
	ctx := t.Context()
	url := pgtest.Database(t)
	a, b := openURL(t, url, postgres.Options{}), openURL(t, url, postgres.Options{})
	ga, gb := core.NewGates(core.GatesOptions{Store: a}), core.NewGates(core.GatesOptions{Store: b})
	th := thread("stop")
	g, _, err := ga.Open(ctx, core.GateRequest{Thread: th, IntentID: "i1", NodeID: "n1", Question: "Send 5 USDC?",
		Options: []core.Option{{Label: "yes", Approves: true}, {Label: "no"}}, Requester: "U1"}, []string{"U2"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		thread core.Thread
		user   string
		want   bool
	}{
		{th, "U3", false}, // neither requester nor approver
		{th, "U1", true},  // the requester takes their request back
		{th, "U2", true},  // an approver
		{thread("other"), "U3", true},
	} {
		if got, err := gb.MayStop(ctx, tt.thread, tt.user, nil); got != tt.want || err != nil {
			t.Errorf("another instance's MayStop(%s, %s) = %v, %v; want %v", tt.thread.ID, tt.user, got, err, tt.want)
		}
	}
	if _, err := ga.Close(ctx, g.Token, core.GateDenied); err != nil {
		t.Fatal(err)
	}
	if ok, err := gb.MayStop(ctx, th, "U3", nil); !ok || err != nil {
		t.Errorf("MayStop(U3) once the gate is decided = false, want true (no approval waits)")
	}
}

// TestShareAcrossInstances: a person's messages, taken by two instances
// in turn, count against one limit.
func TestShareAcrossInstances(t *testing.T) {
	ctx := t.Context()
	url := pgtest.Database(t)
	var limiters []*quota.Limiter
	for range 2 {
		l := quota.New(quota.Limits{PerMinute: 20}, nil)
		l.Share(openURL(t, url, postgres.Options{}))
		limiters = append(limiters, l)
	}
	for i := range 20 {
		if d := limiters[i%2].Message(ctx, "web/alice", 10); d.Denied() {
			t.Fatalf("message %d: Message = %+v, want allowed", i+1, d)
		}
	}
	for i, l := range limiters {
		if d := l.Message(ctx, "web/alice", 10); d.Limit != quota.LimitRate {
			t.Errorf("message 21 on instance %d: Message = %+v, want the rate limit", i, d)
		}
	}
}

// TestListeningByChannel: a Listen on some channels says nothing of the
// others: the web is served once the cluster's listener, not the places',
// has subscribed.
func TestListeningByChannel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	url := pgtest.Database(t)
	db := openURL(t, url, postgres.Options{})
	done := make(chan struct{}, 2)
	defer func() { cancel(); <-done; <-done }()
	listen := func(channels ...string) {
		go func() {
			defer func() { done <- struct{}{} }()
			_ = db.Listen(ctx, 10*time.Millisecond, func(string, string) {}, channels...)
		}()
	}
	listen(postgres.ChannelPlaces)
	<-db.Listening(postgres.ChannelPlaces)
	select {
	case <-db.Listening(postgres.ChannelWeb):
		t.Fatal("Listening(web) closed when only the places' channel was subscribed")
	default:
	}
	listen(postgres.ChannelWeb)
	<-db.Listening(postgres.ChannelWeb)
}
