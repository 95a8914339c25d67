package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/neobot/neobot/core"
)

// Elicitation is a question a server asks during a tool call
// (elicitation/create, form mode): Message says what it wants and why,
// Schema is the requested schema, as the server sent it.
type Elicitation struct {
	// Server is the alias of the server asking.
	Server  string
	Message string
	Schema  json.RawMessage
	// URL, for a URL-mode question, is the page the person is asked to
	// open (where the server takes what it needs out of band); Schema is
	// then empty.
	URL string
}

// Elicitation actions, as the specification names them.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// ElicitResult is the answer to an [Elicitation]: Action is ElicitAccept,
// ElicitDecline or ElicitCancel, and Content the values accepted.
type ElicitResult struct {
	Action  string
	Content map[string]any
}

// ElicitFunc answers a server's question. ctx is the context of the tool
// call the question belongs to, so it carries the turn (core.TurnFrom) and
// ends when the call does. An error goes back to the server as a JSON-RPC
// error.
type ElicitFunc func(ctx context.Context, e Elicitation) (ElicitResult, error)

// errNoCall reports a question asked when no call, or calls of more than
// one turn, were in flight on the connection: nobody can be asked.
var errNoCall = errors.New("no single tool call in flight to ask on behalf of")

// calls tracks the tool calls in flight on one connection, so a question
// the server asks meanwhile finds whose call it is part of.
type calls struct {
	mu   sync.Mutex
	next uint64
	ctxs map[uint64]context.Context
}

// begin records a call with ctx in flight and returns the function that
// ends it.
func (c *calls) begin(ctx context.Context) (end func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctxs == nil {
		c.ctxs = map[uint64]context.Context{}
	}
	c.next++
	id := c.next
	c.ctxs[id] = ctx
	return func() {
		c.mu.Lock()
		delete(c.ctxs, id)
		c.mu.Unlock()
	}
}

// owner returns the context of the call a question belongs to: the one
// call in flight. With several, the question is ambiguous (stdio carries
// no link from a server's request to the call it serves) unless same
// says they are all one turn's.
func (c *calls) owner(same func(a, b context.Context) bool) (context.Context, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var first context.Context
	for _, ctx := range c.ctxs {
		switch {
		case first == nil:
			first = ctx
		case same == nil || !same(first, ctx):
			return nil, errNoCall
		}
	}
	if first == nil {
		return nil, errNoCall
	}
	return first, nil
}

// elicitHandler is mcp-go's elicitation handler for one connection.
type elicitHandler struct {
	alias string
	c     *conn
	fn    ElicitFunc
	same  func(a, b context.Context) bool
}

// Elicit answers elicitation/create on behalf of the call in flight: a
// question no call can own is cancelled, as is one in a mode neobot does
// not know and a schema neobot cannot show. A URL-mode question goes on
// with its URL and no schema.
func (h elicitHandler) Elicit(tctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	cancel := &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionCancel}}
	urlMode := req.Params.Mode == mcp.ElicitationModeURL
	if req.Params.Mode != "" && req.Params.Mode != mcp.ElicitationModeForm && !urlMode {
		return cancel, nil
	}
	// A question that came back as a call's result (input_required,
	// rounds.go) is asked with that call's own context; one the server
	// sent as a request of its own belongs to the call in flight.
	ctx := tctx
	if _, ok := core.TurnFrom(tctx); !ok {
		owner, err := h.c.calls.owner(h.same)
		if err != nil {
			return cancel, nil
		}
		ctx = owner
	}
	// The question ends with the call, or with the connection.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	defer context.AfterFunc(tctx, stop)()
	e := Elicitation{Server: h.alias, Message: req.Params.Message}
	if urlMode {
		if req.Params.URL == "" {
			return cancel, nil
		}
		e.URL = req.Params.URL
	} else {
		raw, err := json.Marshal(req.Params.RequestedSchema)
		if err != nil {
			return nil, fmt.Errorf("elicitation schema: %w", err)
		}
		e.Schema = raw
	}
	res, err := h.fn(ctx, e)
	if err != nil {
		return nil, err
	}
	return answer(res), nil
}

// answer is res as mcp-go sends it: accept with its content (an empty
// object rather than none), decline, and anything else a cancel.
func answer(res ElicitResult) *mcp.ElicitationResult {
	out := &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseAction(res.Action)}}
	switch res.Action {
	case ElicitAccept:
		content := res.Content
		if content == nil {
			content = map[string]any{}
		}
		out.Content = content
	case ElicitDecline:
	default:
		out.Action = mcp.ElicitationResponseActionCancel
	}
	return out
}

// elicitCapability is what neobot declares to its servers: form mode,
// and URL mode (a link for the person whose turn it is).
func elicitCapability() *mcp.ElicitationCapability {
	return &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}}
}

// formCapability is what a [Session] declares: form mode only.
func formCapability() *mcp.ElicitationCapability {
	return &mcp.ElicitationCapability{Form: &struct{}{}}
}

// Elicit asks the client of the tool call running in ctx (a [ServerTool]'s
// handler) the question message, with the requested schema: how a Go
// server elicits. A client that declared no elicitation is an error, and
// so is one that speaks 2026-07-28 over streamable HTTP (neobot's own
// client, to the handler of [Server.Handler]): that revision has no
// server-to-client requests, a server asks with an input_required
// result instead (SEP-2322).
func (s *Server) Elicit(ctx context.Context, message string, schema map[string]any) (ElicitResult, error) {
	req := mcp.ElicitationRequest{Params: mcp.ElicitationParams{Message: message, RequestedSchema: schema}}
	res, err := s.s.RequestElicitation(ctx, req)
	if err != nil {
		return ElicitResult{}, fmt.Errorf("mcp: elicit: %w", err)
	}
	out := ElicitResult{Action: string(res.Action)}
	if m, ok := res.Content.(map[string]any); ok {
		out.Content = m
	}
	return out, nil
}

// ElicitURL asks the client of the tool call running in ctx to have its
// person open link (a URL-mode elicitation), saying message: how a Go
// server sends someone to a page of its own.
func (s *Server) ElicitURL(ctx context.Context, message, link string) (ElicitResult, error) {
	req := mcp.ElicitationRequest{Params: mcp.ElicitationParams{Mode: mcp.ElicitationModeURL, Message: message, URL: link,
		ElicitationID: fmt.Sprintf("%x", sha256.Sum256([]byte(link)))[:16]}}
	res, err := s.s.RequestElicitation(ctx, req)
	if err != nil {
		return ElicitResult{}, fmt.Errorf("mcp: elicit: %w", err)
	}
	return ElicitResult{Action: string(res.Action)}, nil
}

// sameTurn reports whether two calls' contexts carry the same turn.
func sameTurn(a, b context.Context) bool {
	ta, _ := core.TurnFrom(a)
	tb, _ := core.TurnFrom(b)
	return ta != nil && ta == tb
}

// elicitOptions returns the client options that declare elicitation and
// route the server's questions on c to m's ElicitFunc; none without one.
func (m *Manager) elicitOptions(alias string, c *conn) []client.ClientOption {
	if m.elicit == nil {
		return nil
	}
	return []client.ClientOption{client.WithElicitationHandler(elicitHandler{alias: alias, c: c, fn: m.elicit, same: sameTurn})}
}
