package main

import (
	"context"
	"encoding/json"
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
// call to the main model and to the cheap one, Slack's auth.test,
// Discord's users/@me and the daemon. It prints a line for each, naming
// what it called and what came back, and returns one problem per service
// that failed, naming the fix.
func (m *Main) checkLive(ctx context.Context, cfg *Config, log zerolog.Logger) []error {
	var problems []error
	say := func(format string, a ...any) { fmt.Fprintf(m.Stdout, format+"\n", a...) }
	endpoints := []modelEndpoint{cfg.mainEndpoint()}
	if cfg.CheapModel != "" {
		endpoints = append(endpoints, cfg.cheapEndpoint())
	}
	for _, ep := range endpoints {
		if ep.model == "" {
			continue
		}
		if what, err := m.liveModel(ctx, cfg, ep, log); err != nil {
			problems = append(problems, err)
		} else {
			say("live: model %s answered (%s)", ep.model, what)
		}
	}
	if cfg.SlackBotToken != "" {
		if who, err := liveSlack(ctx, cfg); err != nil {
			problems = append(problems, err)
		} else {
			say("live: Slack accepts SLACK_BOT_TOKEN (%s)", who)
		}
	}
	if cfg.SlackClientID != "" {
		if err := liveSlackClient(ctx, cfg); err != nil {
			problems = append(problems, err)
		} else {
			say("live: Slack accepts SLACK_CLIENT_ID and SLACK_CLIENT_SECRET")
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
		if what, err := liveDaemon(ctx, cfg); err != nil {
			problems = append(problems, err)
		} else {
			say("live: the execution daemon answers (%s)", what)
		}
	}
	return problems
}

// liveModel asks the model at ep for one token, capped with the parameter
// the model takes, and says what it called.
func (m *Main) liveModel(ctx context.Context, cfg *Config, ep modelEndpoint, log zerolog.Logger) (string, error) {
	c, err := m.newLLM(cfg, ep, cfg.ActorDID, log, func(c *llm.Config) { c.MaxTokens, c.Timeout = 1, liveTimeout })
	if err != nil {
		return "", fmt.Errorf("live: the %s model: %w", ep.role, err)
	}
	called := fmt.Sprintf("POST %s with %s=1", c.Endpoint(), llm.TokenLimitParam(ep.model))
	_, err = c.Chat(ctx, llm.ChatRequest{Messages: []llm.Message{llm.UserMessage("Reply with the word OK.")}})
	if err != nil {
		return "", fmt.Errorf("live: the %s model %s did not answer (%s): %w; fix: %s", ep.role, ep.model, called, err, modelFix(err, ep, c.Provider()))
	}
	return ep.role + " model, " + called + ": HTTP 200", nil
}

// modelFix says what to change when a model call failed with err.
func modelFix(err error, ep modelEndpoint, provider string) string {
	key := ep.keyVar
	if ep.key == "" {
		key = fmt.Sprintf("%s (or %s's own key variable)", ep.keyVar, provider)
	}
	var e *llm.Error
	switch {
	case llm.IsUnreachable(err):
		return fmt.Sprintf("start the model's server, or set %s to where it runs", ep.baseVar)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("the server took longer than %s for one token: check that it is not overloaded and that %s points at it", liveTimeout, ep.baseVar)
	case !errors.As(err, &e):
		return fmt.Sprintf("check that %s is an OpenAI-compatible chat-completions base URL (ending in /v1)", ep.baseVar)
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		return fmt.Sprintf("set %s to a key this endpoint accepts", key)
	case e.Status == http.StatusNotFound:
		return fmt.Sprintf("check that %s=%s is a model this endpoint serves and that %s ends in /v1", ep.modelVar, ep.model, ep.baseVar)
	case e.Status == http.StatusTooManyRequests:
		return "the account is rate limited or out of credit: check its quota and billing with the provider"
	case e.Status >= 500:
		return "the provider is failing: retry later, check its status page, or point " + ep.baseVar + " at another endpoint"
	case e.Status == http.StatusBadRequest:
		return fmt.Sprintf("the endpoint refused the request for %s=%s (its reason is above): check the model name and %s", ep.modelVar, ep.model, ep.baseVar)
	}
	return fmt.Sprintf("check %s, %s and %s", ep.modelVar, ep.baseVar, key)
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

// liveSlackClient checks the app's client ID and secret with
// oauth.v2.access.
func liveSlackClient(ctx context.Context, cfg *Config) error {
	ctx, cancel := context.WithTimeout(ctx, liveTimeout)
	defer cancel()
	err := slack.CheckClient(ctx, &http.Client{Timeout: liveTimeout}, cfg.SlackClientID, cfg.SlackClientSecret.Reveal(), cfg.SlackAPIURL)
	if err == nil {
		return nil
	}
	switch msg := err.Error(); msg {
	case "invalid_client_id", "bad_client_secret":
		return fmt.Errorf("live: Slack refused SLACK_CLIENT_ID or SLACK_CLIENT_SECRET (%s): copy both from Basic Information > App Credentials", msg)
	}
	return fmt.Errorf("live: Slack at SLACK_API_URL=%s could not be asked: %w", cfg.SlackAPIURL, err)
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

// liveProbeIntent is the intent ID the daemon check asks about: no
// daemon knows it, so a daemon answers with its own JSON "unknown intent".
const liveProbeIntent = "neobot-live-check"

// liveDaemon asks the execution daemon for the status of an intent it
// cannot know, with its token: the daemon's contract answers 200 or a JSON
// 404. Anything else (a refused token, a 5xx, a 404 page from something
// that is not the daemon, a redirect) fails, naming the fix.
func liveDaemon(ctx context.Context, cfg *Config) (string, error) {
	url := strings.TrimRight(cfg.DaemonURL, "/") + "/messages/async/" + liveProbeIntent
	status, body, err := liveGet(ctx, url, "Bearer "+cfg.DaemonToken.Reveal())
	called := "GET " + url
	switch {
	case err != nil:
		return "", fmt.Errorf("live: the execution daemon at NEO_DAEMON_URL=%s cannot be reached (%s: %v); fix: start the daemon, or set NEO_DAEMON_URL to where it listens", cfg.DaemonURL, called, err)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return "", fmt.Errorf("live: the execution daemon refused NEO_DAEMON_TOKEN (%s: HTTP %d); fix: set NEO_DAEMON_TOKEN to the token the daemon expects", called, status)
	case status >= 500:
		return "", fmt.Errorf("live: the execution daemon is failing (%s: HTTP %d %.200s); fix: look at the daemon's logs and restart it; spends cannot run until it answers", called, status, body)
	case status == http.StatusNotFound && jsonObject(body):
		return called + ": HTTP 404, the daemon's own answer for an unknown intent", nil
	case status == http.StatusNotFound:
		return "", fmt.Errorf("live: NEO_DAEMON_URL=%s does not look like the execution daemon (%s: HTTP 404 %.120q); fix: set NEO_DAEMON_URL to the daemon's base URL, the one under which /messages/async is served", cfg.DaemonURL, called, body)
	case status < 200 || status > 299 || !jsonObject(body):
		return "", fmt.Errorf("live: NEO_DAEMON_URL=%s does not look like the execution daemon (%s: HTTP %d %.120q); fix: set NEO_DAEMON_URL to the daemon's base URL", cfg.DaemonURL, called, status, body)
	}
	return fmt.Sprintf("%s: HTTP %d", called, status), nil
}

// jsonObject reports whether body is a JSON object, as the daemon's API
// answers, unlike a web server's 404 page.
func jsonObject(body string) bool {
	var v map[string]any
	return json.Unmarshal([]byte(body), &v) == nil
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
	// A redirect is an answer to report, not to follow: a daemon does not
	// send one, a login page in front of the wrong URL does.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
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
