package agent

import (
	"sync"

	"github.com/neobot/neobot/core/compact"
	"github.com/neobot/neobot/core/llm"
)

// toolsMemo remembers the token estimate of the tool lists turns were
// given. The tool surface hands every turn of a skill the same list until a
// server changes, and estimating a list means printing each schema: it was
// the agent's largest own cost per turn. A list is recognized by its
// backing array and length; the memo holds the list, so that array is not
// reused for another list while its entry lives.
type toolsMemo struct {
	mu   sync.Mutex
	seen [8]toolsEstimate // a ring: one list per skill in use, at most
	next int
}

// toolsEstimate is one list's estimate.
type toolsEstimate struct {
	tools  []llm.Tool
	tokens int
}

// estimate returns compact.ToolsTokens(count, tools), from the memo when
// tools was estimated before.
func (m *toolsMemo) estimate(count compact.Counter, tools []llm.Tool) int {
	if len(tools) == 0 {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.seen {
		if len(e.tools) == len(tools) && &e.tools[0] == &tools[0] {
			return e.tokens
		}
	}
	n := compact.ToolsTokens(count, tools)
	m.seen[m.next] = toolsEstimate{tools: tools, tokens: n}
	m.next = (m.next + 1) % len(m.seen)
	return n
}
