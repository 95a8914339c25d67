package slacktest

import (
	"encoding/base64"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The app's OAuth credentials, which [Server.AuthorizeURL] and
// oauth.v2.access accept unless [Server.SetApp] sets others.
const (
	ClientID     = "1111.2222"
	ClientSecret = "fake-client-secret"
)

// codeLife is how long an authorization code may be exchanged: Slack's
// expire after ten minutes.
const codeLife = 10 * time.Minute

// Installer is the person who goes through Slack's authorize page next
// ([Server.NextInstall]) and what they do there.
type Installer struct {
	// Team is the workspace the app is installed in (default the
	// server's Team); TeamName its name (default "Team " + Team).
	Team, TeamName string
	// Enterprise is the Enterprise Grid org of Team, "" outside Grid;
	// with OrgWide the app is installed for the whole org
	// (is_enterprise_install), and oauth.v2.access names no team.
	Enterprise string
	OrgWide    bool
	// User is who installs (default "UINSTALLER").
	User string
	// Deny makes the person press Cancel: Slack sends them back with
	// error=access_denied.
	Deny bool
	// NeedsApproval is a member of a workspace that requires admins to
	// approve apps: Slack takes their request to the admins and shows
	// them that it did, without sending them back to the app; the app is
	// not installed ([Server.Requests]).
	NeedsApproval bool
}

// oauthState is the fake's side of "Add to Slack": who authorizes next,
// the codes it handed out and the bot tokens it issued.
type oauthState struct {
	clientID, secret string
	next             []Installer
	codes            map[string]grant
	tokens           map[string]*Install // bot token -> installation
	requests         []Installer
}

// grant is an authorization code waiting for oauth.v2.access.
type grant struct {
	in       Installer
	scope    string
	redirect string
	expires  time.Time
}

// Install is an installation of the app, as the fake issued it.
type Install struct {
	Installer
	Scope string
	// Token is the bot token (xoxb-) oauth.v2.access returned.
	Token string
	// Revoked is set once the app is uninstalled or its token revoked:
	// every call with Token then fails with token_revoked.
	Revoked bool
}

func (o *oauthState) init() {
	if o.codes == nil {
		o.codes, o.tokens = map[string]grant{}, map[string]*Install{}
	}
}

// SetApp replaces the app's client ID and secret the fake accepts.
func (s *Server) SetApp(clientID, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth.clientID, s.oauth.secret = clientID, secret
}

// AuthorizeURL returns the fake's https://slack.com/oauth/v2/authorize:
// a GET with client_id, scope, redirect_uri and state sends the browser
// back to redirect_uri with a code (or error=access_denied) and the
// state, as Slack's page does once the person presses Allow.
func (s *Server) AuthorizeURL() string { return s.srv.URL + "/oauth/v2/authorize" }

// NextInstall queues who goes through the authorize page next; with none
// queued, a member of the server's Team installs it.
func (s *Server) NextInstall(in Installer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth.next = append(s.oauth.next, in)
}

// Requests returns the installs waiting for an admin's approval.
func (s *Server) Requests() []Installer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Installer(nil), s.oauth.requests...)
}

// AddInstall records an installation as if oauth.v2.access had issued
// in.Token for it (in.Team, default the server's Team), for tests that
// need a workspace's own bot token without the install page.
func (s *Server) AddInstall(in Install) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth.init()
	in.Team = cmpOr(in.Team, s.team())
	in.TeamName = cmpOr(in.TeamName, "Team "+in.Team)
	s.oauth.tokens[in.Token] = &in
}

// Installed returns the live installation for team (its workspace
// install, else its org's), and whether there is one.
func (s *Server) Installed(team string) (Install, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in := s.installLocked(team); in != nil {
		return *in, true
	}
	return Install{}, false
}

// installLocked returns the newest live installation serving team.
func (s *Server) installLocked(team string) *Install {
	var found *Install
	for _, in := range s.oauth.tokens {
		if in.Revoked || in.Team != team {
			continue
		}
		if found == nil || in.Token > found.Token {
			found = in
		}
	}
	return found
}

// Uninstall removes the app from team's workspace (its org, for an
// org-wide install), as an admin does in Slack: the bot token stops
// working, and the app gets tokens_revoked, then app_uninstalled. The
// app_uninstalled delivery is returned; it panics when the app is not
// installed there.
func (s *Server) Uninstall(team string) Delivery {
	s.revoke(team)
	return s.EventIn(team, map[string]any{"type": "app_uninstalled", "event_ts": s.eventTS()})
}

// RevokeToken revokes the bot token of team's installation (auth.revoke,
// or an admin's doing) and delivers tokens_revoked, which lists the user
// IDs whose tokens went: the bot user's, under "bot".
func (s *Server) RevokeToken(team string) Delivery {
	s.revoke(team)
	return s.EventIn(team, map[string]any{
		"type":     "tokens_revoked",
		"tokens":   map[string]any{"oauth": []string{}, "bot": []string{BotUserID}},
		"event_ts": s.eventTS(),
	})
}

func (s *Server) revoke(team string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.installLocked(team)
	if in == nil {
		panic("slacktest: the app is not installed in " + team)
	}
	for _, other := range s.oauth.tokens {
		if other.Team == in.Team || in.OrgWide && other.Enterprise == in.Enterprise {
			other.Revoked = true
		}
	}
}

func (s *Server) eventTS() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nextTSLocked()
}

// EventIn delivers an Events API inner event of workspace team under a
// fresh event_id.
func (s *Server) EventIn(team string, inner map[string]any) Delivery {
	s.mu.Lock()
	id := s.nextIDLocked("Ev")
	s.mu.Unlock()
	return s.deliverEventIn(team, id, inner, 0)
}

