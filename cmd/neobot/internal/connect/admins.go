package connect

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/neobot/neobot/core/mcp"
)

// SlackAdmins is Sign in with Slack for the web chat's admin page, and
// users.info (with the bot token of the installation serving the
// person's workspace) for whether who signed in is an admin or owner of
// their workspace.
type SlackAdmins struct {
	signin slackSignIn
	tokens BotTokens
}

// BotTokens returns the bot token of the installation serving Slack
// workspace team, or an error wrapping [ErrNotInstalled] when none does
// (never another workspace's token).
type BotTokens func(ctx context.Context, team string) (string, error)

// ErrNotInstalled is BotTokens' answer for a workspace Neo is not
// installed in.
var ErrNotInstalled = errors.New("neo is not installed in this workspace")

// SlackPerson is who signed in with Slack.
type SlackPerson struct {
	Team, User, Name string
	// WorkspaceAdmin: an admin or owner of Team.
	WorkspaceAdmin bool
	// Why says, when WorkspaceAdmin is false for a reason other than
	// their role (Neo is not installed in Team, or Slack refuses its
	// token there), what it is, written for the person.
	Why string
}

// NewSlackAdmins signs people in with the Slack app id/secret through the
// Web API at api (ending in "/"), and asks users.info with the bot token
// tokens gives for the person's workspace.
func NewSlackAdmins(api, id, secret string, tokens BotTokens, client *http.Client) *SlackAdmins {
	return &SlackAdmins{signin: slackSignIn{api: api, id: id, secret: secret, client: client}, tokens: tokens}
}

// AuthURL is Slack's sign-in page.
func (s *SlackAdmins) AuthURL(state, redirect string) string {
	return s.signin.authorize(state, redirect, mcp.Place{})
}

// Identify trades the sign-in's code for who signed in, and asks Slack
// whether they administer their workspace.
func (s *SlackAdmins) Identify(ctx context.Context, code, redirect string) (SlackPerson, error) {
	who, err := s.signin.identify(ctx, "", code, redirect)
	if err != nil {
		return SlackPerson{}, err
	}
	p, err := s.Check(ctx, who.workspace, who.user)
	p.Name = who.name
	return p, err
}

// Check asks Slack again whether user administers workspace team, with
// the bot token of the installation serving team: not when Neo is no
// longer installed there (Why says so).
func (s *SlackAdmins) Check(ctx context.Context, team, user string) (SlackPerson, error) {
	p := SlackPerson{Team: team, User: user}
	token, err := s.tokens(ctx, team)
	switch {
	case errors.Is(err, ErrNotInstalled):
		p.Why = notInstalled(team)
		return p, nil
	case err != nil:
		return SlackPerson{}, fmt.Errorf("the bot token of workspace %s: %w", team, err)
	}
	var info struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
		User  struct {
			TeamID  string `json:"team_id"`
			IsAdmin bool   `json:"is_admin"`
			IsOwner bool   `json:"is_owner"`
		} `json:"user"`
	}
	bearer := func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
	if err := fetchJSON(ctx, s.signin.client, s.signin.api+"users.info", url.Values{"user": {user}}, bearer, &info); err != nil {
		return SlackPerson{}, fmt.Errorf("slack users.info: %w", err)
	}
	switch {
	case info.OK:
		p.WorkspaceAdmin = info.User.TeamID == team && (info.User.IsAdmin || info.User.IsOwner)
	case info.Error == "user_not_found":
	case info.Error == "invalid_auth" || info.Error == "token_revoked" || info.Error == "account_inactive":
		p.Why = fmt.Sprintf("Slack no longer takes Neo's token for workspace %s (%s: it was uninstalled or its token revoked), so it cannot ask Slack who administers it, and nobody there governs its places.", team, info.Error)
	default:
		return SlackPerson{}, fmt.Errorf("slack users.info: %s", info.Error)
	}
	return p, nil
}

// Installed says why nobody governs team's places when Neo is not (or no
// longer) installed there; "" while it is.
func (s *SlackAdmins) Installed(ctx context.Context, team string) (string, error) {
	_, err := s.tokens(ctx, team)
	switch {
	case errors.Is(err, ErrNotInstalled):
		return notInstalled(team), nil
	case err != nil:
		return "", fmt.Errorf("the bot token of workspace %s: %w", team, err)
	}
	return "", nil
}

// notInstalled says that Neo is not installed in team, for its people.
func notInstalled(team string) string {
	return fmt.Sprintf("Neo is not installed in Slack workspace %s (or no longer), so it cannot ask Slack who administers it, and nobody there governs its places. An admin of the workspace can add it again with Add to Slack.", team)
}
