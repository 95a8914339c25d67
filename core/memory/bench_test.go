package memory_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/core/memory"
	"github.com/neobot/neobot/core/memory/memorytest"
)

// corpus builds n records in one workspace from a Zipf-distributed
// vocabulary of 20k words, about 16 words each, a tenth carrying an
// identifier, spread over 50 users and 20 channels.
func corpus(n int) (*memorytest.Store, func() string) {
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.1, 2, 20_000-1)
	word := func() string { return fmt.Sprintf("w%x", zipf.Uint64()) }
	st := &memorytest.Store{}
	for i := range n {
		var b strings.Builder
		for range 12 + rng.IntN(8) {
			b.WriteString(word())
			b.WriteByte(' ')
		}
		if i%10 == 0 {
			fmt.Fprintf(&b, "INC-%d", i)
		}
		s := memory.Scope{Platform: "slack", Workspace: "TA"}
		switch i % 3 {
		case 1:
			s.User = fmt.Sprintf("U%d", i%50)
		case 2:
			s.Channel = fmt.Sprintf("C%d", i%20)
		}
		rec := memory.Record{ID: fmt.Sprintf("m%d", i), Scope: s, Kind: memory.KindFact, Text: b.String(), Created: t0, Updated: t0}
		if err := st.WriteMemories(context.Background(), []memory.Record{rec}, nil); err != nil {
			panic(err)
		}
	}
	query := func() string {
		q := []string{word(), word(), word(), word()}
		if rng.IntN(4) == 0 {
			q = append(q, fmt.Sprintf("INC-%d", rng.IntN(n/10)*10))
		}
		return strings.Join(q, " ")
	}
	return st, query
}

// BenchmarkRecall100k measures a top-5 recall over 100k records in one
// workspace and reports p50 and p99 latency.
func BenchmarkRecall100k(b *testing.B) {
	st, query := corpus(100_000)
	c := newCortex(b, memory.Options{Store: st})
	r := memory.Reader{Platform: "slack", Workspace: "TA", User: "U7", Channel: "C7"}
	queries := make([]string, 1024)
	for i := range queries {
		queries[i] = query()
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		c.Recall(r, queries[i%len(queries)], 5, memory.KindFact)
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkNew100k measures rebuilding the index from 100k records, what
// opening the cortex costs.
func BenchmarkNew100k(b *testing.B) {
	st, _ := corpus(100_000)
	for b.Loop() {
		if _, err := memory.New(context.Background(), memory.Options{Store: st}); err != nil {
			b.Fatal(err)
		}
	}
}
