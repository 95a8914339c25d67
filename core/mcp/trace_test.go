package mcp

import (
	"context"
	"regexp"
	"testing"

	"github.com/neobot/neobot/core"
)

// TestTraceparent: every tool call carries a W3C traceparent in _meta.
// The calls of one turn share its trace ID (the same again when the
// turn is resumed after a restart: it derives from the turn's event),
// each call has its own span ID, another turn has another trace, and a
// traceparent the caller put in _meta is kept.
func TestTraceparent(t *testing.T) {
	srv := NewServer("trace", "1.0.0", ServerTool{Name: "trace", Handle: func(ctx context.Context, _ map[string]any) (Result, error) {
		tp, _ := MetaFrom(ctx)[traceKey].(string)
		return TextResult(tp), nil
	}})
	m := start(t, Options{Manifest: manifest(ServerSpec{Alias: "t", Transport: TransportInProcess, Version: "1.0.0", Tools: []string{"trace"}}),
		InProcess: map[string]*Server{"t": srv}})
	call := func(ctx context.Context) string {
		t.Helper()
		res, err := m.Call(ctx, "t", "trace", nil)
		if err != nil || res.IsError {
			t.Fatalf("Call() = %+v, %v", res, err)
		}
		return res.Content[0].Text
	}
	turn := func(event string) context.Context {
		return core.WithTurn(context.Background(), &core.Turn{Inbound: core.Inbound{EventID: event, Thread: core.Thread{Platform: "web", Channel: "c1"}}})
	}
	format := regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-01$`)
	parts := func(tp string) (trace, span string) {
		t.Helper()
		m := format.FindStringSubmatch(tp)
		if m == nil {
			t.Fatalf("traceparent %q is not a W3C trace context", tp)
		}
		return m[1], m[2]
	}
	first := call(core.WithToolCall(turn("E1"), "call_1"))
	trace1, span1 := parts(first)
	trace2, span2 := parts(call(core.WithToolCall(turn("E1"), "call_2")))
	if trace2 != trace1 || span2 == span1 {
		t.Errorf("two calls of one turn: traces %s, %s and spans %s, %s; want one trace, two spans", trace1, trace2, span1, span2)
	}
	if again := call(core.WithToolCall(turn("E1"), "call_1")); again != first {
		t.Errorf("the same call of a resumed turn carries %s, want %s again", again, first)
	}
	if other, _ := parts(call(core.WithToolCall(turn("E2"), "call_1"))); other == trace1 {
		t.Errorf("another turn shares trace %s", other)
	}
	parts(call(context.Background())) // outside a turn: random, but well-formed
	given := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	if got := call(WithMeta(context.Background(), map[string]any{traceKey: given})); got != given {
		t.Errorf("a caller's traceparent became %s, want it kept", got)
	}
}
