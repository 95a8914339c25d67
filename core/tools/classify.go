package tools

import "strings"

// Class says whether Neo may call a tool directly.
type Class int

const (
	// Natural tools are reversible and need no wallet signature: Neo calls
	// them directly.
	Natural Class = iota
	// Escalate tools move or commit funds, or need a signature: they are
	// never advertised, and are reachable only through core_execute.
	Escalate
)

// String returns "natural" or "escalate".
func (c Class) String() string {
	if c == Escalate {
		return "escalate"
	}
	return "natural"
}

// DefaultEscalatePatterns returns the patterns used when neither Options
// nor the manifest give any. On-chain reads and dry runs (compile, test,
// simulate, lookup, list) deliberately match none of them.
func DefaultEscalatePatterns() []string {
	return []string{"send", "transfer", "swap", "approve", "deploy", "settle", "fund", "mint", "withdraw", "stake", "invoke", "bridge"}
}

// Classify returns Escalate when the tool's name contains one of patterns,
// case-insensitively, and Natural otherwise.
func Classify(tool string, patterns []string) Class {
	name := strings.ToLower(tool)
	for _, p := range patterns {
		if p = strings.ToLower(strings.TrimSpace(p)); p != "" && strings.Contains(name, p) {
			return Escalate
		}
	}
	return Natural
}
