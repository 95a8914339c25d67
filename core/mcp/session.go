package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// DialOptions configures [Dial].
type DialOptions struct {
	// URL is the streamable-HTTP server's endpoint.
	URL string
	// HTTPClient sends the requests; its transport is where an OAuth layer
	// ([github.com/neobot/neobot/core/mcp/oauth.Transport]) goes. Nil means
	// http.DefaultClient.
	HTTPClient *http.Client
	// ClientName and ClientVersion are reported in the handshake (default
	// "neobot" and "dev").
	ClientName    string
	ClientVersion string
	// OnElicit, when set, answers the server's form elicitations
	// (elicitation/create): it gets the message and the requested schema
	// and returns "accept", "decline" or "cancel" and, on accept, the
	// content. Nil declares no elicitation capability.
	OnElicit func(ctx context.Context, message string, schema map[string]any) (action string, content map[string]any, err error)
}

// Session is one client connection to one streamable-HTTP MCP server,
// outside any manifest: no bijection, no supervision. The conformance
// client and one-off tools use it; the agent's servers run under a
// [Manager].
type Session struct {
	c *client.Client
}

// Dial connects to the server at opts.URL and performs the handshake.
// ctx bounds the handshake; the session lives until Close.
func Dial(ctx context.Context, opts DialOptions) (*Session, error) {
	hc := opts.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	tr, err := transport.NewStreamableHTTP(opts.URL, transport.WithHTTPBasicClient(hc), transport.WithContinuousListening())
	if err != nil {
		return nil, fmt.Errorf("mcp: dial %s: %w", opts.URL, err)
	}
	copts := []client.ClientOption{client.WithProtocolVersion(ProtocolVersion)}
	if opts.OnElicit != nil {
		copts = append(copts, client.WithElicitationHandler(elicitFunc(opts.OnElicit)))
	}
	s := &Session{c: client.NewClient(tr, copts...)}
	if err := s.c.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, fmt.Errorf("mcp: dial %s: start: %w", opts.URL, err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = ProtocolVersion
	init.Params.ClientInfo = mcp.Implementation{Name: or(opts.ClientName, "neobot"), Version: or(opts.ClientVersion, "dev")}
	if opts.OnElicit != nil {
		init.Params.Capabilities.Elicitation = &mcp.ElicitationCapability{Form: &struct{}{}}
	}
	if _, err := s.c.Initialize(ctx, init); err != nil {
		_ = s.c.Close()
		return nil, fmt.Errorf("mcp: dial %s: initialize: %w", opts.URL, err)
	}
	return s, nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Tools lists the server's tools, sorted by name.
func (s *Session) Tools(ctx context.Context) ([]Tool, error) {
	return listTools(ctx, &conn{client: s.c}, ServerSpec{})
}

// Call calls one tool. A tool failure is a Result with IsError; a
// protocol or transport failure is an error.
func (s *Session) Call(ctx context.Context, tool string, args map[string]any) (Result, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := s.c.CallTool(ctx, req)
	if err != nil {
		return Result{}, fmt.Errorf("mcp: call %s: %w", tool, err)
	}
	return fromCallResult(res), nil
}

// Close ends the session.
func (s *Session) Close() error { return s.c.Close() }

// elicitFunc adapts DialOptions.OnElicit to mcp-go's handler.
type elicitFunc func(ctx context.Context, message string, schema map[string]any) (string, map[string]any, error)

func (f elicitFunc) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	if req.Params.Mode != "" && req.Params.Mode != mcp.ElicitationModeForm {
		return nil, errors.New("only form elicitations are supported")
	}
	var schema map[string]any
	if raw, err := json.Marshal(req.Params.RequestedSchema); err == nil {
		_ = json.Unmarshal(raw, &schema)
	}
	action, content, err := f(ctx, req.Params.Message, schema)
	if err != nil {
		return nil, err
	}
	res := &mcp.ElicitationResult{}
	res.Action = mcp.ElicitationResponseAction(action)
	if action == string(mcp.ElicitationResponseActionAccept) {
		res.Content = content
	}
	return res, nil
}
