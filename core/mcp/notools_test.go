package mcp

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// TestServerWithoutTools: a manifest may declare a server with no tools
// (`"tools": []`), one that offers only prompts or resources; it starts
// (without a tools/list it would refuse) and its prompts are listed.
func TestServerWithoutTools(t *testing.T) {
	if _, err := Parse([]byte(`{"did": "did:web:x", "servers": [{"alias": "p", "transport": "http", "url": "https://p.example.com/mcp", "version": "1.0.0", "tools": []}]}`)); err != nil {
		t.Fatalf("Parse(empty tools) error = %v, want it accepted", err)
	}
	s := server.NewMCPServer("prompts", "1.0.0", server.WithPromptCapabilities(false))
	s.AddPrompt(mcp.NewPrompt("standup", mcp.WithPromptDescription("Write the standup.")), func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return mcp.NewGetPromptResult("standup", []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Write it."))}), nil
	})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(srv.Close)
	m := start(t, Options{Manifest: manifest(ServerSpec{Alias: "prompts", Transport: TransportHTTP, URL: srv.URL, Version: "1.0.0", Tools: []string{}})})
	st := m.Status()[0]
	if st.State != StateUp || len(st.Tools) != 0 {
		t.Fatalf("Status() = %s %q with %d tools, want up with none", st.State, st.Problem, len(st.Tools))
	}
	prompts, err := m.Prompts(context.Background(), "prompts")
	if err != nil || len(prompts) != 1 || !strings.Contains(prompts[0].Name, "standup") {
		t.Errorf("Prompts() = %+v, %v; want the standup prompt", prompts, err)
	}
}
