package tools

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/neobot/neobot/core"

	"github.com/neobot/neobot/core/mcp"
)

// Describe writes the surface for an operator (`neobot check`): each
// server with its state, its natural and escalated functions, the
// synthetic functions, and the warnings.
func (s *Surface) Describe(w io.Writer) error {
	var b strings.Builder
	if s.did != "" {
		fmt.Fprintf(&b, "agent %s\n", s.did)
	}
	var statuses []mcp.Status
	if s.mgr != nil {
		statuses = s.mgr.Status()
	}
	fmt.Fprintf(&b, "servers: %d\n", len(statuses))
	for _, st := range statuses {
		fmt.Fprintf(&b, "  %s (%s, %s): %s", st.Alias, st.Transport, st.Version, st.State)
		if st.PID != 0 {
			fmt.Fprintf(&b, ", pid %d", st.PID)
		}
		if st.Restarts > 0 {
			fmt.Fprintf(&b, ", %d restarts", st.Restarts)
		}
		b.WriteByte('\n')
		if st.Problem != "" {
			fmt.Fprintf(&b, "    problem: %s\n", st.Problem)
		}
		var natural, escalated []string
		for name, bd := range s.byFunc {
			if bd.alias != st.Alias {
				continue
			}
			if bd.class == Escalate {
				escalated = append(escalated, name)
			} else {
				natural = append(natural, name)
			}
		}
		slices.Sort(natural)
		slices.Sort(escalated)
		fmt.Fprintf(&b, "    natural (%d): %s\n", len(natural), list(natural))
		fmt.Fprintf(&b, "    escalated (%d, only via %s): %s\n", len(escalated), core.CoreExecute, list(escalated))
	}
	fmt.Fprintf(&b, "synthetic: %s (%s)", core.CoreExecute, map[bool]string{true: "execution daemon configured", false: "no execution daemon: answers that it is not configured"}[s.delegate != nil])
	if s.recall != nil {
		fmt.Fprintf(&b, ", %s", MemoryRecall)
	}
	if s.forget != nil {
		fmt.Fprintf(&b, ", %s", MemoryForget)
	}
	if s.history != nil {
		fmt.Fprintf(&b, ", %s", HistorySearch)
	}
	b.WriteByte('\n')
	fmt.Fprintf(&b, "escalate patterns: %s\n", strings.Join(s.patterns, ", "))
	warnings := s.Warnings()
	fmt.Fprintf(&b, "warnings: %d\n", len(warnings))
	for _, wn := range warnings {
		fmt.Fprintf(&b, "  - %s\n", wn)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func list(names []string) string {
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, ", ")
}
