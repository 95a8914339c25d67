package main

import (
	"context"
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
// p50/p99 turn latency, and the CPU the process (bot and benchmark, not
// the server) spent per turn.
func BenchmarkLoadPostgres(b *testing.B) {
	ctx := context.Background()
	srv, err := pgtest.Start(ctx, pgtest.Options{Durable: true})
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
			loadPostgres(b, url, run.instances, run.spread)
		})
	}
}

func loadPostgres(b *testing.B, url string, instances int, spread bool) {
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

	driveLoad(b, plat, threads, func(w, k int, in core.Inbound) error {
		to := w
		if spread {
			to += k
		}
		_, err := stacks[to%len(stacks)].hub.Submit(ctx, in)
		return err
	})
}

// cpuTime is the CPU this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
