package main

import (
	"context"
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
		stack, a := newLoadStack(b, ctx, map[string]string{"NEO_DATABASE_URL": url})
		stack.hub.Attach("load", plat)
		if err := stack.hub.Start(ctx); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { stack.hub.Close(context.Background()) })
		wg.Go(func() { a.cluster.Run(ctx, cluster.Targets{Hub: stack.hub, Gates: a.gates, Memory: a.cortex}) })
		stacks = append(stacks, stack)
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
