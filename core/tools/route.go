package tools

import (
	"fmt"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/skill"
)

// routeKind is what a called function name stands for.
type routeKind int

const (
	// routeMCP: a Natural tool of an MCP server.
	routeMCP routeKind = iota
	// routeSynthetic: core_execute, memory_recall, memory_forget,
	// read_resource or history_search, where wired.
	routeSynthetic
	// routeUnknown: nothing this surface offers.
	routeUnknown
	// routeEscalate: a spend-class tool, which only core_execute may call.
	routeEscalate
)

// routed is the route stage's answer: the kind, and the binding of an MCP
// tool.
type routed struct {
	kind routeKind
	b    binding
}

// route decides what the function name stands for. A synthetic function
// that is not wired falls through to the MCP tools, so it is unknown
// unless a server's tool has its name.
func (s *Surface) route(name string) routed {
	if s.wired(name) {
		return routed{kind: routeSynthetic}
	}
	b, ok := s.byFunc[name]
	switch {
	case !ok || s.mgr == nil:
		return routed{kind: routeUnknown}
	case b.class == Escalate:
		return routed{kind: routeEscalate, b: b}
	}
	return routed{kind: routeMCP, b: b}
}

// wired reports whether the synthetic function name is served here.
func (s *Surface) wired(name string) bool {
	switch name {
	case core.CoreExecute:
		return true
	case MemoryRecall:
		return s.recall != nil
	case MemoryForget:
		return s.forget != nil
	case ReadResource:
		return s.mgr != nil
	case HistorySearch:
		return s.history != nil
	}
	return false
}

// unknownTool is the in-band answer to a name nothing stands for.
func unknownTool(name string) string {
	return fmt.Sprintf("unknown tool %q — it is not available", name)
}

// escalate is the in-band answer to a spend-class tool called directly:
// refused where the place may not spend, else pointed at core_execute.
func (s *Surface) escalate(call core.ToolCall, sk *skill.Skill, b binding) string {
	if v := s.spendVerdict(sk); v.Rule != skill.Allow {
		return s.refuse(call, sk, b.uriText, v)
	}
	return fmt.Sprintf("%q moves funds or needs a wallet signature, so it cannot be called directly — use %s "+
		"with a plain description of what to do; the user approves any spend", call.Name(), core.CoreExecute)
}
