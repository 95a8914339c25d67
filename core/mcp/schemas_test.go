package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// richSchema is a JSON Schema 2020-12 input schema with what mcp-go's
// schema struct would drop ($schema, allOf/anyOf, if/then/else, an
// $anchor) and two $refs: one into $defs, one to a network URL (canary).
func richSchema(canary string) string {
	return `{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type": "object",
		"$defs": {"address": {"$anchor": "addr", "type": "object", "properties": {"street": {"type": "string"}}}},
		"properties": {
			"name": {"type": "string", "minLength": 1},
			"home": {"$ref": "#/$defs/address"},
			"profile": {"$ref": "` + canary + `"}
		},
		"additionalProperties": false,
		"allOf": [{"anyOf": [{"required": ["name"]}, {"required": ["home"]}]}],
		"if": {"properties": {"name": {"const": "x"}}},
		"then": {"required": ["home"]},
		"else": {"required": ["name"]}
	}`
}

// TestSchemasAsSent: a tool's input schema reaches neobot's tools (and
// so the model) exactly as the server sent it, over both revisions and
// through both clients, and a network $ref in it is never fetched
// (SEP-2106: no automatic dereferencing).
func TestSchemasAsSent(t *testing.T) {
	var fetched atomic.Int32
	canary := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetched.Add(1)
		_, _ = w.Write([]byte(`{"type":"object"}`))
	}))
	t.Cleanup(canary.Close)
	raw := richSchema(canary.URL + "/profile.json")
	var want map[string]any
	if err := json.Unmarshal([]byte(raw), &want); err != nil {
		t.Fatal(err)
	}
	s := server.NewMCPServer("rich", "1.0.0")
	s.AddTool(mcp.NewToolWithRawSchema("lookup", "Look someone up.", json.RawMessage(raw)), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	list := map[string]func(t *testing.T, url string) []Tool{
		"manager": func(t *testing.T, url string) []Tool {
			m := start(t, Options{Manifest: manifest(ServerSpec{Alias: "rich", Transport: TransportHTTP, URL: url, Version: "1.0.0", Tools: []string{"lookup"}})})
			return m.Tools()
		},
		"dial": func(t *testing.T, url string) []Tool {
			sess, err := Dial(context.Background(), DialOptions{URL: url})
			if err != nil {
				t.Fatalf("Dial() error = %v", err)
			}
			defer sess.Close()
			tools, err := sess.Tools(context.Background())
			if err != nil {
				t.Fatalf("Tools() error = %v", err)
			}
			return tools
		},
	}
	revisions := map[string]func(http.Handler) http.Handler{
		"2026-07-28": func(h http.Handler) http.Handler { return h },
		"2025-11-25": func(h http.Handler) http.Handler { return olderRevision(h, "method") },
	}
	for client, tools := range list {
		for revision, wrap := range revisions {
			t.Run(client+" "+revision, func(t *testing.T) {
				srv := httptest.NewServer(wrap(server.NewStreamableHTTPServer(s)))
				t.Cleanup(srv.Close)
				got := tools(t, srv.URL)
				if len(got) != 1 || !reflect.DeepEqual(got[0].InputSchema, want) {
					t.Errorf("tools = %+v\nwant lookup with the schema as sent: %v", got, want)
				}
			})
		}
	}
	if n := fetched.Load(); n != 0 {
		t.Errorf("the network $ref was fetched %d times, want never", n)
	}
}

// TestSchemasAsSentStdio is TestSchemasAsSent over stdio (2025-11-25,
// the handshake).
func TestSchemasAsSentStdio(t *testing.T) {
	const ref = "https://127.0.0.1:9/profile.json" // never fetched: nothing listens there
	var want map[string]any
	if err := json.Unmarshal([]byte(richSchema(ref)), &want); err != nil {
		t.Fatal(err)
	}
	spec := goStdio("go")
	spec.Env = append(spec.Env, schemaVar+"=$env:TEST_SCHEMA")
	spec.Tools = append(append([]string(nil), testToolNames...), "rich")
	m := start(t, Options{Manifest: manifest(spec), LookupEnv: testEnv(map[string]string{"TEST_SCHEMA": ref}).lookup})
	for _, tool := range m.Tools() {
		if tool.Name == "rich" {
			if !reflect.DeepEqual(tool.InputSchema, want) {
				t.Errorf("rich's schema = %v\nwant it as sent: %v", tool.InputSchema, want)
			}
			return
		}
	}
	t.Fatalf("Tools() = %+v, want rich among them", m.Tools())
}
