package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Account is a person's connection to one per_user server.
type Account struct {
	// Alias is the server's manifest alias.
	Alias string
	// Connected is true while neobot holds the person's grant.
	Connected bool
}

// ErrNotPerUser means a server is not one people connect their own
// account to (its auth is not per_user), or is not in the manifest.
var ErrNotPerUser = errors.New("not a server people connect their own account to")

// Accounts lists the manifest's per_user servers, by alias, and whether
// the person at place has connected each. Without NEO_SECRET_KEY no
// grant can be held: every account shows as not connected.
func (m *Manager) Accounts(ctx context.Context, place Place) ([]Account, error) {
	var out []Account
	for alias, s := range m.byAlias {
		if s.spec.Auth != AuthPerUser {
			continue
		}
		a := Account{Alias: alias}
		if m.auth != nil && !place.IsZero() {
			g, err := (grants{a: m.auth, key: tokenKey(alias, place.UserValue())}).Load(ctx)
			if err != nil {
				return nil, fmt.Errorf("mcp: accounts: %s: %w", alias, err)
			}
			a.Connected = g != nil
		}
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b Account) int { return strings.Compare(a.Alias, b.Alias) })
	return out, nil
}

// Connect starts the login of the person at place to the per_user server
// alias and returns their link: single use, for 15 minutes, to reach them
// privately; it connects an account only for the person who proves to be
// the one at place (see [Binder]).
func (m *Manager) Connect(ctx context.Context, alias string, place Place) (string, error) {
	s := m.byAlias[alias]
	switch {
	case s == nil || s.spec.Auth != AuthPerUser:
		return "", fmt.Errorf("mcp: connect %q: %w", alias, ErrNotPerUser)
	case place.IsZero():
		return "", ErrNoPlace
	case m.auth == nil:
		return "", fmt.Errorf("mcp: connect %q: NEO_SECRET_KEY is not set, so no token can be kept", alias)
	}
	return m.personalLink(ctx, alias, place)
}

// Disconnect revokes and deletes the person at place's grant for the
// per_user server alias (see [Manager.Logout]).
func (m *Manager) Disconnect(ctx context.Context, alias string, place Place) error {
	s := m.byAlias[alias]
	switch {
	case s == nil || s.spec.Auth != AuthPerUser:
		return fmt.Errorf("mcp: disconnect %q: %w", alias, ErrNotPerUser)
	case place.IsZero():
		return ErrNoPlace
	}
	return m.Logout(ctx, alias, place.UserValue())
}
