package mcp

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
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
