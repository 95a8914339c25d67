package web

import (
	"context"
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

// slackPeople is a SlackSignIn whose codes name who signs in; Check
// answers from the same people, as they are now.
type slackPeople struct {
	mu     sync.Mutex
	codes  map[string]SlackPerson
	gone   map[string]bool // workspaces Neo was removed from
	down   bool            // Slack cannot be reached
	checks int
	during func() // called while Check asks, unlocked
}

func (*slackPeople) AuthURL(state, redirect string) string {
	return "https://slack.example/authorize?" + url.Values{"state": {state}, "redirect_uri": {redirect}}.Encode()
}

func (s *slackPeople) Identify(_ context.Context, code, _ string) (SlackPerson, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.codes[code]
	if !ok {
		return p, errors.New("no such code")
	}
	return p, nil
}

func (s *slackPeople) Check(_ context.Context, team, user string) (SlackPerson, error) {
	s.mu.Lock()
	during := s.during
	s.mu.Unlock()
	if during != nil {
		during()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checks++
	if s.down {
		return SlackPerson{}, errors.New("slack users.info: reach slack.example: connection refused")
	}
	for _, p := range s.codes {
		if p.Team == team && p.User == user {
			return p, nil
		}
	}
	return SlackPerson{Team: team, User: user}, nil
}

func (s *slackPeople) Installed(_ context.Context, team string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone[team] {
		return "Neo is no longer installed in Slack workspace " + team + ".", nil
	}
	return "", nil
}

// change changes what Slack says of the person signing in with code.
func (s *slackPeople) change(code string, f func(p *SlackPerson)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.codes[code]
	f(&p)
	s.codes[code] = p
}

type adminWorld struct {
	srv        *httptest.Server
	places     *places
	slack      *slackPeople
	discord    *discordPeople
	alice, bob string // tokens: alice is listed in Admins, bob is not

	mu  sync.Mutex
	now time.Time // the adapter's clock
}

// tick moves the adapter's clock on by d.
func (w *adminWorld) tick(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.now = w.now.Add(d)
}

func newAdminWorld(t *testing.T) *adminWorld {
	t.Helper()
	w := &adminWorld{places: &places{m: map[string][]governance.Version{}}, now: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)}
	w.slack = &slackPeople{gone: map[string]bool{}, codes: map[string]SlackPerson{
		"admin-code":  {Team: "T1", User: "UADMIN", Name: "ada", WorkspaceAdmin: true},
		"member-code": {Team: "T1", User: "UMEMBER", Name: "max"},
		"listed-code": {Team: "T2", User: "ULISTED", Name: "lee"},
	}}
	w.discord = &discordPeople{manages: map[string]bool{"G1/111": true, "G2/111": true}, gone: map[string]bool{}, codes: map[string]DiscordPerson{
		"mod-code":    {User: "111", Name: "mo", Guilds: []string{"G1", "G2"}},
		"member-code": {User: "222", Name: "mem", Why: "Discord lists no server you manage."},
	}}
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
		SlackSignIn: w.slack, DiscordSignIn: w.discord,
		Now: func() time.Time {
			w.mu.Lock()
			defer w.mu.Unlock()
			return w.now
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

// signin signs in with Slack as the person of code, as a browser does,
// and returns the callback's status, its page and the session.
func (w *adminWorld) signin(t *testing.T, code string) (int, string, string) {
	t.Helper()
	return w.signinAt(t, adminSigninPath, adminCallbackPath, code)
}

// signinAt signs in at a platform's sign-in path, coming back at
// callback with code.
func (w *adminWorld) signinAt(t *testing.T, path, callback, code string) (int, string, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(w.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	to, _ := url.Parse(resp.Header.Get("Location"))
	if to.Query().Get("redirect_uri") != "http://neo.test"+callback {
		t.Fatalf("sign-in went to %s", to)
	}
	resp, err = c.Get(w.srv.URL + callback + "?" + url.Values{"state": {to.Query().Get("state")}, "code": {code}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	loc, _ := url.Parse(resp.Header.Get("Location"))
	session, _ := url.ParseQuery(loc.Fragment)
	return resp.StatusCode, string(body), session.Get("session")
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
	signin := func(code string) (int, string, string) { return w.signin(t, code) }
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

// TestAdminSessionEnds: a Slack sign-in's session ends when its person
// signs out, when Neo is removed from their workspace (at their next
// request), when Slack no longer says they administer it (once a minute
// has passed since it last said so), and after 8 hours; while Slack
// cannot be reached it is refused, saying so, and kept.
func TestAdminSessionEnds(t *testing.T) {
	w := newAdminWorld(t)
	ok := func(session string) bool {
		t.Helper()
		code, _ := w.call(t, session, "GET", "/v1/admin/me", nil)
		return code == http.StatusOK
	}
	refused := func(session string, status int, want string) {
		t.Helper()
		if code, body := w.call(t, session, "GET", "/v1/admin/places", nil); code != status || !strings.Contains(body, want) {
			t.Errorf("GET /v1/admin/places = %d %s; want %d saying %q", code, body, status, want)
		}
	}
	_, _, ada := w.signin(t, "admin-code")
	if !ok(ada) {
		t.Fatal("a fresh sign-in was refused")
	}
	if code, body := w.call(t, ada, "POST", "/v1/admin/signout", nil, "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"); code != http.StatusForbidden || !ok(ada) {
		t.Errorf("a sign-out from another site: %d %s; want 403, the session kept", code, body)
	}
	if code, body := w.call(t, ada, "POST", "/v1/admin/signout", nil); code != http.StatusOK || !strings.Contains(body, `"ended":true`) {
		t.Errorf("sign out: %d %s", code, body)
	}
	refused(ada, http.StatusUnauthorized, "This sign-in has ended")

	_, _, ada = w.signin(t, "admin-code")
	w.slack.change("admin-code", func(p *SlackPerson) { p.WorkspaceAdmin = false })
	w.tick(adminRecheck - time.Second)
	if !ok(ada) {
		t.Error("a session was asked about again before a minute passed")
	}
	w.tick(time.Second)
	refused(ada, http.StatusForbidden, "no longer an admin or owner of workspace T1")
	if code, body := w.call(t, ada, "GET", "/v1/admin/me", nil); code != http.StatusUnauthorized || !strings.Contains(body, `"ended":true`) {
		t.Errorf("an ended session: %d %s; want 401 telling the page it ended", code, body)
	}
	w.slack.change("admin-code", func(p *SlackPerson) { p.WorkspaceAdmin = true })
	refused(ada, http.StatusUnauthorized, "This sign-in has ended")

	_, _, ada = w.signin(t, "admin-code")
	w.tick(adminRecheck)
	w.slack.mu.Lock()
	w.slack.down, w.slack.checks = true, 0
	w.slack.mu.Unlock()
	refused(ada, http.StatusServiceUnavailable, "Slack could not confirm just now")
	w.slack.mu.Lock()
	w.slack.down = false
	w.slack.mu.Unlock()
	if !ok(ada) || !ok(ada) {
		t.Error("a session was not taken again once Slack answered")
	}
	if w.slack.checks != 2 {
		t.Errorf("Slack was asked %d times; want twice (once refused, once confirmed, then taken for a minute)", w.slack.checks)
	}
	w.slack.mu.Lock()
	w.slack.gone["T1"] = true
	w.slack.mu.Unlock()
	refused(ada, http.StatusForbidden, "no longer installed in Slack workspace T1")
	w.slack.mu.Lock()
	w.slack.gone["T1"] = false
	w.slack.mu.Unlock()
	refused(ada, http.StatusUnauthorized, "This sign-in has ended")

	// Signed out (on another instance) while a re-check asks Slack: the
	// re-check does not bring the session back.
	_, _, ada = w.signin(t, "admin-code")
	w.tick(adminRecheck)
	w.slack.mu.Lock()
	w.slack.during = func() { w.call(t, ada, "POST", "/v1/admin/signout", nil) }
	w.slack.mu.Unlock()
	w.call(t, ada, "GET", "/v1/admin/me", nil)
	w.slack.mu.Lock()
	w.slack.during = nil
	w.slack.mu.Unlock()
	refused(ada, http.StatusUnauthorized, "This sign-in has ended")

	_, _, lee := w.signin(t, "listed-code")
	_, _, ada = w.signin(t, "admin-code")
	w.tick(adminSessionTTL - adminRecheck)
	if !ok(lee) || !ok(ada) {
		t.Error("a session ended before 8 hours")
	}
	w.tick(adminRecheck)
	refused(lee, http.StatusUnauthorized, "expired after 8 hours")
	refused(ada, http.StatusUnauthorized, "expired after 8 hours")
	if code, body := w.call(t, w.alice, "POST", "/v1/admin/signout", nil); code != http.StatusOK || !strings.Contains(body, `"ended":false`) || !ok(w.alice) {
		t.Errorf("a web token's sign-out: %d %s; want nothing ended (the page forgets it)", code, body)
	}
}
