package mcp

import (
	"context"
	"encoding/json"
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
	// Elicit, when set, answers the server's form elicitations
	// (elicitation/create); Elicitation.Server is "". Nil declares no
	// elicitation capability.
	Elicit ElicitFunc
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
	if opts.Elicit != nil {
		copts = append(copts, client.WithElicitationHandler(sessionElicit(opts.Elicit)))
	}
	s := &Session{c: client.NewClient(tasksTransport(tr), copts...)}
	if err := s.c.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, fmt.Errorf("mcp: dial %s: start: %w", opts.URL, err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = ProtocolVersion
	init.Params.ClientInfo = mcp.Implementation{Name: or(opts.ClientName, "neobot"), Version: or(opts.ClientVersion, "dev")}
	init.Params.Capabilities.Extensions = tasksCapability()
	if opts.Elicit != nil {
		init.Params.Capabilities.Elicitation = formCapability()
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

// sessionElicit adapts DialOptions.Elicit to mcp-go's handler: a session
// has one caller, so every question is its own; a URL-mode question (not
// declared) is cancelled.
type sessionElicit ElicitFunc

func (f sessionElicit) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	if req.Params.Mode != "" && req.Params.Mode != mcp.ElicitationModeForm {
		return answer(ElicitResult{Action: ElicitCancel}), nil
	}
	raw, err := json.Marshal(req.Params.RequestedSchema)
	if err != nil {
		return nil, fmt.Errorf("elicitation schema: %w", err)
	}
	res, err := f(ctx, Elicitation{Message: req.Params.Message, Schema: raw})
	if err != nil {
		return nil, err
	}
	return answer(res), nil
}
