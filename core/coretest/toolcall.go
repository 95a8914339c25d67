package coretest

import (
	"context"

	"github.com/neobot/neobot/core"
)

// ToolCall is the call of the function name with args that the model would
// make in ctx's turn (core.WithTurn), under ctx's tool call ID
// (core.WithToolCall): for tests that set up a turn in a context. Outside
// a turn the call has none, and a tool surface refuses it.
func ToolCall(ctx context.Context, name string, args map[string]any) core.ToolCall {
	t, _ := core.TurnFrom(ctx)
	return t.Call(core.ToolCallFrom(ctx), name, args)
}
