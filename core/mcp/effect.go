package mcp

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Effect is what calling a tool can do to the world, declared in the
// manifest per server and per tool. The classes are ordered from harmless
// to irreversible.
type Effect string

// Side-effect classes.
const (
	// EffectNone computes or formats and touches nothing.
	EffectNone Effect = "none"
	// EffectRead reads files, records or remote state, changing nothing.
	EffectRead Effect = "read"
	// EffectWrite changes local state: files, records, drafts.
	EffectWrite Effect = "write"
	// EffectExternal reaches outside: network requests, messages, posts.
	EffectExternal Effect = "external"
	// EffectSpend moves money or signs. Such a tool is never advertised to
	// the model and is reachable only through core_execute.
	EffectSpend Effect = "spend"
)

// Effects lists every class, harmless first.
func Effects() []Effect {
	return []Effect{EffectNone, EffectRead, EffectWrite, EffectExternal, EffectSpend}
}

// ParseEffect reads a class name as written in a manifest or settings
// file.
func ParseEffect(s string) (Effect, error) {
	e := Effect(strings.ToLower(strings.TrimSpace(s)))
	if !slices.Contains(Effects(), e) {
		return "", fmt.Errorf("%q is not a side-effect class; use one of %s", s, effectList())
	}
	return e, nil
}

func effectList() string {
	names := make([]string, 0, 5)
	for _, e := range Effects() {
		names = append(names, string(e))
	}
	return strings.Join(names, ", ")
}

// Effect returns the class the manifest declares for tool on the server
// with alias: the tool's own entry in tool_side_effects, else the
// server's side_effects. declared is false when neither says.
func (m *Manifest) Effect(alias, tool string) (e Effect, declared bool) {
	for _, s := range m.Servers {
		if s.Alias != alias {
			continue
		}
		if v, ok := s.ToolSideEffects[tool]; ok {
			return Effect(v), true
		}
		if s.SideEffects != "" {
			return Effect(s.SideEffects), true
		}
		return "", false
	}
	return "", false
}

// ToolEffect returns the class the tool's own tool_side_effects entry
// declares, ignoring the server's side_effects; declared is false when
// the tool has no entry of its own.
func (m *Manifest) ToolEffect(alias, tool string) (e Effect, declared bool) {
	for _, s := range m.Servers {
		if s.Alias == alias {
			v, ok := s.ToolSideEffects[tool]
			return Effect(v), ok
		}
	}
	return "", false
}

// Allows reports whether the manifest's allowed_side_effects admits e;
// a manifest without the field admits every class.
func (m *Manifest) Allows(e Effect) bool {
	return m.AllowedSideEffects == nil || slices.Contains(m.AllowedSideEffects, string(e))
}

// validateEffects checks the side-effect fields of the manifest.
func (m *Manifest) validateEffects(problems []FieldError) []FieldError {
	add := func(field, problem, fix string) {
		problems = append(problems, FieldError{Field: field, Problem: problem, Fix: fix})
	}
	fix := "use one of " + effectList()
	for i, v := range m.AllowedSideEffects {
		if _, err := ParseEffect(v); err != nil || v != strings.ToLower(v) {
			add(fmt.Sprintf("allowed_side_effects[%d]", i), fmt.Sprintf("%q is not a side-effect class", v), fix)
		}
	}
	for i, s := range m.Servers {
		if s.SideEffects != "" {
			if _, err := ParseEffect(s.SideEffects); err != nil || s.SideEffects != strings.ToLower(s.SideEffects) {
				add(fmt.Sprintf("servers[%d].side_effects", i), fmt.Sprintf("%q is not a side-effect class", s.SideEffects), fix)
			}
		}
		for _, tool := range slices.Sorted(maps.Keys(s.ToolSideEffects)) {
			f := fmt.Sprintf("servers[%d].tool_side_effects.%s", i, tool)
			v := s.ToolSideEffects[tool]
			if _, err := ParseEffect(v); err != nil || v != strings.ToLower(v) {
				add(f, fmt.Sprintf("%q is not a side-effect class", v), fix)
			}
			if !slices.Contains(s.Tools, tool) {
				add(f, "names a tool the server's tools list does not have", "remove it, or add the tool to tools")
			}
		}
	}
	return problems
}
