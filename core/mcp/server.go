package mcp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ToolHandler runs one tool call on a Go [Server]. A returned error
// becomes a JSON-RPC error; a failure the model should see is a Result
// with IsError set.
type ToolHandler func(ctx context.Context, args map[string]any) (Result, error)

// ServerTool is one tool of a Go [Server].
type ServerTool struct {
	Name        string
	Description string
	// InputSchema is the JSON Schema of the arguments; nil means an object
	// with no declared properties.
	InputSchema map[string]any
	Handle      ToolHandler
}

// Server is an MCP tool server written in Go. neobot's tests and
// benchmarks use it in-process ([TransportInProcess]), over stdio and over
// streamable HTTP; Go code can serve its own tools with it.
type Server struct {
	s *server.MCPServer
}

// NewServer returns a server named name at version serving tools. It
// announces tools/list_changed when its tools change, and its tools may
// ask the client questions ([Server.Elicit]).
func NewServer(name, version string, tools ...ServerTool) *Server {
	s := &Server{s: server.NewMCPServer(name, version, server.WithToolCapabilities(true), server.WithRecovery(), server.WithElicitation())}
	s.s.AddTools(serverTools(tools)...)
	return s
}

// SetTools replaces the server's tools and notifies connected clients.
func (s *Server) SetTools(tools ...ServerTool) {
	s.s.SetTools(serverTools(tools)...)
}

// ServeStdio serves one client over in and out until in ends or ctx is
// cancelled.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	return server.NewStdioServer(s.s).Listen(ctx, in, out)
}

// Handler returns a streamable-HTTP handler for the server.
func (s *Server) Handler() http.Handler {
	return server.NewStreamableHTTPServer(s.s)
}

func serverTools(tools []ServerTool) []server.ServerTool {
	out := make([]server.ServerTool, 0, len(tools))
	for _, t := range tools {
		schema := t.InputSchema
		if schema == nil {
			schema = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		raw, err := json.Marshal(schema)
		if err != nil {
			raw = []byte(`{"type":"object","properties":{}}`)
		}
		handle := t.Handle
		out = append(out, server.ServerTool{
			Tool: mcp.NewToolWithRawSchema(t.Name, t.Description, raw),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if handle == nil {
					return toCallResult(ErrorResult("tool " + req.Params.Name + " has no handler")), nil
				}
				if req.Params.Meta != nil && req.Params.Meta.AdditionalFields != nil {
					ctx = WithMeta(ctx, req.Params.Meta.AdditionalFields)
				}
				r, err := handle(ctx, req.GetArguments())
				if err != nil {
					return nil, err
				}
				return toCallResult(r), nil
			},
		})
	}
	return out
}
