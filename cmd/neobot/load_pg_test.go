package main

import (
	"context"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/neobot/neobot/cmd/neobot/internal/cluster"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/store/postgres/pgtest"
)

// BenchmarkLoadPostgres is BenchmarkLoad on PostgreSQL (a server of its
// own, fsync on, over its unix socket), with one instance and with two
// and three in this process sharing the database. With two, "sticky" sends each
// thread's messages to one instance (what coordination costs when nothing
// moves), "spread" to either in turn, so every other turn finds its
// thread held by the other instance and is handed over (Slack spreads an
// app's events across its connections like this). It reports turns/s,
// p50/p99 turn latency, the CPU the process (bot and benchmark, not
// the server) spent per turn, and what the database did per turn:
// its CPU, statements run, transactions that wrote (each one a WAL flush the
// turn waits for, unless group commit shares it) and WAL bytes. With -v
// it logs each statement's runs per turn.
func BenchmarkLoadPostgres(b *testing.B) {
	ctx := context.Background()
	srv, err := pgtest.Start(ctx, pgtest.Options{Durable: true, Statements: true})
	if err != nil {
		b.Skip(err)
	}
	defer srv.Stop()
	for _, run := range []struct {
		name      string
		instances int
		spread    bool
	}{{"instances=1", 1, false}, {"instances=2/sticky", 2, false}, {"instances=2/spread", 2, true}, {"instances=3/sticky", 3, false}} {
		b.Run(run.name, func(b *testing.B) {
			url, err := srv.CreateDatabase(ctx)
			if err != nil {
				b.Fatal(err)
			}
			loadPostgres(b, srv, url, run.instances, run.spread)
		})
	}
}

func loadPostgres(b *testing.B, srv *pgtest.Server, url string, instances int, spread bool) {
	const threads = 1000
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	plat := &loadPlatform{waiting: map[string]chan struct{}{}}
	var stacks []*bot
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for range instances {
		stacks = append(stacks, startPostgresStack(b, ctx, &wg, url, plat))
	}

	before, err := srv.Counters(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	driveLoad(b, plat, threads, func(w, k int, in core.Inbound) error {
		to := w
		if spread {
			to += k
		}
		_, err := stacks[to%len(stacks)].hub.Submit(ctx, in)
		return err
	})
	after, err := srv.Counters(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	d, turns := after.Sub(before), float64(b.N)
	b.ReportMetric(float64(d.Statements)/turns, "statements/turn")
	b.ReportMetric(float64(d.Writes)/turns, "writes/turn")
	b.ReportMetric(float64(d.WALBytes)/1024/turns, "WAL-KB/turn")
	b.ReportMetric(float64(d.CPU.Microseconds())/1000/turns, "db-cpu-ms/turn")
	if testing.Verbose() {
		logStatements(b, srv, url, turns)
	}
}

// startPostgresStack starts an instance on the database at url, its
// turns answered on plat, its cluster loop run in wg until ctx ends.
func startPostgresStack(b *testing.B, ctx context.Context, wg *sync.WaitGroup, url string, plat *loadPlatform) *bot {
	stack, a := newLoadStack(b, ctx, map[string]string{"NEO_DATABASE_URL": url})
	stack.hub.Attach("load", plat)
	if err := stack.hub.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stack.hub.Close(context.Background()) })
	wg.Go(func() { a.cluster.Run(ctx, cluster.Targets{Hub: stack.hub, Gates: a.gates, Memory: a.cortex}) })
	return stack
}

