package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// rawSchemas keeps each tool's input schema as the server sent it in
// tools/list. mcp-go decodes a schema into a struct that keeps only
// type, properties, required, $defs and additionalProperties, so
// $schema, allOf, anyOf, if/then/else, $anchor and the rest of JSON
// Schema 2020-12 would be lost on the way to the model. neobot passes
// the server's schema through as it is: never rewritten, and never
// dereferenced ($ref, network or not, is left for whoever reads the
// schema; nothing here fetches).
type rawSchemas struct {
	mu     sync.Mutex
	byName map[string]json.RawMessage
}

// record keeps the input schemas of a tools/list response (one page;
// the pages of a listing add up).
func (r *rawSchemas) record(req transport.JSONRPCRequest, resp *transport.JSONRPCResponse) {
	if r == nil || req.Method != string(mcp.MethodToolsList) || resp == nil || resp.Error != nil {
		return
	}
	var res struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(resp.Result, &res) != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byName == nil {
		r.byName = map[string]json.RawMessage{}
	}
	for _, t := range res.Tools {
		r.byName[t.Name] = t.InputSchema // nil when the tool has none
	}
}

// leftOut are the tools the server listed that are not among tools,
// sorted: those mcp-go excluded because their x-mcp-header annotations
// break SEP-2243 (an HTTP client must leave such a tool out, and keep
// the others).
func (r *rawSchemas) leftOut(tools []Tool) []string {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for name := range r.byName {
		if !slices.ContainsFunc(tools, func(t Tool) bool { return t.Name == name }) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// get is tool's schema as the server sent it; nil when not seen.
func (r *rawSchemas) get(tool string) json.RawMessage {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if raw := r.byName[tool]; len(raw) > 0 {
		return raw
	}
	return nil
}

// stdioTap is a stdio transport that keeps the tools/list schemas.
type stdioTap struct {
	*transport.Stdio
	schemas *rawSchemas
}

// SendRequest sends req and records a tools/list response's schemas.
func (t *stdioTap) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := t.Stdio.SendRequest(ctx, req)
	t.schemas.record(req, resp)
	return resp, err
}