// authorizationLocked returns the Enterprise Grid org of team ("" outside
// Grid) and the authorizations entry of an event there: the installation
// the event is for, as Slack names it.
func (s *Server) authorizationLocked(team string) (enterprise string, auth map[string]any) {
	auth = map[string]any{"team_id": team, "user_id": BotUserID, "is_bot": true, "is_enterprise_install": false}
	in := s.installLocked(team)
	if in == nil {
		for _, other := range s.oauth.tokens {
			if other.Team == team {
				in = other // revoked: events still say whose they were
			}
		}
	}
	if in == nil || in.Enterprise == "" {
		return "", auth
	}
	auth["enterprise_id"] = in.Enterprise
	if in.OrgWide {
		auth["team_id"], auth["is_enterprise_install"] = nil, true
	}
	return in.Enterprise, auth
}

var requestedPage = template.Must(template.New("requested").Parse(`<!doctype html>
<title>Request sent</title>
<p>Your request to install this app has been sent to the admins of {{.}}. You will hear from Slackbot once they decide.</p>`))

// serveAuthorize is Slack's authorize page, with the person's choice
// already made (NextInstall).
func (s *Server) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirect, err := url.Parse(q.Get("redirect_uri"))
	s.mu.Lock()
	s.oauth.init()
	clientID := cmpOr(s.oauth.clientID, ClientID)
	switch {
	case q.Get("client_id") != clientID:
		s.mu.Unlock()
		http.Error(w, "invalid_client_id", http.StatusBadRequest)
		return
	case q.Get("scope") == "":
		s.mu.Unlock()
		http.Error(w, "invalid_scope: the app asks for no bot scopes", http.StatusBadRequest)
		return
	case err != nil || redirect.Scheme != "http" && redirect.Scheme != "https" || redirect.Host == "":
		s.mu.Unlock()
		http.Error(w, "bad_redirect_uri", http.StatusBadRequest)
		return
	}
	in := Installer{}
	if len(s.oauth.next) > 0 {
		in, s.oauth.next = s.oauth.next[0], s.oauth.next[1:]
	}
	in.Team = cmpOr(in.Team, s.team())
	in.TeamName = cmpOr(in.TeamName, "Team "+in.Team)
	in.User = cmpOr(in.User, "UINSTALLER")
	back := redirect.Query()
	back.Set("state", q.Get("state"))
	switch {
	case in.NeedsApproval:
		s.oauth.requests = append(s.oauth.requests, in)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = requestedPage.Execute(w, in.TeamName)
		return
	case in.Deny:
		back.Set("error", "access_denied")
	default:
		code := s.nextIDLocked("code-")
		s.oauth.codes[code] = grant{in: in, scope: q.Get("scope"), redirect: q.Get("redirect_uri"), expires: time.Now().Add(codeLife)}
		back.Set("code", code)
	}
	s.mu.Unlock()
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

// oauthAccessLocked answers oauth.v2.access: the app's credentials (form
// fields, or HTTP Basic in auth) and a code from the authorize page, with
// the same redirect_uri, for a bot token.
func (s *Server) oauthAccessLocked(p url.Values, auth string) map[string]any {
	s.oauth.init()
	id, secret := p.Get("client_id"), p.Get("client_secret")
	if basic, ok := strings.CutPrefix(auth, "Basic "); ok {
		if b, err := base64.StdEncoding.DecodeString(basic); err == nil {
			id, secret, _ = strings.Cut(string(b), ":")
		}
	}
	g, known := s.oauth.codes[p.Get("code")]
	switch {
	case id != cmpOr(s.oauth.clientID, ClientID):
		return fail("invalid_client_id")
	case secret != cmpOr(s.oauth.secret, ClientSecret):
		return fail("bad_client_secret")
	case !known || time.Now().After(g.expires):
		return fail("invalid_code")
	case p.Get("redirect_uri") != g.redirect:
		return fail("bad_redirect_uri")
	}
	delete(s.oauth.codes, p.Get("code")) // a code is good once
	in := &Install{Installer: g.in, Scope: g.scope, Token: fmt.Sprintf("xoxb-%s-%s", g.in.Team, s.nextIDLocked(""))}
	s.oauth.tokens[in.Token] = in
	resp := map[string]any{
		"ok": true, "access_token": in.Token, "token_type": "bot", "scope": in.Scope,
		"bot_user_id": BotUserID, "app_id": AppID,
		"team":                  map[string]any{"id": in.Team, "name": in.TeamName},
		"enterprise":            nil,
		"authed_user":           map[string]any{"id": in.User},
		"is_enterprise_install": in.OrgWide,
	}
	if in.Enterprise != "" {
		resp["enterprise"] = map[string]any{"id": in.Enterprise, "name": "Org " + in.Enterprise}
	}
	if in.OrgWide {
		resp["team"] = nil
	}
	return resp
}

// tokenLocked answers a call made with a token the fake issued: refused
// once revoked, and auth.test names the installation's workspace or org.
// Any other token is left to the usual answers (nil).
func (s *Server) tokenLocked(method, token string) map[string]any {
	in := s.oauth.tokens[token]
	switch {
	case in == nil:
		return nil
	case in.Revoked:
		return fail("token_revoked")
	case method != "auth.test":
		return nil
	}
	resp := map[string]any{"ok": true, "url": "https://" + strings.ToLower(in.Team) + ".slack.test/", "team": in.TeamName,
		"user": "neo", "user_id": BotUserID, "bot_id": BotID, "team_id": in.Team, "is_enterprise_install": in.OrgWide}
	if in.Enterprise != "" {
		resp["enterprise_id"] = in.Enterprise
	}
	return resp
}
