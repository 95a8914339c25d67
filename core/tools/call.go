package tools

import (
	"context"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/mcp"
)

// callTool makes the MCP call: at the place of the call's turn (a server
// that runs one process per place answers from that place's own), under
// the call timeout, which pauses while a person answers a question the
// server asked. The turn rides in the call's context only for those
// questions, which the server asks through the MCP client.
func (s *Surface) callTool(ctx context.Context, call core.ToolCall, b binding) (mcp.Result, error) {
	ctx = core.WithToolCall(core.WithTurn(ctx, call.Turn()), call.ID())
	callCtx, cancel := s.callContext(ctx, call, b)
	defer cancel()
	return s.mgr.CallIn(callCtx, placeOf(call.Turn().Inbound), b.alias, b.tool, call.Args())
}
