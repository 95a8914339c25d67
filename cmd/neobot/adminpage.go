package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/neobot/neobot/adapters/web"
	"github.com/neobot/neobot/core/governance"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/mcp/oauth"
)

// adminPage sets up the web chat's admin page (docs/governance.md): the
// places' settings through the admin API's own code (placeWriter), for
// NEO_WEB_ADMINS and, with Sign in with Slack, Slack workspace admins.
func adminPage(cfg *Config, a *app, o *web.Options) {
	o.Admins, o.PageURL = cfg.WebAdmins, cfg.webPage()
	if key, err := oauth.ParseKey(cfg.SecretKey.Reveal()); err == nil && cfg.SecretKey != "" {
		// Every instance with the key takes a Slack sign-in any of them
		// made; a key of its own, so it opens nothing else.
		sum := sha256.Sum256(append([]byte("neobot web admin sessions\x00"), key...))
		o.SessionKey = sum[:]
	}
	places, ok := a.db.(governance.Store)
	if !ok || a.reapply == nil {
		return
	}
	o.Governor = placeWriter{s: places, skills: a.skills, applied: a.reapply}
	if cfg.SlackClientID != "" && cfg.SlackClientSecret != "" && cfg.SlackBotToken != "" {
		api := strings.TrimRight(cmp.Or(cfg.SlackAPIURL, "https://slack.com/api/"), "/") + "/"
		client := &http.Client{Timeout: 30 * time.Second}
		o.SlackSignIn = slackAdmins{
			signin: slackSignIn{api: api, id: cfg.SlackClientID, secret: cfg.SlackClientSecret.Reveal(), client: client},
			bot:    cfg.SlackBotToken.Reveal(),
		}
	}
}

// Places returns every place's newest version.
func (p placeWriter) Places(ctx context.Context) ([]governance.Version, error) {
	return p.s.Places(ctx)
}

// PlaceHistory returns place's versions, oldest first.
func (p placeWriter) PlaceHistory(ctx context.Context, place string) ([]governance.Version, error) {
	return p.s.PlaceHistory(ctx, place)
}

// Skills names the skills the settings file defines.
func (p placeWriter) Skills() []string {
	var names []string
	for _, sk := range p.skills.Skills() {
		names = append(names, sk.Name)
	}
	return names
}

// slackAdmins is Sign in with Slack for the admin page, and users.info
// (with the bot's token) for whether who signed in is an admin or owner
// of their workspace.
type slackAdmins struct {
	signin slackSignIn
	bot    string
}

// AuthURL is Slack's sign-in page.
func (s slackAdmins) AuthURL(state, redirect string) string {
	return s.signin.authorize(state, redirect, mcp.Place{})
}

// Identify trades the sign-in's code for who signed in, and asks Slack
// whether they administer their workspace.
func (s slackAdmins) Identify(ctx context.Context, code, redirect string) (web.SlackPerson, error) {
	who, err := s.signin.identify(ctx, "", code, redirect)
	if err != nil {
		return web.SlackPerson{}, err
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
		return web.SlackPerson{}, fmt.Errorf("slack users.info: %w", err)
	}
	p := web.SlackPerson{Team: who.workspace, User: who.user, Name: who.name}
	switch {
	case info.OK:
		p.WorkspaceAdmin = info.User.TeamID == who.workspace && (info.User.IsAdmin || info.User.IsOwner)
	case info.Error != "user_not_found":
		return web.SlackPerson{}, fmt.Errorf("slack users.info: %s", info.Error)
	}
	return p, nil
}
