package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
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
	u, err := m.personalLink(ctx, s.spec.Alias, place)
	if err != nil {
		return fmt.Errorf("%w (%w)", err, ErrNotSent)
	}
	return &ConnectError{Alias: s.spec.Alias, URL: u}
}

// Binder binds a person's login to a per_user server to that person: the
// link it returns proves who opens it (their chat platform's sign-in)
// before it leads on to AuthURL, and refuses anyone else. The OAuth
// callback must then come back to the browser that proved it.
type Binder interface {
	Bind(ctx context.Context, l PersonalLogin) (string, error)
	// Proven reports, once, whether the callback carrying state came
	// back to the browser that proved to be its person.
	Proven(state string) bool
}

// PersonalLogin is a per_user login started for one person.
type PersonalLogin struct {
	// Alias is the server's manifest alias.
	Alias string
	// Place is where the person asked: their platform, workspace and
	// user ID, which whoever opens the link must prove to be.
	Place Place
	// AuthURL is the authorization server's URL that starts the login;
	// State is its state parameter, which the callback carries back.
	AuthURL, State string
}

// errUnbound refuses a per_user login that nothing binds to its person:
// its link would connect whoever opened it.
var errUnbound = errors.New("no connect link is made: nothing would check who opens it, so it could connect someone else's account")

// ErrUnproven refuses to complete a person's login whose callback did not
// come back to the browser that proved to be that person.
var ErrUnproven = errors.New("this login was not started from the person's own link in this browser")

// proven checks, before a login completes, that a person's login (user
// set) came back to the browser that proved to be them: whatever made
// its link, no grant is stored for someone else.
func (m *Manager) proven(user, state string) error {
	if user == "" {
		return nil
	}
	if m.auth.opts.Links == nil || !m.auth.opts.Links.Proven(state) {
		return ErrUnproven
	}
	return nil
}

// personalLink starts the login of the person at place to the per_user
// server alias and returns their bound link (see [Binder]).
func (m *Manager) personalLink(ctx context.Context, alias string, place Place) (string, error) {
	if m.auth.opts.Links == nil {
		return "", errUnbound
	}
	u, err := m.login(ctx, alias, place.UserValue())
	if err != nil {
		return "", err
	}
	p, err := url.Parse(u)
	if err != nil || p.Query().Get("state") == "" {
		return "", fmt.Errorf("mcp: login %s: the authorization URL carries no state", alias)
	}
	return m.auth.opts.Links.Bind(ctx, PersonalLogin{Alias: alias, Place: place, AuthURL: u, State: p.Query().Get("state")})
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
	slices.SortFunc(out, byName)
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
