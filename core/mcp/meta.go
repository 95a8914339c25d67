package mcp

import "context"

type metaKey struct{}

// WithMeta returns a context whose tool calls carry meta as their
// request's _meta (an idempotency key, say). Like a trace ID, it belongs
// to the one call made with the context.
func WithMeta(ctx context.Context, meta map[string]any) context.Context {
	return context.WithValue(ctx, metaKey{}, meta)
}

// MetaFrom returns the _meta carried by ctx, nil when none: on the
// client side what WithMeta set, and in a Server's tool handler the
// _meta of the request it serves.
func MetaFrom(ctx context.Context) map[string]any {
	m, _ := ctx.Value(metaKey{}).(map[string]any)
	return m
}
