package llm_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// benchRequest is a mid-conversation agent turn: a system prompt, a few
// exchanges with a tool call, and eight tool schemas.
func benchRequest() llm.ChatRequest {
	req := llm.ChatRequest{Messages: []llm.Message{llm.SystemMessage("You are Neo, a careful assistant. Answer briefly and use tools when they help.")}}
	for i := range 4 {
		id := fmt.Sprintf("call_%d", i)
		req.Messages = append(req.Messages,
			llm.UserMessage("what is the PAX price, and what does my notes file say about it?"),
			llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{llmtest.Call(id, "paxeer__price", `{"symbol":"PAX"}`)}, Reasoning: "need the price"},
			llm.ToolResult(id, "paxeer__price", `{"pax":"0.42","change_24h":"-1.3%"}`),
			llm.AssistantMessage("PAX is trading around $0.42, down 1.3% today."),
		)
	}
	for i := range 8 {
		req.Tools = append(req.Tools, llm.NewFunctionTool(fmt.Sprintf("srv__tool_%d", i), "Does one thing well.", map[string]any{
			"type":       "object",
			"properties": map[string]any{"path": map[string]any{"type": "string"}, "limit": map[string]any{"type": "integer"}},
			"required":   []string{"path"},
		}))
	}
	return req
}

// BenchmarkChat measures one Chat round trip against llmtest on loopback:
// the client's encoding, HTTP and decoding, plus the fake's own (small)
// cost. p50/p99 are per-call latencies.
func BenchmarkChat(b *testing.B) {
	srv := llmtest.New(b)
	body := fixture(b, "together_inline_think.json")
	srv.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Raw(http.StatusOK, body) })
	c := newClient(b, srv, nil)
	req := benchRequest()
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if _, err := c.Chat(ctx, req); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
}
