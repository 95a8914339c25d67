package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/slack/slacktest"
)

// BenchmarkSustained keeps NEO_SUSTAIN_THREADS threads (default 50) busy
// through the built binary for NEO_SUSTAIN (default 30s; the run is
// 10m): each worker mentions the bot in a new thread of its own channel,
// waits for the answer, and goes again. Each worker is its own person, as
// a thousand busy threads are: one person's turns are capped at a quarter
// of NEO_MAX_CONCURRENT_TURNS. It logs, per tenth of the run, replies/s, the
// bot's resident memory (anonymous, and the store file bbolt maps) and the store
// file per turn so far, and reports
// the first and last tenth's replies/s: the last must not decay.
func BenchmarkSustained(b *testing.B) {
	run := 30 * time.Second
	if v := os.Getenv("NEO_SUSTAIN"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("NEO_SUSTAIN=%q: %v", v, err)
		}
		run = d
	}
	workers := 50
	if v := os.Getenv("NEO_SUSTAIN_THREADS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("NEO_SUSTAIN_THREADS=%q: want a positive number of threads", v)
		}
		workers = n
	}
	fake, env, p := startReplyBench(b)
	fake.Unrecorded() // millions of calls would slow the fake, not the bot
	defer func() {
		if os.Getenv("NEO_BENCH_HEAP") != "" || os.Getenv("NEO_BENCH_CPU_PROFILE") != "" {
			// The bot writes its profiles when it stops.
			_ = p.cmd.Process.Signal(os.Interrupt)
			<-p.done
		}
	}()
	var mu sync.Mutex
	answered := map[string]chan struct{}{} // channel -> its worker's signal
	fake.Watch(func(m slacktest.Message) {
		if !m.FromBot() || m.Rendered() != "ok" {
			return
		}
		mu.Lock()
		ch := answered[m.Channel]
		mu.Unlock()
		if ch != nil {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	})

	window := run / 10
	var counts [10]atomic.Int64
	start := time.Now()
	deadline := start.Add(run)
	var wg sync.WaitGroup
	cpu0 := procCPU(b, p.cmd.Process.Pid)
	b.ResetTimer()
	for w := range workers {
		channel, user := fmt.Sprintf("CS%04d", w), fmt.Sprintf("US%04d", w)
		signal := make(chan struct{}, 1)
		mu.Lock()
		answered[channel] = signal
		mu.Unlock()
		wg.Go(func() {
			for time.Now().Before(deadline) {
				d := fake.Mention(slacktest.Msg{User: user, Channel: channel, Text: "hi"})
				select {
				case <-signal:
					fake.ForgetThread(channel, d.TS) // the fake keeps only live threads
				case <-time.After(time.Minute): // a bound on one reply, so a lost one fails the run
					b.Errorf("no answer in %s within a minute", channel)
					return
				}
				if i := int(time.Since(start) / window); i < len(counts) {
					counts[i].Add(1)
				}
			}
		})
	}
	var lines []string
	total, peakAnon := int64(0), int64(0)
	for i := range counts {
		time.Sleep(time.Until(start.Add(time.Duration(i+1) * window))) // the run's clock, not a wait for the bot
		total += counts[i].Load()
		size := int64(0)
		if info, err := os.Stat(env["NEO_DB_PATH"]); err == nil {
			size = info.Size()
		}
		anon := procStatus(b, p.cmd.Process.Pid, "RssAnon")
		peakAnon = max(peakAnon, anon)
		lines = append(lines, fmt.Sprintf("%5s  %7.1f replies/s  RSS %5.1f MB (anonymous %5.1f, file %5.1f)  harness RSS %5.1f MB  store %.2f KB/turn",
			time.Duration(i+1)*window, float64(counts[i].Load())/window.Seconds(), float64(procRSS(b, p.cmd.Process.Pid))/1024,
			float64(anon)/1024, float64(procStatus(b, p.cmd.Process.Pid, "RssFile"))/1024, float64(procRSS(b, os.Getpid()))/1024,
			float64(size)/1024/float64(max(total, 1))))
	}
	wg.Wait()
	b.StopTimer()
	// Printed rather than logged: a benchmark's log keeps only ten lines.
	fmt.Printf("sustained, %d threads:\n%s\n", workers, strings.Join(lines, "\n"))
	first, last := float64(counts[0].Load())/window.Seconds(), float64(counts[9].Load())/window.Seconds()
	b.ReportMetric(first, "first-replies/s")
	b.ReportMetric(last, "last-replies/s")
	b.ReportMetric(last/first, "last/first")
	b.ReportMetric(float64((procCPU(b, p.cmd.Process.Pid)-cpu0).Microseconds())/1000/float64(max(total, 1)), "cpu-per-reply-ms")
	b.ReportMetric(float64(procHWM(b, p.cmd.Process.Pid))/1024, "peak-RSS-MB")
	// The bot's own memory: RSS less the store file's pages bbolt maps,
	// which the kernel can drop at will.
	b.ReportMetric(float64(peakAnon)/1024, "anon-RSS-MB")
}
