package mcp

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/neobot/neobot/core/mcp/oauth/oauthtest"
)

// reportLatency reports the p50 and p99 of per-call durations.
func reportLatency(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(d[len(d)*99/100].Nanoseconds())/1e3, "p99-µs")
}

func benchCall(b *testing.B, m *Manager, alias string) {
	ctx := context.Background()
	args := map[string]any{"text": "ping"}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t := time.Now()
		if _, err := m.Call(ctx, alias, "echo", args); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t))
	}
	b.StopTimer()
	reportLatency(b, lat)
}

// BenchmarkCall measures one tool call round trip (budget over stdio to a
// Go server: p50 <= 500 µs).
func BenchmarkCall(b *testing.B) {
	b.Run("inprocess", func(b *testing.B) {
		m := start(b, Options{Manifest: manifest(inProc("t")), InProcess: map[string]*Server{"t": NewServer("t", "1", testTools(0)...)}})
		benchCall(b, m, "t")
	})
	b.Run("stdio-go", func(b *testing.B) {
		m := start(b, Options{Manifest: manifest(goStdio("go")), LookupEnv: testEnv(nil).lookup})
		benchCall(b, m, "go")
	})
}

// BenchmarkCallInPlace is BenchmarkCall/stdio-go through a place's
// process, already up: the difference is what the place lookup adds to a
// warm call (budget <= 100 µs).
func BenchmarkCallInPlace(b *testing.B) {
	spec := placeStdio("go", b.TempDir())
	m := start(b, Options{Manifest: manifest(spec), LookupEnv: testEnv(nil).lookup})
	place := Place{Platform: "slack", Workspace: "T0BENCH", User: "U0BENCH"}
	ctx := context.Background()
	if _, err := m.CallIn(ctx, place, "go", "echo", map[string]any{"text": "warm up"}); err != nil {
		b.Fatal(err)
	}
	args := map[string]any{"text": "ping"}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t := time.Now()
		if _, err := m.CallIn(ctx, place, "go", "echo", args); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t))
	}
	b.StopTimer()
	reportLatency(b, lat)
}

// BenchmarkPlaceLookup measures the lookup alone: find a warm place's
// process among live ones, hold it, let it go (budget <= 100 µs).
func BenchmarkPlaceLookup(b *testing.B) {
	spec := placeStdio("go", b.TempDir())
	spec.MaxProcesses = 4
	m := start(b, Options{Manifest: manifest(spec), LookupEnv: testEnv(nil).lookup})
	ctx := context.Background()
	var places []Place
	for i := range 4 {
		p := Place{Platform: "slack", Workspace: fmt.Sprintf("T%d", i), User: "U0BENCH"}
		if _, err := m.CallIn(ctx, p, "go", "echo", map[string]any{"text": "warm up"}); err != nil {
			b.Fatal(err)
		}
		places = append(places, p)
	}
	p := m.byAlias["go"].pool
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			pr, err := p.acquire(ctx, places[i%len(places)])
			if err != nil {
				b.Error(err)
				return
			}
			p.release(pr)
			i++
		}
	})
}

// BenchmarkBoot starts n stdio servers that each take 200 ms to come up:
// a parallel start takes about 200 ms whatever n, a serial one n × 200 ms.
func BenchmarkBoot(b *testing.B) {
	for _, n := range []int{1, 4, 8} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			var specs []ServerSpec
			for i := range n {
				specs = append(specs, goStdio(fmt.Sprintf("s%d", i)))
			}
			env := testEnv(map[string]string{"TEST_DELAY": "200ms"})
			for range b.N {
				m, err := Start(context.Background(), Options{Manifest: manifest(specs...), LookupEnv: env.lookup, StopGrace: time.Second})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				for _, st := range m.Status() {
					if st.State != StateUp {
						b.Fatalf("%s: %s %s", st.Alias, st.State, st.Problem)
					}
				}
				_ = m.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/boot")
		})
	}
}

// BenchmarkCallHTTP measures a tool call over streamable HTTP on
// loopback, plain and behind OAuth (the bearer added, the sealed grant
// read from the token store and opened on every request): the difference
// is what OAuth costs a call.
func BenchmarkCallHTTP(b *testing.B) {
	b.Run("plain", func(b *testing.B) {
		srv := httptest.NewServer(NewServer("h", "1", testTools(0)...).Handler())
		b.Cleanup(srv.Close)
		m := start(b, Options{Manifest: manifest(ServerSpec{Alias: "h", Transport: TransportHTTP, URL: srv.URL, Version: "1.0.0", Tools: testToolNames})})
		benchCall(b, m, "h")
	})
	b.Run("oauth", func(b *testing.B) {
		prot := oauthtest.New(b, NewServer("h", "1", testTools(0)...).Handler())
		feed := make(statusFeed, 64)
		m := start(b, Options{
			Manifest:       manifest(ServerSpec{Alias: "h", Transport: TransportHTTP, URL: prot.URL(), Auth: AuthOAuth, Version: "1.0.0", Tools: testToolNames}),
			OAuth:          &OAuth{Tokens: &memTokens{m: map[string][]byte{}}, Key: make([]byte, 32), RedirectURL: "http://127.0.0.1:9/cb"},
			RestartBackoff: time.Hour, OnStatus: feed.on,
		})
		ctx := context.Background()
		u, err := m.Login(ctx, "h")
		if err != nil {
			b.Fatal(err)
		}
		code, state := openLogin(b, u)
		if _, _, err := m.FinishLogin(ctx, state, code, ""); err != nil {
			b.Fatal(err)
		}
		for m.Status()[0].State != StateUp {
			<-feed
		}
		benchCall(b, m, "h")
	})
}
