package agent

import (
	"fmt"
	"testing"

	"github.com/neobot/neobot/core/compact"
	"github.com/neobot/neobot/core/llm"
)

// TestToolsEstimateRemembered: a tool list a turn was given before is not
// estimated again; any other list is, and the figure is always the one
// compact.ToolsTokens gives.
func TestToolsEstimateRemembered(t *testing.T) {
	calls := 0
	count := func(s string) int { calls++; return compact.Heuristic(s) }
	list := func(names ...string) []llm.Tool {
		out := make([]llm.Tool, len(names))
		for i, n := range names {
			out[i] = llm.NewFunctionTool(n, "Does "+n+".", map[string]any{"type": "object", "properties": map[string]any{n: map[string]any{"type": "string"}}})
		}
		return out
	}
	var m toolsMemo
	fs := list("fs__read", "fs__write")
	check := func(tools []llm.Tool, counted bool) {
		t.Helper()
		before := calls
		got := m.estimate(count, tools)
		if want := compact.ToolsTokens(compact.Heuristic, tools); got != want {
			t.Errorf("estimate = %d, want %d", got, want)
		}
		if did := calls > before; did != counted {
			t.Errorf("estimated afresh = %v, want %v", did, counted)
		}
	}
	check(fs, true)
	check(fs, false)
	check(list("fs__read", "fs__write"), true) // same tools, another list
	check(fs[:1], true)                        // a shorter view of the same array
	for i := range len(m.seen) {               // enough other lists to push fs out
		check(list(fmt.Sprintf("t%d", i)), true)
	}
	check(fs, true)
	if got := m.estimate(count, nil); got != 0 {
		t.Errorf("estimate(no tools) = %d, want 0", got)
	}
}
