package web

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/internal/intake/intaketest"
	"github.com/neobot/neobot/core/governance"
)

// places is a Governor in memory: versions by place, refusing a stale one
// as the stores do.
type places struct {
	mu sync.Mutex
	m  map[string][]governance.Version
}

func (p *places) Places(context.Context) ([]governance.Version, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []governance.Version
	for _, h := range p.m {
		out = append(out, h[len(h)-1])
	}
	return out, nil
}

func (p *places) PlaceHistory(_ context.Context, place string) ([]governance.Version, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.m[place], nil
}

func (p *places) SetPlace(_ context.Context, v governance.Version) (governance.Version, error) {
	if err := v.Settings.Check(); err != nil {
		return v, governance.Invalid{Err: err}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.m[v.Place]
	if int64(len(h))+1 != v.Number {
		return v, governance.ErrConflict
	}
	if len(h) > 0 {
		v.Before = h[len(h)-1].Settings
	}
	p.m[v.Place] = append(h, v)
	return v, nil
}

func (p *places) Skills() []string { return []string{"default", "reader"} }

// slackPeople is a SlackSignIn whose codes name who signs in.
type slackPeople map[string]SlackPerson

func (slackPeople) AuthURL(state, redirect string) string {
	return "https://slack.example/authorize?" + url.Values{"state": {state}, "redirect_uri": {redirect}}.Encode()
}

func (s slackPeople) Identify(_ context.Context, code, _ string) (SlackPerson, error) {
	p, ok := s[code]
	if !ok {
		return p, errors.New("no such code")
	}
	return p, nil
}

type adminWorld struct {
	srv        *httptest.Server
	places     *places
	alice, bob string // tokens: alice is listed in Admins, bob is not
}

func newAdminWorld(t *testing.T) *adminWorld {
	t.Helper()
	w := &adminWorld{places: &places{m: map[string][]governance.Version{}}}
	users := map[string]string{}
	for _, u := range []struct {
		name  string
		token *string
	}{{"alice", &w.alice}, {"bob", &w.bob}} {
		token, hash, err := NewToken()
		if err != nil {
			t.Fatal(err)
		}
		*u.token, users[hash] = token, u.name
	}
	a, err := New(Options{
		Users: users, Hub: intaketest.NewHub(intaketest.NewThreads()), History: history{},
		Governor: w.places, Admins: []string{"alice", "slack:T2/ULISTED"}, PageURL: "http://neo.test",
		SlackSignIn: slackPeople{
			"admin-code":  {Team: "T1", User: "UADMIN", Name: "ada", WorkspaceAdmin: true},
			"member-code": {Team: "T1", User: "UMEMBER", Name: "max"},
			"listed-code": {Team: "T2", User: "ULISTED", Name: "lee"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	w.srv = httptest.NewServer(a.Handler())
	t.Cleanup(w.srv.Close)
	return w
}

// call makes one admin API request as token; it returns the status and
// the body.
func (w *adminWorld) call(t *testing.T, token, method, path string, body any, headers ...string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, _ := http.NewRequest(method, w.srv.URL+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

func set(place string, version int64, skill string) map[string]any {
	return map[string]any{"place": place, "version": version, "settings": map[string]any{"skill": skill}}
}

// TestAdminPageWho: nobody is an admin unless listed; a listed web user
// reads and changes every place, recorded as web:<name>; a stale version
// and a request from another site's page are refused, saying why.
func TestAdminPageWho(t *testing.T) {
	w := newAdminWorld(t)
	if code, body := w.call(t, "", "GET", "/v1/admin/places", nil); code != http.StatusUnauthorized || !strings.Contains(body, "Sign in first") {
		t.Errorf("no token: %d %s", code, body)
	}
	for _, path := range []string{"/v1/admin/me", "/v1/admin/places", "/v1/admin/places/history?place=web"} {
		if code, body := w.call(t, w.bob, "GET", path, nil); code != http.StatusForbidden || !strings.Contains(body, "signed in as bob, who is not an admin") || !strings.Contains(body, "NEO_WEB_ADMINS") {
			t.Errorf("bob GET %s: %d %s; want 403 saying why", path, code, body)
		}
	}
	if code, body := w.call(t, w.bob, "POST", "/v1/admin/places", set("slack:T1/C1", 1, "reader")); code != http.StatusForbidden {
		t.Errorf("bob POST: %d %s", code, body)
	}
	if code, body := w.call(t, w.alice, "POST", "/v1/admin/places", set("slack:T1/C1", 1, "reader")); code != http.StatusOK || !strings.Contains(body, `"by":"web:alice"`) {
		t.Fatalf("alice POST: %d %s", code, body)
	}
	if code, body := w.call(t, w.alice, "POST", "/v1/admin/places", set("slack:T1/C1", 1, "finance")); code != http.StatusConflict || !strings.Contains(body, "changed this place's settings since you read them") {
		t.Errorf("stale POST: %d %s; want 409 saying why", code, body)
	}
	if code, body := w.call(t, w.alice, "POST", "/v1/admin/places", map[string]any{"place": "web", "version": 1, "settings": map[string]any{"daily_tokens": -1}}); code != http.StatusBadRequest || !strings.Contains(body, "daily_tokens") {
		t.Errorf("bad settings: %d %s; want 400 saying why", code, body)
	}
	if code, body := w.call(t, w.alice, "POST", "/v1/admin/places", set("discord:G1/C1", 1, "reader"), "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"); code != http.StatusForbidden || !strings.Contains(body, "another site") {
		t.Errorf("cross-site POST: %d %s; want 403", code, body)
	}
	if code, body := w.call(t, w.alice, "POST", "/v1/admin/places", set("discord:G1/C1", 1, "reader"), "Origin", w.srv.URL, "Sec-Fetch-Site", "same-origin"); code != http.StatusOK {
		t.Errorf("same-origin POST: %d %s", code, body)
	}
	if h, _ := w.places.PlaceHistory(context.Background(), "slack:T1/C1"); len(h) != 1 || h[0].Settings.Skill != "reader" {
		t.Errorf("stored history = %+v; want the one change", h)
	}
	if code, body := w.call(t, w.alice, "GET", "/v1/admin/places/history?place=slack:T1/C1", nil); code != http.StatusOK || !strings.Contains(body, `"reader"`) {
		t.Errorf("history: %d %s", code, body)
	}
}

// TestAdminPageSlack: Sign in with Slack opens the admin page to a
// workspace admin for their own workspace's places, to a listed Slack
// person for every place, and to nobody else; a callback without the
// browser's state opens nothing.
func TestAdminPageSlack(t *testing.T) {
	w := newAdminWorld(t)
	for _, p := range []string{"slack:T1/C1", "slack:T2/C2", "web"} {
		if code, body := w.call(t, w.alice, "POST", "/v1/admin/places", set(p, 1, "reader")); code != http.StatusOK {
			t.Fatalf("alice POST %s: %d %s", p, code, body)
		}
	}
	signin := func(code string) (int, string, string) {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Get(w.srv.URL + adminSigninPath)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		to, _ := url.Parse(resp.Header.Get("Location"))
		if to.Query().Get("redirect_uri") != "http://neo.test"+adminCallbackPath {
			t.Fatalf("sign-in went to %s", to)
		}
		resp, err = c.Get(w.srv.URL + adminCallbackPath + "?" + url.Values{"state": {to.Query().Get("state")}, "code": {code}}.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		loc, _ := url.Parse(resp.Header.Get("Location"))
		session, _ := url.ParseQuery(loc.Fragment)
		return resp.StatusCode, string(body), session.Get("session")
	}
	code, body, _ := signin("member-code")
	if code != http.StatusForbidden || !strings.Contains(body, "not an admin or owner of workspace T1") {
		t.Errorf("a member's sign-in: %d %s; want 403 saying why", code, body)
	}
	code, _, ada := signin("admin-code")
	if code != http.StatusSeeOther || ada == "" {
		t.Fatalf("a workspace admin's sign-in: %d", code)
	}
	if code, body := w.call(t, ada, "GET", "/v1/admin/places", nil); code != http.StatusOK || !strings.Contains(body, "slack:T1/C1") || strings.Contains(body, "T2") || strings.Contains(body, `"web"`) {
		t.Errorf("ada's places: %d %s; want T1's alone", code, body)
	}
	if code, body := w.call(t, ada, "POST", "/v1/admin/places", set("slack:T2/C2", 2, "finance")); code != http.StatusForbidden || !strings.Contains(body, "not a place of your workspace (T1)") {
		t.Errorf("ada changing T2: %d %s; want 403", code, body)
	}
	if code, body := w.call(t, ada, "POST", "/v1/admin/places", set("slack:T1/C1", 2, "finance")); code != http.StatusOK || !strings.Contains(body, `"by":"slack:T1/UADMIN"`) {
		t.Errorf("ada changing T1: %d %s", code, body)
	}
	code, body, lee := signin("listed-code")
	if code != http.StatusSeeOther {
		t.Fatalf("a listed person's sign-in: %d %s", code, body)
	}
	if code, body := w.call(t, lee, "GET", "/v1/admin/places", nil); code != http.StatusOK || !strings.Contains(body, `"web"`) || !strings.Contains(body, "T1") {
		t.Errorf("lee's places: %d %s; want every place", code, body)
	}
	resp, err := http.Get(w.srv.URL + adminCallbackPath + "?state=forged&code=admin-code")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a callback without this browser's state: %d; want 403", resp.StatusCode)
	}
}

// TestAdminPageServed: /admin is the page, with the chat page's headers.
func TestAdminPageServed(t *testing.T) {
	w := newAdminWorld(t)
	resp, err := http.Get(w.srv.URL + "/admin")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "admin.js") || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("GET /admin: %d %q", resp.StatusCode, body)
	}
}

// TestAdminsChecked: an admin entry that is neither a web user name nor a
// Slack person stops the adapter, naming it.
func TestAdminsChecked(t *testing.T) {
	for _, bad := range []string{"Alice Smith", "slack:T1", "U0456", "slack:t1/u1"} {
		_, err := New(Options{Hub: intaketest.NewHub(intaketest.NewThreads()), History: history{}, Admins: []string{"alice", bad}})
		if err == nil || !strings.Contains(err.Error(), "NEO_WEB_ADMINS") {
			t.Errorf("admin %q: %v; want a refusal", bad, err)
		}
	}
}

// TestAdminSessions: a Slack sign-in's session is taken wherever the key
// is the same, and nowhere else; changed, or expired, it opens nothing.
func TestAdminSessions(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	one, other := adminSessions{key: []byte("key one")}, adminSessions{key: []byte("key two")}
	token, err := one.add(governor{by: "slack:T1/U1", team: "T1"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := (adminSessions{key: []byte("key one")}).get(token, now.Add(time.Hour)); !ok || g.by != "slack:T1/U1" || g.team != "T1" {
		t.Errorf("same key: %+v %v", g, ok)
	}
	if _, ok := other.get(token, now); ok {
		t.Error("another key took the session")
	}
	if _, ok := one.get(token, now.Add(adminSessionTTL)); ok {
		t.Error("an expired session was taken")
	}
	forged, _ := json.Marshal(sealedSession{By: "slack:T1/U1", Expires: now.Add(time.Hour).Unix()}) // no team: every place
	_, sig, _ := strings.Cut(strings.TrimPrefix(token, "neoadm_"), ".")
	if _, ok := one.get("neoadm_"+base64.RawURLEncoding.EncodeToString(forged)+"."+sig, now); ok {
		t.Error("a session whose payload was changed was taken")
	}
}
