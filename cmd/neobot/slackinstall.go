package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/neobot/neobot/adapters/slack"
	"github.com/neobot/neobot/core/conversation"
	"github.com/neobot/neobot/core/mcp/oauth"
)

// slackPlatform is Neo in Slack: one workspace's adapter
// (SLACK_BOT_TOKEN), or every workspace that added it (SLACK_CLIENT_ID).
type slackPlatform interface {
	conversation.Platform
	Run(ctx context.Context) error
	Connected() bool
	// BotToken is the token of the installation serving a workspace.
	BotToken(ctx context.Context, team string) (string, error)
}

// slackApp returns the Slack adapter opts describe: with SLACK_REDIRECT_URL,
// Workspaces, whose installations db keeps sealed under NEO_SECRET_KEY;
// otherwise the one workspace of SLACK_BOT_TOKEN.
func slackApp(cfg *Config, db database, opts slack.Options) (slackPlatform, error) {
	if !cfg.slackDistributed() {
		return slack.New(opts)
	}
	installs, ok := db.(slack.Installs)
	if !ok {
		return nil, errors.New("this store keeps no Slack installations")
	}
	key, err := oauth.ParseKey(cfg.SecretKey.Reveal())
	if err != nil {
		return nil, fmt.Errorf("NEO_SECRET_KEY: %w", err)
	}
	opts.ClientID, opts.ClientSecret, opts.RedirectURL = cfg.SlackClientID, cfg.SlackClientSecret.Reveal(), cfg.SlackRedirectURL
	opts.AuthorizeURL, opts.Installs, opts.SecretKey = cfg.SlackAuthorizeURL, installs, key
	opts.BotToken, opts.AppToken = "", ""
	return slack.NewWorkspaces(opts)
}
