package tools

import (
	"context"
	"errors"

	"github.com/neobot/neobot/core/mcp"
)

// errNoServers is a login or logout on a surface without a manifest.
var errNoServers = errors.New("no MCP servers are configured")

// Login starts the operator's OAuth login to the server alias and returns
// the URL to open (see mcp.Manager.Login).
func (s *Surface) Login(ctx context.Context, alias string) (string, error) {
	if s.mgr == nil {
		return "", errNoServers
	}
	return s.mgr.Login(ctx, alias)
}

// FinishLogin completes the login the OAuth callback's state names (see
// mcp.Manager.FinishLogin).
func (s *Surface) FinishLogin(ctx context.Context, state, code string) (alias, user string, err error) {
	if s.mgr == nil {
		return "", "", mcp.ErrUnknownLogin
	}
	return s.mgr.FinishLogin(ctx, state, code)
}

// Logout deletes the grant held for the server alias, the operator's or
// user's (see mcp.Manager.Logout).
func (s *Surface) Logout(ctx context.Context, alias, user string) error {
	if s.mgr == nil {
		return errNoServers
	}
	return s.mgr.Logout(ctx, alias, user)
}
