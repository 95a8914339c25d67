package slacktest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/neobot/neobot/adapters/slack/slacktest"
)

// authorize opens the fake's authorize page as a browser would and returns
// where it sends the browser back to (nil when it does not).
func authorize(t *testing.T, s *slacktest.Server, q url.Values) (*url.URL, *http.Response) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(s.AuthorizeURL() + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return nil, resp
	}
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return back, resp
}

func TestOAuthInstall(t *testing.T) {
	s := slacktest.New(t)
	ctx := t.Context()
	const redirect = "https://neo.example/slack/oauth/callback"
	ask := url.Values{"client_id": {slacktest.ClientID}, "scope": {"app_mentions:read,chat:write"},
		"redirect_uri": {redirect}, "state": {"s-1"}}

	s.NextInstall(slacktest.Installer{Team: "T1", User: "UADMIN"})
	back, _ := authorize(t, s, ask)
	if back == nil || back.Query().Get("state") != "s-1" || back.Query().Get("code") == "" || !strings.HasPrefix(back.String(), redirect+"?") {
		t.Fatalf("authorize sent the browser to %v, want %s with a code and the state", back, redirect)
	}
	code := back.Query().Get("code")
	api := s.APIURL()
	if _, err := slack.GetOAuthV2ResponseContext(ctx, http.DefaultClient, slacktest.ClientID, "wrong", code, redirect, slack.OAuthOptionAPIURL(api)); err == nil || !strings.Contains(err.Error(), "bad_client_secret") {
		t.Errorf("oauth.v2.access with a wrong secret = %v, want bad_client_secret", err)
	}
	got, err := slack.GetOAuthV2ResponseContext(ctx, http.DefaultClient, slacktest.ClientID, slacktest.ClientSecret, code, redirect, slack.OAuthOptionAPIURL(api))
	if err != nil {
		t.Fatal(err)
	}
	if got.TokenType != "bot" || !strings.HasPrefix(got.AccessToken, "xoxb-") || got.Team.ID != "T1" || got.AuthedUser.ID != "UADMIN" ||
		got.BotUserID != slacktest.BotUserID || got.IsEnterpriseInstall || got.Scope != "app_mentions:read,chat:write" {
		t.Errorf("oauth.v2.access = %+v, want a bot token for T1 installed by UADMIN", got)
	}
	if _, err := slack.GetOAuthV2ResponseContext(ctx, http.DefaultClient, slacktest.ClientID, slacktest.ClientSecret, code, redirect, slack.OAuthOptionAPIURL(api)); err == nil || !strings.Contains(err.Error(), "invalid_code") {
		t.Errorf("oauth.v2.access with a used code = %v, want invalid_code", err)
	}
	bot := slack.New(got.AccessToken, slack.OptionAPIURL(api))
	if auth, err := bot.AuthTestContext(ctx); err != nil || auth.TeamID != "T1" {
		t.Fatalf("auth.test = %+v, %v; want team T1", auth, err)
	}

	d := s.Uninstall("T1")
	var env struct {
		TeamID string `json:"team_id"`
		Event  struct {
			Type string `json:"type"`
		} `json:"event"`
	}
	if err := json.Unmarshal(d.Payload, &env); err != nil || env.TeamID != "T1" || env.Event.Type != "app_uninstalled" {
		t.Errorf("uninstall delivered %s, want app_uninstalled for T1", d.Payload)
	}
	if _, err := bot.AuthTestContext(ctx); err == nil || !strings.Contains(err.Error(), "token_revoked") {
		t.Errorf("auth.test after uninstall = %v, want token_revoked", err)
	}
	if _, ok := s.Installed("T1"); ok {
		t.Errorf("Installed(T1) after uninstall = true")
	}
}

func TestOAuthOrgWideInstall(t *testing.T) {
	s := slacktest.New(t)
	const redirect = "https://neo.example/cb"
	s.NextInstall(slacktest.Installer{Team: "T1", Enterprise: "E1", OrgWide: true})
	back, _ := authorize(t, s, url.Values{"client_id": {slacktest.ClientID}, "scope": {"chat:write"}, "redirect_uri": {redirect}, "state": {"x"}})
	got, err := slack.GetOAuthV2ResponseContext(t.Context(), http.DefaultClient, slacktest.ClientID, slacktest.ClientSecret,
		back.Query().Get("code"), redirect, slack.OAuthOptionAPIURL(s.APIURL()))
	if err != nil {
		t.Fatal(err)
	}
	if !got.IsEnterpriseInstall || got.Enterprise.ID != "E1" || got.Team.ID != "" {
		t.Errorf("oauth.v2.access = %+v, want an org-wide install for E1 naming no team", got)
	}
	d := s.Mention(slacktest.Msg{User: "U1", Text: "hi", Team: "T1"})
	var env struct {
		EnterpriseID   string `json:"enterprise_id"`
		Authorizations []struct {
			EnterpriseID        string  `json:"enterprise_id"`
			TeamID              *string `json:"team_id"`
			IsEnterpriseInstall bool    `json:"is_enterprise_install"`
		} `json:"authorizations"`
	}
	if err := json.Unmarshal(d.Payload, &env); err != nil || env.EnterpriseID != "E1" || len(env.Authorizations) != 1 ||
		!env.Authorizations[0].IsEnterpriseInstall || env.Authorizations[0].TeamID != nil {
		t.Errorf("event in an org-wide install = %s, want enterprise_id E1 and an enterprise authorization", d.Payload)
	}
}

