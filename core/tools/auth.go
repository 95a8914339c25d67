package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/neobot/neobot/core"
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
func (s *Surface) FinishLogin(ctx context.Context, state, code, iss string) (alias, user string, err error) {
	if s.mgr == nil {
		return "", "", mcp.ErrUnknownLogin
	}
	return s.mgr.FinishLogin(ctx, state, code, iss)
}

// Logout deletes the grant held for the server alias, the operator's or
// user's (see mcp.Manager.Logout).
func (s *Surface) Logout(ctx context.Context, alias, user string) error {
	if s.mgr == nil {
		return errNoServers
	}
	return s.mgr.Logout(ctx, alias, user)
}

// offerConnect sends the person whose turn it is their link to connect
// their own account to a per_user server, privately, and returns what the
// model is told.
func (s *Surface) offerConnect(ctx context.Context, call core.ToolCall, ce *mcp.ConnectError) string {
	name := call.Name()
	text, what := connectWords(name, ce)
	if !sendConnect(ctx, call.Turn(), text) {
		return fmt.Sprintf("%s needs %s, and no private way to send them the link was available here. "+
			"Ask them to message Neo directly to get it.", name, what)
	}
	return fmt.Sprintf("%s needs %s. A private link to fix that was just sent to them (you cannot see it). "+
		"Tell them to open it, then ask again; do not call %s again until they do.", name, what, name)
}

// connectWords are what the person is sent with their link for a call of
// tool name, and what the model is told they lack.
func connectWords(name string, ce *mcp.ConnectError) (text, what string) {
	switch {
	case ce.Scope != "":
		return fmt.Sprintf("%s needs more permission on your %s account (%s) than you granted. Grant it here (this link is for you alone; it works once, for 15 minutes): %s", name, ce.Alias, ce.Scope, ce.URL),
			fmt.Sprintf("more permission (%s) on the user's own %s account than they granted; their connection is kept", ce.Scope, ce.Alias)
	case ce.Lost:
		return fmt.Sprintf("%s refused your connected account (it was revoked or has expired). Connect it again (this link is for you alone; it works once, for 15 minutes): %s", ce.Alias, ce.URL),
			fmt.Sprintf("the user's own %s account, whose connection the server refused (revoked or expired)", ce.Alias)
	}
	return fmt.Sprintf("To let Neo use %s on your behalf, connect your account (this link is for you alone; it works once, for 15 minutes): %s", ce.Alias, ce.URL),
		fmt.Sprintf("the user's own %s account, which they have not connected yet", ce.Alias)
}

// sendConnect sends the person whose turn t is text with their connect
// link, where no one else sees it: a private notice, or the thread itself
// when the place is the person's alone (a direct message, the web).
// Anywhere else it is not sent at all. It reports whether it was sent.
func sendConnect(ctx context.Context, t *core.Turn, text string) bool {
	if t == nil || t.Reporter == nil {
		return false
	}
	if p, ok := t.Reporter.(core.PrivateNoticer); ok {
		return p.PrivateNotice(ctx, t.Inbound.User, text) == nil
	}
	return Personal(t.Inbound) && t.Reporter.Notice(ctx, text) == nil
}

// NotConnectedError is a spend call not made because the person whose
// turn it is has not connected their own account to the tool's per_user
// server, or must grant it more: nothing left neobot ([mcp.ErrNotSent]).
// What says what they lack; Sent whether their link reached them.
type NotConnectedError struct {
	Alias string
	What  string
	Sent  bool
}

// Error says what happened, for the person and the model.
func (e *NotConnectedError) Error() string {
	what := e.What
	if what == "" {
		what = fmt.Sprintf("the person's own %s account, which they have not connected yet", e.Alias)
	}
	if e.Sent {
		return fmt.Sprintf("the call was not made and nothing was sent: it needs %s; a private link to fix that was sent to them (they open it, then ask again)", what)
	}
	return fmt.Sprintf("the call was not made and nothing was sent: it needs %s; no private way to send them the link was available here (they can message Neo directly to get it)", what)
}

// Unwrap is mcp.ErrNotSent: the call never left neobot.
func (e *NotConnectedError) Unwrap() error { return mcp.ErrNotSent }

// Accounts lists the per_user servers and whether the person at place
// has connected each (see mcp.Manager.Accounts); none without servers.
func (s *Surface) Accounts(ctx context.Context, place mcp.Place) ([]mcp.Account, error) {
	if s.mgr == nil {
		return nil, nil
	}
	return s.mgr.Accounts(ctx, place)
}

// Connect starts the person at place's login to the per_user server
// alias and returns their private link (see mcp.Manager.Connect).
func (s *Surface) Connect(ctx context.Context, alias string, place mcp.Place) (string, error) {
	if s.mgr == nil {
		return "", errNoServers
	}
	return s.mgr.Connect(ctx, alias, place)
}

// Disconnect deletes the person at place's grant for the per_user server
// alias (see mcp.Manager.Disconnect).
func (s *Surface) Disconnect(ctx context.Context, alias string, place mcp.Place) error {
	if s.mgr == nil {
		return errNoServers
	}
	return s.mgr.Disconnect(ctx, alias, place)
}
