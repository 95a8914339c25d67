package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// versionRecorder is a loopback streamable-HTTP server that records the
// MCP-Protocol-Version header of each JSON-RPC request by method.
type versionRecorder struct {
	mu   sync.Mutex
	seen map[string][]string
}

func (v *versionRecorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method != "" {
				v.mu.Lock()
				v.seen[msg.Method] = append(v.seen[msg.Method], r.Header.Get("MCP-Protocol-Version"))
				v.mu.Unlock()
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (v *versionRecorder) headers(method string) []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.seen[method]...)
}

// TestProtocolVersionHeader: over streamable HTTP, initialize carries no
// MCP-Protocol-Version header and every request after it carries the
// negotiated version, as 2025-11-25 has it ("on all subsequent requests").
// Sending the offered version on initialize too would not reach the
// 2026-07-28 servers (they also want _meta keys and no initialize at all)
// and would lose servers of older revisions that answer 400 to any header
// naming a version they do not know. Both clients are checked, the
// Manager's and Dial's.
func TestProtocolVersionHeader(t *testing.T) {
	tests := []struct {
		name string
		call func(t *testing.T, url string)
	}{
		{"manager", func(t *testing.T, url string) {
			m := start(t, Options{Manifest: manifest(ServerSpec{Alias: "echo", Transport: TransportHTTP, URL: url, Version: "1.0.0", Tools: []string{"echo"}})})
			if res, err := m.Call(context.Background(), "echo", "echo", map[string]any{}); err != nil || res.IsError {
				t.Fatalf("Call() = %+v, %v; want a result", res, err)
			}
		}},
		{"dial", func(t *testing.T, url string) {
			s, err := Dial(context.Background(), DialOptions{URL: url})
			if err != nil {
				t.Fatalf("Dial() error = %v", err)
			}
			defer s.Close()
			if _, err := s.c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "echo"}}); err != nil {
				t.Fatalf("CallTool() error = %v", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := server.NewMCPServer("echo", "1.0.0")
			s.AddTool(mcp.NewTool("echo"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("ok"), nil
			})
			rec := &versionRecorder{seen: map[string][]string{}}
			srv := httptest.NewServer(rec.wrap(server.NewStreamableHTTPServer(s)))
			t.Cleanup(srv.Close)
			tt.call(t, srv.URL)
			for method, want := range map[string]string{"initialize": "", "tools/call": ProtocolVersion} {
				if got := rec.headers(method); len(got) != 1 || got[0] != want {
					t.Errorf("MCP-Protocol-Version on %s = %q, want [%q]", method, got, want)
				}
			}
		})
	}
}
