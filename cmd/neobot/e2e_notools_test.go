package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// promptServer is a streamable-HTTP MCP server with one prompt and no
// tools: it declares only the prompts capability, as a prompt- or
// resource-only server does, and answers nothing else.
func promptServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		if json.Unmarshal(body, &req) != nil || req.ID == nil {
			w.WriteHeader(http.StatusAccepted) // a notification
			return
		}
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"prompts": map[string]any{}},
				"serverInfo": map[string]any{"name": "prompts", "version": "1.0.0"}}
		case "prompts/list":
			result = map[string]any{"prompts": []any{map[string]any{"name": "standup", "description": "Write the standup."}}}
		case "ping":
			result = map[string]any{}
		default:
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestCheckServerWithoutTools: a manifest server with an empty tools
// list (prompts only) is accepted, and `neobot check` lists it, up, with
// its prompts.
func TestCheckServerWithoutTools(t *testing.T) {
	srv := promptServer(t)
	model := llmtest.New(t)
	fake := slacktest.New(t)
	kv := map[string]string{
		"NEO_MODEL": "test-main", "NEO_LLM_BASE_URL": model.BaseURL(),
		"NEO_MANIFEST": writeJSON(t, "manifest.json", map[string]any{
			"did": "did:web:neobot.test:agents:e2e", "servers": []any{map[string]any{
				"alias": "prompts", "transport": "http", "url": srv.URL + "/mcp", "version": "1.0.0", "tools": []string{},
			}}}),
		"NEO_DB_PATH":     filepath.Join(t.TempDir(), "neobot.db"),
		"SLACK_BOT_TOKEN": "xoxb-live", "SLACK_APP_TOKEN": "xapp-live", "SLACK_API_URL": fake.APIURL(),
	}
	out, stderr, err := run(t, kv, "", "check")
	if err != nil {
		t.Fatalf("check with a server without tools = %v\n%s\n%s", err, out, stderr)
	}
	for _, want := range []string{"prompts (http, 1.0.0): up", "servers with no tools (prompts and resources only): prompts", "prompts (1): standup"} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
}
