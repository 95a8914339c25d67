package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
)

// Journaler is what BenchJournal writes with.
type Journaler interface {
	JournalInbound(ctx context.Context, in core.Inbound) (fresh bool, err error)
}

// BenchJournal journals b.N new messages from writers concurrent writers
// (each in its own thread) and reports journal writes per second and the
// p50 and p99 of one write: the durable step every message pays before
// it is acknowledged to the platform.
func BenchJournal(b *testing.B, db Journaler, writers int) {
	var (
		next sync.WaitGroup
		n    atomic.Int64
		mu   sync.Mutex
		lat  = make([]time.Duration, 0, b.N)
	)
	b.ResetTimer()
	start := time.Now()
	for w := range writers {
		next.Go(func() {
			th := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: fmt.Sprintf("w%d", w)}
			var mine []time.Duration
			for i := n.Add(1); i <= int64(b.N); i = n.Add(1) {
				t0 := time.Now()
				fresh, err := db.JournalInbound(context.Background(), core.Inbound{Thread: th, User: "U1", Text: "hello", EventID: fmt.Sprint("E", i), At: t0})
				if err != nil || !fresh {
					b.Errorf("JournalInbound = %v, %v", fresh, err)
					return
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	next.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "writes/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
