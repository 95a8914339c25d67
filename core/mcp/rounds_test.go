package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/mcp"
)

// roundsServer is a streamable-HTTP MCP server whose tool "greet" first
// answers input_required (SEP-2322: an elicitation and an opaque request
// state), then, retried with the answer and the state, greets. The
// first rounds of two calls are held until both arrived, so both calls
// are in flight on the connection when their questions are asked.
func roundsServer(t *testing.T) string {
	var mu sync.Mutex
	firsts := 0
	both := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Arguments      map[string]any `json:"arguments"`
				RequestState   *string        `json:"requestState"`
				InputResponses map[string]struct {
					Action  string         `json:"action"`
					Content map[string]any `json:"content"`
				} `json:"inputResponses"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-11-25", "serverInfo": map[string]any{"name": "rounds", "version": "1.0.0"},
				"capabilities": map[string]any{"tools": map[string]any{}}}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{"name": "greet", "inputSchema": map[string]any{"type": "object"}}}}
		case "tools/call":
			who, _ := req.Params.Arguments["who"].(string)
			ans, ok := req.Params.InputResponses["name"]
			if !ok {
				mu.Lock()
				if firsts++; firsts == 2 {
					close(both)
				}
				mu.Unlock()
				<-both
				result = map[string]any{"resultType": "input_required", "requestState": "state-of-" + who,
					"inputRequests": map[string]any{"name": map[string]any{"method": "elicitation/create", "params": map[string]any{
						"message": "What is your name?", "requestedSchema": map[string]any{"type": "object",
							"properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}}}}}}
				break
			}
			state := "no state"
			if req.Params.RequestState != nil {
				state = *req.Params.RequestState
			}
			result = map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text",
				"text": fmt.Sprintf("Hello, %v (%s, %s)", ans.Content["name"], ans.Action, state)}}}
		default:
			result = map[string]any{}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// TestInputRequiredRounds: a tool result asking for input is answered
// through the question path (the ElicitFunc), by the person whose call it
// is, even with calls of two turns in flight on one connection, and the
// call is retried with the answer and the server's request state.
func TestInputRequiredRounds(t *testing.T) {
	url := roundsServer(t)
	elicit := func(ctx context.Context, e mcp.Elicitation) (mcp.ElicitResult, error) {
		tr, ok := core.TurnFrom(ctx)
		if !ok || e.Server != "rounds" || e.Message != "What is your name?" {
			return mcp.ElicitResult{Action: mcp.ElicitCancel}, nil
		}
		return mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"name": tr.Inbound.User}}, nil
	}
	m, err := mcp.Start(t.Context(), mcp.Options{Elicit: elicit, Manifest: &mcp.Manifest{DID: "did:web:x", Servers: []mcp.ServerSpec{
		{Alias: "rounds", Transport: mcp.TransportHTTP, URL: url, Version: "1.0.0", Tools: []string{"greet"}, SideEffects: "read"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	var wg sync.WaitGroup
	got := map[string]string{}
	var mu sync.Mutex
	for _, who := range []string{"alice", "bob"} {
		wg.Go(func() {
			tr := &core.Turn{Inbound: core.Inbound{User: who, EventID: "E-" + who}}
			res, err := m.Call(core.WithTurn(t.Context(), tr), "rounds", "greet", map[string]any{"who": who})
			mu.Lock()
			defer mu.Unlock()
			if err != nil || len(res.Content) == 0 {
				got[who] = fmt.Sprint(err)
				return
			}
			got[who] = res.Content[0].Text
		})
	}
	wg.Wait()
	for _, who := range []string{"alice", "bob"} {
		if want := fmt.Sprintf("Hello, %s (accept, state-of-%s)", who, who); got[who] != want {
			t.Errorf("%s's call = %q, want %q: asked of %s, retried with the answer and the request state", who, got[who], want, who)
		}
	}
}
