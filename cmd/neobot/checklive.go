package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/neobot/neobot/adapters/slack"
	"github.com/neobot/neobot/core/llm"
)

// liveTimeout bounds each call `neobot check --live` makes.
const liveTimeout = 20 * time.Second

// checkLive calls every service the settings name, once: a one-token
// model call, Slack's auth.test, Discord's users/@me and the daemon. It
// prints a line for each and returns one problem, naming the fix, per
// service that failed.
func (m *Main) checkLive(ctx context.Context, cfg *Config, log zerolog.Logger) []error {
	var problems []error
	say := func(format string, a ...any) { fmt.Fprintf(m.Stdout, format+"\n", a...) }
	if cfg.Model != "" {
		if err := m.liveModel(ctx, cfg, log); err != nil {
			problems = append(problems, err)
		} else {
			say("live: model %s answered", cfg.Model)
		}
	}
	if cfg.SlackBotToken != "" {
		if who, err := liveSlack(ctx, cfg); err != nil {
			problems = append(problems, err)
		} else {
			say("live: Slack accepts SLACK_BOT_TOKEN (%s)", who)
		}
	}
	if cfg.DiscordBotToken != "" {
		if who, err := liveDiscord(ctx, cfg); err != nil {
			problems = append(problems, err)
		} else {
			say("live: Discord accepts DISCORD_BOT_TOKEN (%s)", who)
		}
	}
	if cfg.DaemonURL != "" {
		if status, err := liveDaemon(ctx, cfg); err != nil {
			problems = append(problems, err)
		} else {
			say("live: the execution daemon answers (HTTP %d)", status)
		}
	}
	return problems
}

// liveModel asks the model for one token.
func (m *Main) liveModel(ctx context.Context, cfg *Config, log zerolog.Logger) error {
	c, err := m.newLLM(cfg, cfg.Model, cfg.ActorDID, log, func(c *llm.Config) { c.MaxTokens, c.Timeout = 1, liveTimeout })
	if err != nil {
		return err
	}
	_, err = c.Chat(ctx, llm.ChatRequest{Messages: []llm.Message{llm.UserMessage("Reply with the word OK.")}})
	if err != nil {
		return fmt.Errorf("live: the model %s at %s did not answer: %w", cfg.Model, c.Endpoint(), err)
	}
	return nil
}

// liveSlack calls auth.test with the bot token.
func liveSlack(ctx context.Context, cfg *Config) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, liveTimeout)
	defer cancel()
	team, user, err := slack.CheckToken(ctx, cfg.SlackBotToken.Reveal(), cfg.SlackAPIURL)
	if err == nil {
		return "team " + team + ", bot " + user, nil
	}
	switch msg := err.Error(); msg {
	case "invalid_auth", "not_authed", "token_revoked", "account_inactive", "token_expired":
		return "", fmt.Errorf("live: Slack refused SLACK_BOT_TOKEN (%s): reinstall the app to the workspace (OAuth & Permissions) and copy its Bot User OAuth Token", msg)
	}
	return "", fmt.Errorf("live: Slack at SLACK_API_URL=%s could not be asked: %w", cfg.SlackAPIURL, err)
}

// liveDiscord fetches the bot's own user with its token.
func liveDiscord(ctx context.Context, cfg *Config) (string, error) {
	status, body, err := liveGet(ctx, strings.TrimRight(cfg.DiscordAPIURL, "/")+"/api/v9/users/@me", "Bot "+cfg.DiscordBotToken.Reveal())
	switch {
	case err != nil:
		return "", fmt.Errorf("live: Discord at DISCORD_API_URL=%s could not be asked: %w", cfg.DiscordAPIURL, err)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return "", fmt.Errorf("live: Discord refused DISCORD_BOT_TOKEN (HTTP %d): reset the token (Developer Portal > Bot > Reset Token) and set the new one", status)
	case status != http.StatusOK:
		return "", fmt.Errorf("live: Discord answered HTTP %d to users/@me: %.200s", status, body)
	}
	return "users/@me ok", nil
}

// liveDaemon reaches the execution daemon's base URL with its token. Any
// HTTP answer but a refusal of the token means it is there.
func liveDaemon(ctx context.Context, cfg *Config) (int, error) {
	status, _, err := liveGet(ctx, cfg.DaemonURL, "Bearer "+cfg.DaemonToken.Reveal())
	switch {
	case err != nil:
		return 0, fmt.Errorf("live: the execution daemon at NEO_DAEMON_URL=%s cannot be reached: %w", cfg.DaemonURL, err)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return 0, fmt.Errorf("live: the execution daemon refused NEO_DAEMON_TOKEN (HTTP %d): set the token the daemon expects", status)
	}
	return status, nil
}

// liveGet makes one authorized GET and returns the status and the start
// of the body.
func liveGet(ctx context.Context, url, auth string) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, liveTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", auth)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) {
			err = ue.Unwrap() // the cause, not the URL again
		}
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	return resp.StatusCode, string(body), nil
}
