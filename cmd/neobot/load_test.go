package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/slack"
	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/conversation"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// loadPlatform is a platform whose Reporter signals each answer: the
// benchmark's stand-in for Slack, so it measures the hub, the agent, the
// model client and bbolt.
type loadPlatform struct {
	mu      sync.Mutex
	waiting map[string]chan struct{} // thread key -> answered
}

func (p *loadPlatform) expect(t core.Thread) chan struct{} {
	ch := make(chan struct{}, 1)
	p.mu.Lock()
	p.waiting[t.Key()] = ch
	p.mu.Unlock()
	return ch
}

func (p *loadPlatform) Reporter(t core.Thread) core.Reporter { return loadReporter{p: p, key: t.Key()} }
func (p *loadPlatform) Approver(core.Thread, string) core.Approver {
	return nil
}

type loadReporter struct {
	p   *loadPlatform
	key string
}

func (r loadReporter) Say(context.Context, string) error {
	r.p.mu.Lock()
	ch := r.p.waiting[r.key]
	r.p.mu.Unlock()
	if ch != nil {
		ch <- struct{}{}
	}
	return nil
}
func (loadReporter) Status(context.Context, string) error { return nil }
func (loadReporter) Notice(context.Context, string) error { return nil }

// newLoadStack builds the product the way `neobot` does (setup, build,
// wire) from settings: llmtest answering every request at once, a bbolt
// file with fsync, a manifest without MCP servers, and the platforms kv
// adds. The hub is not started.
func newLoadStack(b *testing.B, ctx context.Context, kv map[string]string) (*bot, *app) {
	return newStack(b, ctx, kv, func(llmtest.Request) llmtest.Reply { return llmtest.Text("ok") })
}

// newStack is newLoadStack with the model's answers given by handle.
func newStack(b *testing.B, ctx context.Context, kv map[string]string, handle func(llmtest.Request) llmtest.Reply) (*bot, *app) {
	b.Helper()
	model := llmtest.New(b)
	model.Handle(handle)
	settings := map[string]string{
		"NEO_MODEL":        "load",
		"NEO_LLM_BASE_URL": model.BaseURL(),
		"NEO_DB_PATH":      filepath.Join(b.TempDir(), "load.db"),
		"NEO_MANIFEST":     emptyManifest(b),
		"NEO_LOG_LEVEL":    "error",
		// The load measures the bot, driven by a few users far past one
		// person's share.
		"NEO_USER_MESSAGES_PER_MINUTE": "0",
		"NEO_USER_BYTES_PER_DAY":       "0",
	}
	maps.Copy(settings, kv)
	m := &Main{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(k string) string { return settings[k] }}
	b.Cleanup(func() { m.Close() })
	cfg, _, log, err := m.setup("neobot", nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	a, err := m.build(ctx, cfg, log, buildOptions{model: true})
	if err != nil {
		b.Fatal(err)
	}
	bot, err := m.wire(cfg, log, a)
	if err != nil {
		b.Fatal(err)
	}
	return bot, a
}

// BenchmarkLoad drives 1,000 concurrent threads through the whole core
// stack as neobot builds it — conversation hub, agent, memory and its
// write-back, bbolt with fsync, the LLM client over loopback — with
// llmtest answering at once. Each thread sends its
// next message when the previous one is answered. It reports turns/s,
// p50/p99 turn latency (submit to answer) and the process's peak RSS.
func BenchmarkLoad(b *testing.B) {
	const threads = 1000
	ctx := context.Background()
	stack, _ := newLoadStack(b, ctx, nil)
	hub := stack.hub
	plat := &loadPlatform{waiting: map[string]chan struct{}{}}
	hub.Attach("load", plat)
	if err := hub.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer hub.Close(ctx)

	driveLoad(b, plat, threads, func(w, k int, in core.Inbound) error {
		_, err := hub.Submit(ctx, in)
		return err
	})
	if rss, ok := peakRSS(); ok {
		b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MB")
	}
}

// driveLoad sends b.N messages from threads concurrent threads, each
// sending its next message once the previous one is answered on plat,
// through submit (w is the thread, k its message's number in it), and
// reports turns/s, the CPU the process spent per turn, and p50/p99 turn
// latency (submit to answer).
func driveLoad(b *testing.B, plat *loadPlatform, threads int, submit func(w, k int, in core.Inbound) error) {
	d := newLoadDriver(plat, threads, submit)
	cpu0 := cpuTime()
	b.ResetTimer()
	latencies, elapsed, err := d.drive(b.N)
	b.StopTimer()
	cpu := cpuTime() - cpu0
	if err != nil {
		b.Fatal(err)
	}
	slices.Sort(latencies)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "turns/s")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/turn")
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1000, "p99-ms")
}

