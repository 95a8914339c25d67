package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/adaptertest"
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
	adaptertest.ReportPercentiles(b, lat)
	e.idle()
}

// BenchmarkWorkspacesEventToAck is BenchmarkEventToAck for a distributed
// Neo over HTTP: each event, alternately from two installed workspaces,
// verified, routed by team_id to its installation's adapter, journaled and
// acked (budget: p99 <= 5 ms).
func BenchmarkWorkspacesEventToAck(b *testing.B) {
	e := startWorkspaces(b)
	teams := []string{"T1", "T2"}
	for _, team := range teams {
		e.install(slacktest.Installer{Team: team})
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		team := teams[i%2]
		d := e.slack.Mention(slacktest.Msg{Team: team, User: "UALICE", Channel: fmt.Sprintf("C%s%d", team, i%64), Text: "hi"})
		a, err := e.slack.WaitAck(e.ctx, d)
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, a.At.Sub(d.Sent))
	}
	b.StopTimer()
	adaptertest.ReportPercentiles(b, lat)
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
	src := adaptertest.LongAnswer()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		_ = split(mrkdwn(src), maxMessageChars)
	}
}

// BenchmarkParseEnvelope reads a Socket Mode envelope the way the socket
// reader does: a mention as the fake sends it, the same with the
// authorizations and rich-text block real Slack adds, and the message
// event Slack sends beside every mention.
func BenchmarkParseEnvelope(b *testing.B) {
	for _, tc := range []struct{ name, raw string }{
		{"plain", `{"envelope_id":"e1","type":"events_api","accepts_response_payload":false,"retry_attempt":0,"retry_reason":"","payload":{"token":"t","team_id":"T0TEAM","api_app_id":"A1","type":"event_callback","event_id":"Ev000123","event_time":1700000000,"event":{"type":"app_mention","user":"UBENCH","text":"<@UNEO> hi","ts":"1700000000.000100","channel":"C0BENCH12","event_ts":"1700000000.000100","team":"T0TEAM"}}}`},
		{"blocks", `{"envelope_id":"e1","type":"events_api","accepts_response_payload":false,"retry_attempt":0,"retry_reason":"","payload":{"token":"t","team_id":"T0TEAM","api_app_id":"A1","type":"event_callback","event_id":"Ev000123","event_time":1700000000,"authorizations":[{"enterprise_id":null,"team_id":"T0TEAM","user_id":"UNEO","is_bot":true}],"event":{"type":"app_mention","user":"UBENCH","text":"<@UNEO> hi","ts":"1700000000.000100","channel":"C0BENCH12","event_ts":"1700000000.000100","team":"T0TEAM","blocks":[{"type":"rich_text","block_id":"abc","elements":[{"type":"rich_text_section","elements":[{"type":"user","user_id":"UNEO"},{"type":"text","text":" hi"}]}]}]}}}`},
		{"message", `{"envelope_id":"e1","type":"events_api","accepts_response_payload":false,"retry_attempt":0,"retry_reason":"","payload":{"token":"t","team_id":"T0TEAM","api_app_id":"A1","type":"event_callback","event_id":"Ev000123","event_time":1700000000,"event":{"type":"message","user":"UBENCH","text":"<@UNEO> hi","ts":"1700000000.000100","channel":"C0BENCH12","channel_type":"channel","event_ts":"1700000000.000100","team":"T0TEAM"}}}`},
	} {
		raw := []byte(tc.raw)
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				env, err := decodeEnvelope(raw)
				if err != nil || env.callbackErr != nil {
					b.Fatal(err, env.callbackErr)
				}
			}
		})
		// The same frame read the way decodeEnvelope falls back to: the
		// frame, then the callback event type by event type. The one-pass
		// reading above is kept only while it beats this one
		// (docs/budgets.md, "Second implementations").
		b.Run(tc.name+"-typed", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var env envelope
				if err := json.Unmarshal(raw, &env); err != nil {
					b.Fatal(err)
				}
				if _, err := parseCallbackTyped(env.Payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHTTPEventToAck is BenchmarkEventToAck in HTTP mode, one
// workspace: the baseline of BenchmarkWorkspacesEventToAck.
func BenchmarkHTTPEventToAck(b *testing.B) {
	e, _ := startHTTP(b)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		d := e.slack.Mention(slacktest.Msg{User: "UALICE", Channel: fmt.Sprintf("C%d", i%64), Text: "hi"})
		lat = append(lat, e.ack(d).At.Sub(d.Sent))
	}
	b.StopTimer()
	adaptertest.ReportPercentiles(b, lat)
	e.idle()
}
