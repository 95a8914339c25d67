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

// Session is one client connection to one streamable-HTTP MCP server, in
// the newest revision both speak ([StatelessProtocolVersion], else
// [ProtocolVersion]), outside any manifest: no bijection, no
// supervision. The conformance client and one-off tools use it; the
// agent's servers run under a [Manager].
type Session struct {
	c       *client.Client
	schemas *rawSchemas
}

// Dial connects to the server at opts.URL: server/discover, or the
// handshake for a server of an older revision.
// ctx bounds the handshake; the session lives until Close.
func Dial(ctx context.Context, opts DialOptions) (*Session, error) {
	hc := opts.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	h := handshake{schemas: &rawSchemas{}}
	h.init.Params.ClientInfo = mcp.Implementation{Name: or(opts.ClientName, "neobot"), Version: or(opts.ClientVersion, "dev")}
	h.init.Params.Capabilities.Extensions = tasksCapability()
	if opts.Elicit != nil {
		h.opts = append(h.opts, client.WithElicitationHandler(sessionElicit(opts.Elicit)))
		h.init.Params.Capabilities.Elicitation = formCapability()
	}
	c, err := dialHTTP(ctx, opts.URL, []transport.StreamableHTTPCOption{transport.WithHTTPBasicClient(hc)}, h)
	if err != nil {
		return nil, fmt.Errorf("mcp: dial %s: %w", opts.URL, err)
	}
	s := &Session{c: c, schemas: h.schemas}
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
	return listTools(ctx, &conn{client: s.c, schemas: s.schemas}, ServerSpec{})
}

// Call calls one tool. A tool failure is a Result with IsError; a
// protocol or transport failure is an error.
func (s *Session) Call(ctx context.Context, tool string, args map[string]any) (Result, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	req.Params.Meta = &mcp.Meta{AdditionalFields: callMeta(ctx)}
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
