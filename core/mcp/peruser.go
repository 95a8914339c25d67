package mcp

import (
	"context"
	"fmt"
	"slices"
)

// ConnectError means the person whose turn it is has not connected their
// own account to a per_user server yet. URL is their personal link to do
// so: it must reach them privately, never a shared thread.
type ConnectError struct {
	Alias string
	URL   string
	// Scope, when set, is the wider scope the server asked for (403
	// insufficient_scope): the person is connected, but their grant does
	// not allow the call. The link asks for Scope.
	Scope string
	// Lost is set when the person had connected and the server refused
	// their grant (revoked, or expired past refreshing).
	Lost bool
}

// Error names the server and what is missing; it never carries the link.
func (e *ConnectError) Error() string {
	switch {
	case e.Scope != "":
		return fmt.Sprintf("the user's account at %q needs more permission (%s)", e.Alias, e.Scope)
	case e.Lost:
		return fmt.Sprintf("the user's connection to %q was refused (revoked or expired)", e.Alias)
	}
	return fmt.Sprintf("the user has not connected their account to %q", e.Alias)
}

// Is makes a ConnectError for more scope an [ErrNeedsPermission].
func (e *ConnectError) Is(target error) bool { return target == ErrNeedsPermission && e.Scope != "" }

// connected checks that the person at place holds a grant for the
// per_user server s; without one it starts their login and returns a
// *ConnectError with the link.
func (m *Manager) connected(ctx context.Context, s *entry, place Place) error {
	if place.IsZero() {
		return ErrNoPlace
	}
	if m.auth == nil {
		return fmt.Errorf("%w: server %q has auth per_user but NEO_SECRET_KEY is not set", ErrServerDown, s.spec.Alias)
	}
	user := place.UserValue()
	g, err := (grants{a: m.auth, key: tokenKey(s.spec.Alias, user)}).Load(ctx)
	if err != nil {
		return err
	}
	if g != nil {
		return nil
	}
	u, err := m.login(ctx, s.spec.Alias, user)
	if err != nil {
		return fmt.Errorf("%w (%w)", err, ErrNotSent)
	}
	return &ConnectError{Alias: s.spec.Alias, URL: u}
}

// perUserTools stands for a per_user server's tools until someone
// connects: the manifest's names, with argument schemas that admit any
// object. The first person's connection replaces them with the server's
// own (see learnt).
func perUserTools(spec ServerSpec) []Tool {
	out := make([]Tool, 0, len(spec.Tools))
	for _, name := range spec.Tools {
		out = append(out, Tool{
			Alias: spec.Alias, Name: name,
			Description: "A tool of " + spec.Alias + " (its description is known once a person connects their account).",
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{}},
			URI:         ToolURI{Alias: spec.Alias, Tool: name, Version: spec.Version},
		})
	}
	slices.SortFunc(out, func(a, b Tool) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// learnt records the tools a person's connection to the per_user server
// s listed, in place of the manifest's stand-ins, once.
func (m *Manager) learnt(s *entry, tools []Tool) {
	s.mu.Lock()
	known := s.learnt
	s.learnt = true
	s.mu.Unlock()
	if !known {
		m.set(s, StateUp, nil, tools, "")
	}
}
