package llm

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestToolEncodingsFollowTheTools: a request carries each tool as it is
// now. The encoding kept for a schema map is reused only for the same map
// under the same name and description; a new map, a renamed tool, or a
// cache that started over encode afresh.
func TestToolEncodingsFollowTheTools(t *testing.T) {
	c, err := New(Config{Model: "m", BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	sent := func(tools ...Tool) []Tool {
		t.Helper()
		body, err := c.encodeRequest(ChatRequest{Messages: []Message{UserMessage("hi")}, Tools: tools})
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		var wr struct{ Tools []Tool }
		if err := json.Unmarshal(body, &wr); err != nil {
			t.Fatalf("decode %s: %v", body, err)
		}
		return wr.Tools
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}
	read := Tool{Function: FunctionDef{Name: "fs__read", Description: "Reads a file.", Parameters: schema}}
	check := func(got []Tool, name, desc, prop string) {
		t.Helper()
		if len(got) != 1 || got[0].Type != "function" || got[0].Function.Name != name || got[0].Function.Description != desc {
			t.Fatalf("tools sent = %+v, want one function %s (%q)", got, name, desc)
		}
		if _, ok := got[0].Function.Parameters["properties"].(map[string]any)[prop]; !ok {
			t.Fatalf("tool %s sent with parameters %v, want property %q", name, got[0].Function.Parameters, prop)
		}
	}
	check(sent(read), "fs__read", "Reads a file.", "path")
	check(sent(read), "fs__read", "Reads a file.", "path")

	renamed := read
	renamed.Function.Name, renamed.Function.Description = "fs__cat", "Prints a file."
	check(sent(renamed), "fs__cat", "Prints a file.", "path")

	changed := read
	changed.Function.Parameters = map[string]any{"type": "object", "properties": map[string]any{"file": map[string]any{"type": "string"}}}
	check(sent(changed), "fs__read", "Reads a file.", "file")

	for i := range maxCachedTools + 1 { // fills the cache and starts it over
		sent(NewFunctionTool(fmt.Sprintf("t%d", i), "", map[string]any{"type": "object"}))
	}
	check(sent(read), "fs__read", "Reads a file.", "path")
	if len(c.tools.m) > maxCachedTools {
		t.Errorf("cache holds %d tools, want at most %d", len(c.tools.m), maxCachedTools)
	}
}