// BenchmarkLoadShare measures PostgreSQL's turns/s on one instance as a
// share of bbolt's, in one process: both stacks are built as neobot
// builds them (the PostgreSQL one on a server of its own, fsync on) and
// driven in turn, in shareRounds rounds, the order of the stores swapped
// every round (bbolt, PostgreSQL, PostgreSQL, bbolt, ...). A machine
// whose speed drifts (a shared host) slows both stores alike within a
// round, so the median of the rounds' ratios says more than two
// benchmarks run one after the other.
//
// A round drives each store twice, 1,000 threads at once, each thread
// sending its next message once the previous one is answered:
//   - held threads: b.N/shareRounds turns (at least one a thread) in the
//     same 1,000 threads every round, each answered once before the
//     first round, untimed: threads that already hold a transcript, as
//     in a long conversation;
//   - new threads: one turn in each of 1,000 threads never seen before,
//     as a channel's fresh mentions are.
//
// Before the rounds, untimed, each store also answers one round of new
// threads, so that what a process does once is not in the first round.
// Every message is one word, so no store skips memory write-backs the
// other makes (loadDriver.oneWord).
//
// It reports each store's turns/s in held threads over all rounds,
// share-% and new-share-% (the median round's PostgreSQL turns/s over
// bbolt's, in held and in new threads), and cpu-share-% and
// new-cpu-share-% (the median round's bbolt CPU a turn over PostgreSQL's,
// bot and database server together: what the same CPU serves on
// PostgreSQL). ns/op means nothing here.
func BenchmarkLoadShare(b *testing.B) {
	const threads, shareRounds = 1000, 6
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := pgtest.Start(ctx, pgtest.Options{Durable: true})
	if err != nil {
		b.Skip(err)
	}
	defer srv.Stop()
	url, err := srv.CreateDatabase(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	type store struct {
		plat   *loadPlatform
		submit func(w, k int, in core.Inbound) error
		held   *loadDriver
	}
	stores := make([]store, 2) // bbolt, PostgreSQL
	for i := range stores {
		plat := &loadPlatform{waiting: map[string]chan struct{}{}}
		var stack *bot
		if i == 0 {
			stack, _ = newLoadStack(b, ctx, nil)
			stack.hub.Attach("load", plat)
			if err := stack.hub.Start(ctx); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { stack.hub.Close(context.Background()) })
		} else {
			stack = startPostgresStack(b, ctx, &wg, url, plat)
		}
		submit := func(_, _ int, in core.Inbound) error {
			_, err := stack.hub.Submit(ctx, in)
			return err
		}
		stores[i] = store{plat: plat, submit: submit, held: newLoadDriver(plat, threads, submit)}
		stores[i].held.oneWord = true
		// Untimed: the held threads' first turns, and a round of new
		// threads, so that what a process does once (connections,
		// prepared statements) is not in the first round.
		warm := newLoadDriver(plat, threads, submit)
		warm.base, warm.oneWord = (shareRounds+1)*threads, true
		for _, d := range []*loadDriver{stores[i].held, warm} {
			if _, _, err := d.drive(threads); err != nil {
				b.Fatal(err)
			}
		}
	}

	// measure drives d n turns and returns the wall time and the CPU
	// they took, the database server's too when db.
	measure := func(d *loadDriver, n int, db bool) (took, cpu time.Duration) {
		before, err := srv.Counters(ctx, url)
		if err != nil {
			b.Fatal(err)
		}
		cpu0 := cpuTime()
		if _, took, err = d.drive(n); err != nil {
			b.Fatal(err)
		}
		cpu = cpuTime() - cpu0
		after, err := srv.Counters(ctx, url)
		if err != nil {
			b.Fatal(err)
		}
		if db {
			cpu += after.Sub(before).CPU
		}
		return took, cpu
	}
	per := max(b.N/shareRounds, threads)
	var (
		heldTook                  [2]time.Duration
		shares, cpus, news, nCPUs []float64
	)
	b.ResetTimer()
	for r := range shareRounds {
		var took, cpu, newTook, newCPU [2]time.Duration
		for j := range 2 {
			i := j
			if r%2 == 1 {
				i = 1 - j
			}
			took[i], cpu[i] = measure(stores[i].held, per, i == 1)
			heldTook[i] += took[i]
			fresh := newLoadDriver(stores[i].plat, threads, stores[i].submit)
			fresh.base, fresh.oneWord = (r+1)*threads, true
			newTook[i], newCPU[i] = measure(fresh, threads, i == 1)
		}
		shares = append(shares, took[0].Seconds()/took[1].Seconds())
		cpus = append(cpus, cpu[0].Seconds()/cpu[1].Seconds())
		news = append(news, newTook[0].Seconds()/newTook[1].Seconds())
		nCPUs = append(nCPUs, newCPU[0].Seconds()/newCPU[1].Seconds())
	}
	b.StopTimer()
	turns := float64(per * shareRounds)
	b.ReportMetric(turns/heldTook[0].Seconds(), "bbolt-turns/s")
	b.ReportMetric(turns/heldTook[1].Seconds(), "pg-turns/s")
	b.ReportMetric(100*median(shares), "share-%")
	b.ReportMetric(100*median(cpus), "cpu-share-%")
	b.ReportMetric(100*median(news), "new-share-%")
	b.ReportMetric(100*median(nCPUs), "new-cpu-share-%")
	if testing.Verbose() {
		for r := range shares {
			b.Logf("round %d: PostgreSQL at %.0f%% of bbolt's turns/s (%.0f%% by CPU a turn) in held threads, %.0f%% (%.0f%%) in new ones",
				r+1, 100*shares[r], 100*cpus[r], 100*news[r], 100*nCPUs[r])
		}
	}
}

// median is the middle of xs (the mean of the two middle ones when
// their number is even).
func median(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// logStatements logs the statements run in the database at url so far,
// as runs, server time, rows and WAL bytes per turn, most run first.
func logStatements(b *testing.B, srv *pgtest.Server, url string, turns float64) {
	statements, err := srv.Statements(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	for _, st := range statements {
		if st.Calls > 1 {
			b.Logf("%6.2f/turn %4.0f µs/turn %5.2f rows/turn %5.0f WAL-B/turn  %s", float64(st.Calls)/turns, float64(st.Time.Microseconds())/turns,
				float64(st.Rows)/turns, float64(st.WALBytes)/turns, strings.Join(strings.Fields(st.Query), " "))
		}
	}
}

// cpuTime is the CPU this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
