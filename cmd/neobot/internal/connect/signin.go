package connect

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/neobot/neobot/core/mcp"
)

// The sign-ins that prove who opens a connect link: the web chat's,
// Sign in with Slack, and Discord's OAuth2 identify (see Links).

// webProofs is the web chat's sign-in: the chat page, signed in with the
// person's token, says who opened a link.
type webProofs struct {
	page string // the chat page
	now  func() time.Time

	mu sync.Mutex
	m  map[string]webProof // by code
}

type webProof struct {
	state, user string
	expires     time.Time
}

func (w *webProofs) add(state, user string) string {
	code := linkSecret()
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, v := range w.m {
		if now.After(v.expires) {
			delete(w.m, k)
		}
	}
	w.m[code] = webProof{state: state, user: user, expires: now.Add(proofTTL)}
	return code
}

func (w *webProofs) label() string { return "the web chat" }

func (w *webProofs) authorize(state, _ string, _ mcp.Place) string {
	return w.page + "/#" + url.Values{"connect": {state}}.Encode()
}

func (w *webProofs) identify(_ context.Context, state, code, _ string) (identity, error) {
	w.mu.Lock()
	pr, ok := w.m[code]
	delete(w.m, code)
	w.mu.Unlock()
	if !ok || pr.state != state || w.now().After(pr.expires) {
		return identity{}, errors.New("the web chat's proof of who signed in is unknown or expired")
	}
	return identity{user: pr.user, name: pr.user + " (web chat user)"}, nil
}

func (w *webProofs) is(who identity, place mcp.Place) bool { return who.user == place.User }

// slackSignIn is Sign in with Slack (OpenID Connect).
type slackSignIn struct {
	api        string // the Web API base, ending in "/"
	id, secret string
	client     *http.Client
}

func (s slackSignIn) label() string { return "Slack" }

func (s slackSignIn) authorize(state, redirect string, place mcp.Place) string {
	v := url.Values{
		"response_type": {"code"}, "scope": {"openid profile"}, "client_id": {s.id},
		"state": {state}, "redirect_uri": {redirect}, "team": {place.Workspace},
	}
	return strings.TrimSuffix(s.api, "api/") + "openid/connect/authorize?" + v.Encode()
}

func (s slackSignIn) identify(ctx context.Context, _, code, redirect string) (identity, error) {
	var tok struct {
		OK          bool   `json:"ok"`
		Error       string `json:"error"`
		AccessToken string `json:"access_token"`
	}
	form := url.Values{"client_id": {s.id}, "client_secret": {s.secret}, "code": {code}, "redirect_uri": {redirect}, "grant_type": {"authorization_code"}}
	if err := fetchJSON(ctx, s.client, s.api+"openid.connect.token", form, nil, &tok); err != nil {
		return identity{}, fmt.Errorf("slack openid.connect.token: %w", err)
	}
	if !tok.OK || tok.AccessToken == "" {
		return identity{}, fmt.Errorf("slack openid.connect.token: %s", cmp.Or(tok.Error, "no access token"))
	}
	var who struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
		User  string `json:"https://slack.com/user_id"`
		Team  string `json:"https://slack.com/team_id"`
		Name  string `json:"name"`
	}
	bearer := func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok.AccessToken) }
	if err := fetchJSON(ctx, s.client, s.api+"openid.connect.userInfo", url.Values{}, bearer, &who); err != nil {
		return identity{}, fmt.Errorf("slack openid.connect.userInfo: %w", err)
	}
	if !who.OK || who.User == "" || who.Team == "" {
		return identity{}, fmt.Errorf("slack openid.connect.userInfo: %s", cmp.Or(who.Error, "no user or team"))
	}
	return identity{workspace: who.Team, user: who.User, name: cmp.Or(who.Name, who.User) + " (Slack user " + who.User + ")"}, nil
}

func (slackSignIn) is(who identity, place mcp.Place) bool {
	return who.workspace == place.Workspace && who.user == place.User
}

// discordSignIn is Discord's OAuth2 with the identify scope. A guild is
// not part of who someone is on Discord: the user ID alone is compared.
type discordSignIn struct {
	base       string // such as https://discord.com
	id, secret string
	client     *http.Client
	scope      string // "identify" when ""
}

func (d discordSignIn) label() string { return "Discord" }

func (d discordSignIn) authorize(state, redirect string, _ mcp.Place) string {
	v := url.Values{"response_type": {"code"}, "scope": {cmp.Or(d.scope, "identify")}, "client_id": {d.id}, "state": {state}, "redirect_uri": {redirect}}
	return d.base + "/oauth2/authorize?" + v.Encode()
}

func (d discordSignIn) identify(ctx context.Context, _, code, redirect string) (identity, error) {
	who, _, err := d.signIn(ctx, code, redirect)
	return who, err
}

// signIn trades code for who signed in and their access token (a secret:
// for reading what they authorized, never kept).
func (d discordSignIn) signIn(ctx context.Context, code, redirect string) (identity, string, error) {
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}}
	basic := func(r *http.Request) { r.SetBasicAuth(d.id, d.secret) }
	if err := fetchJSON(ctx, d.client, d.base+"/api/oauth2/token", form, basic, &tok); err != nil {
		return identity{}, "", fmt.Errorf("discord oauth2/token: %w", err)
	}
	if tok.AccessToken == "" {
		return identity{}, "", errors.New("discord oauth2/token: no access token")
	}
	var who struct {
		ID         string `json:"id"`
		Username   string `json:"username"`
		GlobalName string `json:"global_name"`
	}
	bearer := func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok.AccessToken) }
	if err := fetchJSON(ctx, d.client, d.base+"/api/users/@me", nil, bearer, &who); err != nil {
		return identity{}, "", fmt.Errorf("discord users/@me: %w", err)
	}
	if who.ID == "" {
		return identity{}, "", errors.New("discord users/@me: no user ID")
	}
	return identity{user: who.ID, name: cmp.Or(cmp.Or(who.GlobalName, who.Username), who.ID) + " (Discord user " + who.ID + ")"}, tok.AccessToken, nil
}

func (discordSignIn) is(who identity, place mcp.Place) bool { return who.user == place.User }

// fetchJSON POSTs form (GETs when form is nil) to u, with auth applied,
// and decodes a 2xx JSON answer into out. Its errors never carry the
// request's secrets.
func fetchJSON(ctx context.Context, client *http.Client, u string, form url.Values, auth func(*http.Request), out any) error {
	method, body := http.MethodGet, io.Reader(nil)
	if form != nil {
		method, body = http.MethodPost, strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Accept", "application/json")
	if auth != nil {
		auth(req)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("reach %s: %w", req.URL.Host, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return statusError{code: resp.StatusCode, status: resp.Status}
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(out); err != nil {
		return fmt.Errorf("decode the answer: %w", err)
	}
	return nil
}

// statusError is fetchJSON's error for an answer that is not 2xx.
type statusError struct {
	code   int
	status string
}

func (e statusError) Error() string { return "answered " + e.status }
