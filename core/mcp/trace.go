package mcp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"maps"

	"github.com/neobot/neobot/core"
)

// traceKey is the _meta key of the W3C trace context (traceparent) a
// tool call carries, so a server's logs and traces can be joined with
// neobot's.
const traceKey = "traceparent"

// traceparent is the W3C trace context of a tool call made with ctx:
// version 00, a trace ID shared by every call of one turn (derived from
// its thread and event, so a turn resumed after a restart keeps its
// trace), a span ID for the call (derived from the trace and the model's
// tool call ID), and the sampled flag (neobot logs it with the call).
// Outside a turn, or without a call ID, the IDs are random.
func traceparent(ctx context.Context) string {
	var trace [16]byte
	if t, ok := core.TurnFrom(ctx); ok && t.Inbound.EventID != "" {
		sum := sha256.Sum256([]byte("neobot turn\x00" + t.Inbound.Thread.Key() + "\x00" + t.Inbound.EventID))
		copy(trace[:], sum[:])
	} else {
		_, _ = rand.Read(trace[:])
	}
	var span [8]byte
	if id := core.ToolCallFrom(ctx); id != "" {
		sum := sha256.Sum256(append(trace[:], "\x00"+id...))
		copy(span[:], sum[:])
	} else {
		_, _ = rand.Read(span[:])
	}
	return "00-" + hex.EncodeToString(trace[:]) + "-" + hex.EncodeToString(span[:]) + "-01"
}

// callMeta is the _meta of a tool call made with ctx: what WithMeta put
// there, and a traceparent unless that already has one.
func callMeta(ctx context.Context) map[string]any {
	meta := maps.Clone(MetaFrom(ctx))
	if meta == nil {
		meta = map[string]any{}
	}
	if _, ok := meta[traceKey]; !ok {
		meta[traceKey] = traceparent(ctx)
	}
	return meta
}