func TestOAuthRefusals(t *testing.T) {
	s := slacktest.New(t)
	good := url.Values{"client_id": {slacktest.ClientID}, "scope": {"chat:write"}, "redirect_uri": {"https://neo.example/cb"}, "state": {"st"}}
	with := func(k, v string) url.Values {
		q := url.Values{}
		for key, vals := range good {
			q[key] = vals
		}
		q.Set(k, v)
		return q
	}
	for name, q := range map[string]url.Values{
		"unknown client": with("client_id", "9.9"), "no scope": with("scope", ""), "no redirect": with("redirect_uri", ""),
	} {
		if back, resp := authorize(t, s, q); back != nil || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("authorize with %s = %d to %v, want 400 and no redirect", name, resp.StatusCode, back)
		}
	}
	s.NextInstall(slacktest.Installer{Deny: true})
	if back, _ := authorize(t, s, good); back == nil || back.Query().Get("error") != "access_denied" || back.Query().Get("code") != "" {
		t.Errorf("cancelled authorize sent the browser to %v, want error=access_denied and no code", back)
	}
	s.NextInstall(slacktest.Installer{User: "UMEMBER", NeedsApproval: true})
	if back, resp := authorize(t, s, good); back != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("authorize needing approval = %d to %v, want Slack's own page and no redirect", resp.StatusCode, back)
	}
	if r := s.Requests(); len(r) != 1 || r[0].User != "UMEMBER" {
		t.Errorf("Requests() = %+v, want UMEMBER's", r)
	}
	_, err := slack.GetOAuthV2ResponseContext(context.Background(), http.DefaultClient, slacktest.ClientID, slacktest.ClientSecret, "code-nope", "https://neo.example/cb", slack.OAuthOptionAPIURL(s.APIURL()))
	if se := (slack.SlackErrorResponse{}); !errors.As(err, &se) || se.Err != "invalid_code" {
		t.Errorf("oauth.v2.access with an unknown code = %v, want invalid_code", err)
	}
}

// install adds the app to in.Team through the authorize page and
// oauth.v2.access, and returns its bot token.
func install(t *testing.T, s *slacktest.Server, in slacktest.Installer) string {
	t.Helper()
	const redirect = "https://neo.example/slack/oauth/callback"
	s.NextInstall(in)
	back, _ := authorize(t, s, url.Values{"client_id": {slacktest.ClientID}, "scope": {"users:read"}, "redirect_uri": {redirect}, "state": {"s"}})
	if back == nil {
		t.Fatalf("the install in %s was not sent back", in.Team)
	}
	got, err := slack.GetOAuthV2ResponseContext(t.Context(), http.DefaultClient, slacktest.ClientID, slacktest.ClientSecret,
		back.Query().Get("code"), redirect, slack.OAuthOptionAPIURL(s.APIURL()))
	if err != nil {
		t.Fatal(err)
	}
	return got.AccessToken
}

// TestUsersInfoByWorkspace: users.info describes a person (is_admin,
// is_owner, team_id) to a bot token of their own workspace, or of their
// org's org-wide installation, and answers user_not_found to any other;
// a revoked token gets token_revoked.
func TestUsersInfoByWorkspace(t *testing.T) {
	s := slacktest.New(t)
	a, b := install(t, s, slacktest.Installer{Team: "TA"}), install(t, s, slacktest.Installer{Team: "TB"})
	org := install(t, s, slacktest.Installer{Team: "TG", Enterprise: "E1", OrgWide: true})
	s.SetPerson("UADA", slacktest.Person{Team: "TA", Admin: true})
	s.SetPerson("UOWEN", slacktest.Person{Team: "TB", Owner: true})
	s.SetPerson("UGRID", slacktest.Person{Team: "TG2", Enterprise: "E1", Admin: true})
	s.SetAdmin("UHOME")
	for _, c := range []struct {
		token, user, want string // want: "team admin owner", or the error
	}{
		{a, "UADA", "TA true false"},
		{b, "UADA", "user_not_found"},
		{b, "UOWEN", "TB false true"},
		{a, "UOWEN", "user_not_found"},
		{org, "UGRID", "TG2 true false"},
		{org, "UADA", "user_not_found"},
		{a, "UGRID", "user_not_found"},
		{"xoxb-static", "UHOME", slacktest.TeamID + " true false"},
		{"xoxb-static", "UADA", "user_not_found"},
		{a, "UNOBODY", "user_not_found"},
	} {
		u, err := slack.New(c.token, slack.OptionAPIURL(s.APIURL())).GetUserInfoContext(t.Context(), c.user)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = strings.Join([]string{u.TeamID, strconv.FormatBool(u.IsAdmin), strconv.FormatBool(u.IsOwner)}, " ")
		}
		if got != c.want {
			t.Errorf("users.info %s with %s's token = %q, want %q", c.user, c.token, got, c.want)
		}
	}
	s.Uninstall("TA")
	if _, err := slack.New(a, slack.OptionAPIURL(s.APIURL())).GetUserInfoContext(t.Context(), "UADA"); err == nil || err.Error() != "token_revoked" {
		t.Errorf("users.info with an uninstalled workspace's token = %v, want token_revoked", err)
	}
}
