package slack

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core"
)

// BenchmarkEventToAck measures a Socket Mode envelope's round trip: sent
// by the fake, read, acked, ack read back (budget: p99 <= 5 ms).
func BenchmarkEventToAck(b *testing.B) {
	e := start(b, nil)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		d := e.slack.Mention(slacktest.Msg{User: "UALICE", Channel: fmt.Sprintf("C%d", i%64), Text: "hi"})
		a := e.ack(d)
		lat = append(lat, a.At.Sub(d.Sent))
	}
	b.StopTimer()
	reportPercentiles(b, lat)
	e.idle()
}

// BenchmarkThreads drives many threads at once through the adapter: a
// mention each, answered at once by the turn, until every answer is posted
// to the fake. It reports completed turns per second.
func BenchmarkThreads(b *testing.B) {
	const threads = 1000
	e := start(b, nil)
	var done sync.WaitGroup
	e.hub.OnTurn(func(ctx context.Context, in core.Inbound) {
		defer done.Done()
		_ = e.a.Reporter(in.Thread).Say(ctx, "ok")
	})
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		done.Add(threads)
		for i := range threads {
			e.slack.Mention(slacktest.Msg{User: "UALICE", Channel: fmt.Sprintf("C%04d", i), Text: "go"})
		}
		done.Wait()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*threads)/time.Since(start).Seconds(), "turns/s")
}

// BenchmarkRender measures converting and splitting a long answer.
func BenchmarkRender(b *testing.B) {
	src := longAnswer()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		_ = split(mrkdwn(src), maxMessageChars)
	}
}

func longAnswer() string {
	s := ""
	for i := range 40 {
		s += fmt.Sprintf("Paragraph %d with **bold**, *italics* and [a link](https://example.com/%d).\n\n", i, i)
	}
	s += "```go\n"
	for i := range 300 {
		s += fmt.Sprintf("x%d := a < b && c > d // %d\n", i, i)
	}
	return s + "```\n"
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(float64(len(lat))*p))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}
