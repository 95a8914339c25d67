package conversation

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
)

// benchJournal is an in-memory Journal that signals each thread's client
// when its message completes.
type benchJournal struct {
	mu      sync.Mutex
	seen    map[string]struct{}
	pending map[string]core.Inbound
	done    map[string]chan time.Time // thread ID -> its client; the map is read-only
}

func (j *benchJournal) JournalInbound(ctx context.Context, in core.Inbound) (bool, error) {
	k := eventKey(in)
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, ok := j.seen[k]; ok {
		return false, nil
	}
	j.seen[k] = struct{}{}
	j.pending[k] = in
	return true, nil
}

func (j *benchJournal) CompleteInbound(ctx context.Context, t core.Thread, eventID string) error {
	j.mu.Lock()
	delete(j.pending, t.Platform+"\x00"+eventID)
	j.mu.Unlock()
	j.done[t.ID] <- time.Now()
	return nil
}

func (j *benchJournal) PendingInbound(ctx context.Context) ([]core.Inbound, error) { return nil, nil }

// nopPlatform's reporters discard everything.
type nopPlatform struct{}

func (nopPlatform) Reporter(core.Thread) core.Reporter         { return nopReporter{} }
func (nopPlatform) Approver(core.Thread, string) core.Approver { return nil }

type nopReporter struct{}

func (nopReporter) Say(context.Context, string) error    { return nil }
func (nopReporter) Status(context.Context, string) error { return nil }
func (nopReporter) Notice(context.Context, string) error { return nil }

// BenchmarkHubThroughput drives 1,000 threads at once, each a user who
// sends a message and waits for the answer before sending the next. It
// reports completed turns per second and the latency of a turn from Submit
// to its completion in the journal (p50, p99; the budget is p99 <= 10x
// p50, no thread starved).
//
// "instant": the runner answers at once, so the figures are the hub's own
// overhead with the CPU saturated. "model=2ms": each turn waits 2 ms, as
// for a model call, so 1,000 threads queue for 64 turn slots and the
// latency spread shows the fairness of the scheduling.
func BenchmarkHubThroughput(b *testing.B) {
	instant := runFunc(func(ctx context.Context, t core.Turn) error { return t.Reporter.Say(ctx, "ok") })
	model := runFunc(func(ctx context.Context, t core.Turn) error {
		tm := time.NewTimer(2 * time.Millisecond)
		defer tm.Stop()
		select {
		case <-tm.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		return t.Reporter.Say(ctx, "ok")
	})
	b.Run("instant", func(b *testing.B) { benchHub(b, 1000, instant) })
	b.Run("model=2ms", func(b *testing.B) { benchHub(b, 1000, model) })
}

func benchHub(b *testing.B, threads int, runner Runner) {
	j := &benchJournal{seen: map[string]struct{}{}, pending: map[string]core.Inbound{}, done: map[string]chan time.Time{}}
	ids := make([]string, threads)
	for i := range ids {
		ids[i] = fmt.Sprintf("T%04d", i)
		j.done[ids[i]] = make(chan time.Time, 1)
	}
	h := New(Options{Runner: runner, Journal: j})
	h.Attach("test", nopPlatform{})
	if err := h.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	lat := make([][]time.Duration, threads)

	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for c := range threads {
		n := b.N / threads
		if c < b.N%threads {
			n++
		}
		wg.Go(func() {
			lat[c] = make([]time.Duration, 0, n)
			for m := range n {
				in := msg(ids[c], ids[c]+"-"+strconv.Itoa(m), "hi")
				t0 := time.Now()
				if ok, err := h.Submit(ctx, in); !ok || err != nil {
					b.Errorf("Submit() = %v, %v", ok, err)
					return
				}
				lat[c] = append(lat[c], (<-j.done[ids[c]]).Sub(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err := h.Close(ctx); err != nil {
		b.Fatal(err)
	}

	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		return
	}
	pct := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))].Microseconds()) }
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "turns/s")
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	if rss, ok := peakRSS(); ok {
		b.ReportMetric(rss, "peak-RSS-MB")
	}
}

// peakRSS returns the process's peak resident set size in MB (Linux).
func peakRSS() (float64, bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024, err == nil
		}
	}
	return 0, false
}
