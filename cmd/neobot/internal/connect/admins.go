package connect

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/neobot/neobot/core/mcp"
)

// SlackAdmins is Sign in with Slack for the web chat's admin page, and
// users.info (with the bot's token) for whether who signed in is an
// admin or owner of their workspace.
type SlackAdmins struct {
	signin slackSignIn
	bot    string
}

// SlackPerson is who signed in with Slack.
type SlackPerson struct {
	Team, User, Name string
	// WorkspaceAdmin: an admin or owner of Team.
	WorkspaceAdmin bool
}

// NewSlackAdmins signs people in with the Slack app id/secret through the
// Web API at api (ending in "/"), and asks users.info with the bot token.
func NewSlackAdmins(api, id, secret, bot string, client *http.Client) *SlackAdmins {
	return &SlackAdmins{signin: slackSignIn{api: api, id: id, secret: secret, client: client}, bot: bot}
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
	var info struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
		User  struct {
			TeamID  string `json:"team_id"`
			IsAdmin bool   `json:"is_admin"`
			IsOwner bool   `json:"is_owner"`
		} `json:"user"`
	}
	bearer := func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+s.bot) }
	if err := fetchJSON(ctx, s.signin.client, s.signin.api+"users.info", url.Values{"user": {who.user}}, bearer, &info); err != nil {
		return SlackPerson{}, fmt.Errorf("slack users.info: %w", err)
	}
	p := SlackPerson{Team: who.workspace, User: who.user, Name: who.name}
	switch {
	case info.OK:
		p.WorkspaceAdmin = info.User.TeamID == who.workspace && (info.User.IsAdmin || info.User.IsOwner)
	case info.Error != "user_not_found":
		return SlackPerson{}, fmt.Errorf("slack users.info: %s", info.Error)
	}
	return p, nil
}
