package main

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/neobot/neobot/adapters/slack"
	"github.com/neobot/neobot/adapters/web"
	"github.com/neobot/neobot/cmd/neobot/internal/connect"
	"github.com/neobot/neobot/core/governance"
)

// adminPage sets up the web chat's admin page (docs/governance.md): the
// places' settings through the admin API's own code (placeWriter), for
// NEO_WEB_ADMINS, with Sign in with Slack, Slack workspace admins, and
// with Sign in with Discord, Discord server managers.
//
// tokens gives the bot token of the installation serving a Slack
// workspace (the Slack adapter's BotToken); nil without Slack.
func adminPage(cfg *Config, a *app, o *web.Options, tokens connect.BotTokens) {
	o.Admins, o.PageURL = cfg.WebAdmins, cfg.webPage()
	if sessions, ok := a.db.(web.AdminSessions); ok {
		o.AdminSessions = sessions // a sign-in on any instance, a sign-out on any
	}
	places, ok := a.db.(governance.Store)
	if !ok || a.reapply == nil {
		return
	}
	o.Governor = placeWriter{s: places, skills: a.skills, checkModel: cfg.checkPlaceModel, applied: a.reapply}
	if cfg.SlackClientID != "" && cfg.SlackClientSecret != "" && tokens != nil {
		api := strings.TrimRight(cmp.Or(cfg.SlackAPIURL, "https://slack.com/api/"), "/") + "/"
		client := &http.Client{Timeout: 30 * time.Second}
		o.SlackSignIn = slackAdmins{connect.NewSlackAdmins(api, cfg.SlackClientID, cfg.SlackClientSecret.Reveal(), tokens, client)}
	}
	if cfg.DiscordClientID != "" && cfg.DiscordClientSecret != "" && cfg.DiscordBotToken != "" {
		base := cmp.Or(cfg.DiscordAPIURL, "https://discord.com")
		client := &http.Client{Timeout: 30 * time.Second}
		o.DiscordSignIn = discordAdmins{connect.NewDiscordAdmins(base, cfg.DiscordClientID, cfg.DiscordClientSecret.Reveal(), cfg.DiscordBotToken.Reveal(), client)}
	}
}

// discordAdmins is connect.DiscordAdmins as the web chat's admin page
// wants it.
type discordAdmins struct{ *connect.DiscordAdmins }

// Identify is who signed in with Discord, and the servers they manage
// where Neo's bot is.
func (d discordAdmins) Identify(ctx context.Context, code, redirect string) (web.DiscordPerson, error) {
	p, err := d.DiscordAdmins.Identify(ctx, code, redirect)
	if err != nil {
		return web.DiscordPerson{}, err
	}
	return web.DiscordPerson{User: p.User, Name: p.Name, Guilds: p.Guilds, Why: p.Why}, nil
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

// slackAdmins is connect.SlackAdmins as the web chat's admin page wants it.
type slackAdmins struct{ *connect.SlackAdmins }

// Identify is who signed in with Slack, and whether they administer their
// workspace.
func (s slackAdmins) Identify(ctx context.Context, code, redirect string) (web.SlackPerson, error) {
	p, err := s.SlackAdmins.Identify(ctx, code, redirect)
	if err != nil {
		return web.SlackPerson{}, err
	}
	return webPerson(p), nil
}

// Check asks Slack again whether team's user administers team.
func (s slackAdmins) Check(ctx context.Context, team, user string) (web.SlackPerson, error) {
	p, err := s.SlackAdmins.Check(ctx, team, user)
	if err != nil {
		return web.SlackPerson{}, err
	}
	return webPerson(p), nil
}

func webPerson(p connect.SlackPerson) web.SlackPerson {
	return web.SlackPerson{Team: p.Team, User: p.User, Name: p.Name, WorkspaceAdmin: p.WorkspaceAdmin, Why: p.Why}
}

// botTokens is the Slack adapter's BotToken as the admin page's Slack
// sign-in asks it: slack.ErrNotInstalled becomes connect's.
func botTokens(sl slackPlatform) connect.BotTokens {
	return func(ctx context.Context, team string) (string, error) {
		token, err := sl.BotToken(ctx, team)
		if errors.Is(err, slack.ErrNotInstalled) {
			return "", connect.ErrNotInstalled
		}
		return token, err
	}
}
