package mcp

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrDrift is matched (errors.Is) by every [DriftError].
var ErrDrift = errors.New("tools differ from the manifest")

// DriftError reports a server whose advertised tools differ from the
// tools its manifest entry declares.
type DriftError struct {
	Alias string
	// Missing are declared but not advertised; Unexpected are advertised
	// but not declared. Both sorted.
	Missing    []string
	Unexpected []string
}

// Error lists the differences and how to fix them.
func (e *DriftError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tools of server %q differ from the manifest:", e.Alias)
	if len(e.Missing) > 0 {
		fmt.Fprintf(&b, " missing %s;", strings.Join(e.Missing, ", "))
	}
	if len(e.Unexpected) > 0 {
		fmt.Fprintf(&b, " unexpected %s;", strings.Join(e.Unexpected, ", "))
	}
	b.WriteString(" update the server's tools list, or pin the server version the manifest was written for")
	return b.String()
}

// Is makes errors.Is(err, ErrDrift) true.
func (e *DriftError) Is(target error) bool { return target == ErrDrift }

// Bijection checks that discovered equals declared, as sets; it returns
// nil or a *DriftError.
func Bijection(alias string, declared, discovered []string) error {
	want := map[string]bool{}
	for _, d := range declared {
		want[d] = true
	}
	got := map[string]bool{}
	var unexpected []string
	for _, d := range discovered {
		got[d] = true
		if !want[d] {
			unexpected = append(unexpected, d)
		}
	}
	var missing []string
	for _, d := range declared {
		if !got[d] {
			missing = append(missing, d)
		}
	}
	if len(missing) == 0 && len(unexpected) == 0 {
		return nil
	}
	slices.Sort(missing)
	slices.Sort(unexpected)
	return &DriftError{Alias: alias, Missing: slices.Compact(missing), Unexpected: slices.Compact(unexpected)}
}

func toolNames(tools []Tool) []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names
}