// loadDriver sends messages from a fixed set of threads, each thread
// sending its next message once the previous one is answered. Successive
// drives go on in the same threads, so a drive after the first measures
// threads that already hold a transcript.
type loadDriver struct {
	plat    *loadPlatform
	base    int // the first thread's number; the others follow
	threads int
	submit  func(w, k int, in core.Inbound) error // w the thread, k its message's number in it
	sent    []int                                 // messages each thread has sent
	ids     int                                   // messages sent in all threads, for event IDs
	// oneWord sends "ping" alone, a message too short to state a fact:
	// its memory write-back asks no model and is never skipped. Longer
	// ones ask the model for facts after the answer, eight at a time at
	// most; under this load the rest are skipped, and the faster a store
	// answers, the more it skips: two stores driven so do different work.
	oneWord bool
}

func newLoadDriver(plat *loadPlatform, threads int, submit func(w, k int, in core.Inbound) error) *loadDriver {
	return &loadDriver{plat: plat, threads: threads, submit: submit, sent: make([]int, threads)}
}

// drive sends n messages and returns each one's latency (submit to
// answer) and the wall time they took.
func (d *loadDriver) drive(n int) ([]time.Duration, time.Duration, error) {
	var (
		mu        sync.Mutex
		latencies = make([]time.Duration, 0, n)
		firstErr  error
		next      = make(chan int, n) // event numbers still to send
		wg        sync.WaitGroup
	)
	for i := range n {
		next <- d.ids + i
	}
	close(next)
	d.ids += n
	begin := time.Now()
	for w := range d.threads {
		wg.Go(func() {
			t := core.Thread{Platform: "load", Workspace: "W", Channel: "C", ID: strconv.Itoa(d.base + w)}
			for i := range next {
				done := d.plat.expect(t)
				start := time.Now()
				text := "ping " + strconv.Itoa(i)
				if d.oneWord {
					text = "ping"
				}
				in := core.Inbound{Thread: t, User: "U" + strconv.Itoa(w), Text: text, EventID: "ev" + t.ID + "." + strconv.Itoa(i), At: start}
				if err := d.submit(w, d.sent[w], in); err != nil {
					mu.Lock()
					firstErr = cmp.Or(firstErr, err)
					mu.Unlock()
					return
				}
				d.sent[w]++
				<-done
				mu.Lock()
				latencies = append(latencies, time.Since(start))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return latencies, time.Since(begin), firstErr
}

// answerSignal wraps a platform so the benchmark learns when each turn's
// answer has been posted through the real adapter.
type answerSignal struct {
	conversation.Platform
	mu      sync.Mutex
	started map[string]time.Time // thread key -> mention sent
	lat     []time.Duration      // mention -> answer posted
	status  []time.Duration      // mention -> first status posted
	shown   map[string]bool      // threads whose first status is counted
	done    sync.WaitGroup
}

// Redelivers passes on the adapter's answer, so the hub takes the
// platform's messages as it does in production.
func (p *answerSignal) Redelivers() bool {
	r, ok := p.Platform.(conversation.Redeliverer)
	return ok && r.Redelivers()
}

func (p *answerSignal) Reporter(t core.Thread) core.Reporter {
	return signalReporter{Reporter: p.Platform.Reporter(t), p: p, key: t.Key()}
}

type signalReporter struct {
	core.Reporter
	p   *answerSignal
	key string
}

func (r signalReporter) Status(ctx context.Context, text string) error {
	err := r.Reporter.Status(ctx, text)
	r.p.mu.Lock()
	if at, ok := r.p.started[r.key]; ok && !r.p.shown[r.key] {
		r.p.shown[r.key] = true
		r.p.status = append(r.p.status, time.Since(at))
	}
	r.p.mu.Unlock()
	return err
}

func (r signalReporter) Say(ctx context.Context, text string) error {
	err := r.Reporter.Say(ctx, text)
	r.p.mu.Lock()
	if at, ok := r.p.started[r.key]; ok {
		r.p.lat = append(r.p.lat, time.Since(at))
		delete(r.p.started, r.key)
		r.p.done.Done()
	}
	r.p.mu.Unlock()
	return err
}

// BenchmarkLoadSlack drives 1,000 concurrent Slack threads through the
// whole product in one process, built as neobot builds it: the fake Slack's Socket Mode websocket,
// the Slack adapter (ack, dedupe, rendering, Web API calls), the hub, the
// agent, memory, bbolt with fsync and the LLM client, with llmtest
// answering at once. Each op is one turn; mentions go out in waves of
// 1,000, one per channel. Peak RSS includes the fakes.
func BenchmarkLoadSlack(b *testing.B) {
	const threads = 1000
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fake := slacktest.New(b)
	stack, _ := newLoadStack(b, ctx, map[string]string{
		"SLACK_BOT_TOKEN": "xoxb-load", "SLACK_APP_TOKEN": "xapp-load", "SLACK_API_URL": fake.APIURL(),
	})
	hub, sl := stack.hub, stack.platforms[0]
	sig := &answerSignal{Platform: sl.adapter, started: map[string]time.Time{}, shown: map[string]bool{}}
	hub.Attach(slack.Platform, sig)
	if err := hub.Start(ctx); err != nil {
		b.Fatal(err)
	}
	runDone := make(chan error, 1)
	go func() { runDone <- sl.run(ctx) }()
	if err := fake.WaitConnected(ctx); err != nil {
		b.Fatal(err)
	}

	b.ResetTimer()
	begin := time.Now()
	for sent := 0; sent < b.N; {
		wave := min(threads, b.N-sent)
		if *firstStatus {
			wave = 1
		}
		sig.done.Add(wave)
		for i := range wave {
			ch := fmt.Sprintf("C%04d", i)
			sig.mu.Lock()
			d := fake.Mention(slacktest.Msg{User: "U" + strconv.Itoa(i), Channel: ch, Text: "ping"})
			sig.started[core.Thread{Platform: slack.Platform, Workspace: slacktest.TeamID, Channel: ch, ID: d.TS}.Key()] = time.Now()
			sig.mu.Unlock()
		}
		sig.done.Wait()
		sent += wave
	}
	elapsed := time.Since(begin)
	b.StopTimer()
	cancel()
	<-runDone
	hub.Close(context.Background())

	slices.Sort(sig.lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "turns/s")
	b.ReportMetric(float64(sig.lat[len(sig.lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(sig.lat[len(sig.lat)*99/100].Microseconds())/1000, "p99-ms")
	if rss, ok := peakRSS(); ok {
		b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MB")
	}
	if *firstStatus {
		slices.Sort(sig.status)
		b.ReportMetric(float64(sig.status[len(sig.status)/2].Microseconds())/1000, "status-p50-ms")
		b.ReportMetric(float64(sig.status[len(sig.status)*99/100].Microseconds())/1000, "status-p99-ms")
	}
}

// firstStatus turns BenchmarkLoadSlack into the event -> first visible
// status measurement: one thread at a time, so the figure is the pipeline's
// latency rather than queueing behind 1,000 threads.
var firstStatus = flag.Bool("first-status", false, "BenchmarkLoadSlack: one mention at a time, report event -> first status")

// peakRSS reads the process's high-water resident set size from /proc.
func peakRSS() (int64, bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err == nil {
				return kb << 10, true
			}
		}
	}
	return 0, false
}
