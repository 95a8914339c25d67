package slack

import (
	"context"
	"errors"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/internal/intake/intaketest"
	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core"
)

// memInstalls is an in-memory Installs.
type memInstalls struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *memInstalls) SlackInstall(_ context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[key], nil
}

func (s *memInstalls) PutSlackInstall(_ context.Context, key string, sealed []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = sealed
	return nil
}

func (s *memInstalls) DeleteSlackInstall(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
	return nil
}

func (s *memInstalls) has(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[key] != nil
}

// distEnv is a distributed Neo against one fake Slack of many workspaces.
type distEnv struct {
	t     testing.TB
	ctx   context.Context
	slack *slacktest.Server
	ws    *Workspaces
	hub   *intaketest.Hub
	db    *memInstalls
	url   string // the listener's base URL
}

func startWorkspaces(t testing.TB) *distEnv {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	s := slacktest.New(t)
	var h http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	threads := intaketest.NewThreads()
	hub := intaketest.NewHub(threads)
	db := &memInstalls{m: map[string][]byte{}}
	ws, err := NewWorkspaces(Options{
		ClientID: slacktest.ClientID, ClientSecret: slacktest.ClientSecret, RedirectURL: srv.URL + "/slack/oauth/callback",
		AuthorizeURL: s.AuthorizeURL(), APIURL: s.APIURL(), SigningSecret: testSecret, ListenAddr: "127.0.0.1:0",
		Installs: db, SecretKey: make([]byte, 32), Hub: hub, Threads: threads,
	})
	if err != nil {
		t.Fatal(err)
	}
	h = ws.HTTPHandler()
	hub.Prepare(ws)
	hub.OnTurn(func(ctx context.Context, in core.Inbound) {
		_ = ws.Reporter(in.Thread).Say(ctx, "echo: "+in.Text)
	})
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ws.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run = %v, want nil after cancel", err)
		}
		hub.Stop(t)
	})
	s.UseHTTP(srv.URL+"/slack/events", srv.URL+"/slack/interactive", testSecret)
	return &distEnv{t: t, ctx: ctx, slack: s, ws: ws, hub: hub, db: db, url: srv.URL}
}

var addLink = regexp.MustCompile(`class="add" href="([^"]+)"`)

// install goes through the install page as a browser does and returns the
// page it ends on.
func (e *distEnv) install(in slacktest.Installer) (int, string) {
	e.t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(e.url + InstallPath)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
		e.t.Errorf("install page Content-Security-Policy = %q, want no framing", csp)
	}
	status, page := get(e.t, c, e.url+InstallPath)
	m := addLink.FindStringSubmatch(page)
	if status != http.StatusOK || m == nil {
		e.t.Fatalf("install page = %d %s, want an Add to Slack link", status, page)
	}
	e.slack.NextInstall(in)
	return get(e.t, c, html.UnescapeString(m[1]))
}

func get(t testing.TB, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// tokensIn returns the tokens of the Web API calls made about channel.
func (e *distEnv) tokensIn(channel string) map[string]bool {
	out := map[string]bool{}
	for _, c := range e.slack.Calls("") {
		if c.Params.Get("channel") == channel || c.Params.Get("channel_id") == channel {
			out[c.Token] = true
		}
	}
	return out
}

func TestWorkspacesAnswerWithTheirOwnToken(t *testing.T) {
	e := startWorkspaces(t)
	for _, team := range []string{"T1", "T2"} {
		if status, page := e.install(slacktest.Installer{Team: team, User: "UADMIN"}); status != http.StatusOK || !strings.Contains(page, "Neo is in Team "+team) {
			t.Fatalf("install in %s ended on %d %s", team, status, page)
		}
	}
	for _, team := range []string{"T1", "T2"} {
		in, _ := e.slack.Installed(team)
		if !e.db.has("team/"+team) || strings.Contains(string(e.db.m["team/"+team]), in.Token) {
			t.Errorf("store for %s = %q, want the installation sealed (its token not in clear)", team, e.db.m["team/"+team])
		}
		d := e.slack.Mention(slacktest.Msg{Team: team, Channel: "C" + team, User: "U" + team, Text: "hi from " + team})
		if a, _ := e.slack.WaitAck(e.ctx, d); a.Status != http.StatusOK {
			t.Fatalf("event in %s acked %d %s", team, a.Status, a.Body)
		}
		if _, err := e.slack.WaitMessage(e.ctx, func(m slacktest.Message) bool {
			return m.FromBot() && m.Channel == "C"+team && strings.Contains(m.Rendered(), "echo:")
		}); err != nil {
			t.Fatalf("no answer in %s: %v", team, err)
		}
		if got := e.tokensIn("C" + team); len(got) != 1 || !got[in.Token] {
			t.Errorf("calls about C%s carried tokens %v, want only %s's", team, got, team)
		}
	}
	if got := e.hub.Journaled(); len(got) != 2 || got[0].Thread.Workspace != "T1" || got[1].Thread.Workspace != "T2" {
		t.Errorf("hub got %+v, want one message in each workspace", got)
	}

	if a, _ := e.slack.WaitAck(e.ctx, e.slack.Uninstall("T1")); a.Status != http.StatusOK {
		t.Errorf("app_uninstalled acked %d", a.Status)
	}
	if e.db.has("team/T1") || !e.db.has("team/T2") {
		t.Errorf("after T1's uninstall the store holds T1 %v, T2 %v; want T2's only", e.db.has("team/T1"), e.db.has("team/T2"))
	}
	d := e.slack.Mention(slacktest.Msg{Team: "T1", Channel: "CT1", User: "UT1", Text: "still there?"})
	if a, _ := e.slack.WaitAck(e.ctx, d); a.Status != http.StatusOK {
		t.Errorf("event after uninstall acked %d, want 200 (Slack would retry anything else)", a.Status)
	}
	d = e.slack.Mention(slacktest.Msg{Team: "T2", Channel: "CT2", User: "UT2", Text: "and here?"})
	e.slack.WaitAck(e.ctx, d)
	e.hub.Wait(e.ctx, t, 3)
	if got := e.hub.Journaled(); len(got) != 3 || got[2].Thread.Workspace != "T2" {
		t.Errorf("hub got %d messages, the last in %s; want T1's after the uninstall dropped", len(got), got[len(got)-1].Thread.Workspace)
	}

	if a, _ := e.slack.WaitAck(e.ctx, e.slack.RevokeToken("T2")); a.Status != http.StatusOK {
		t.Errorf("tokens_revoked acked %d", a.Status)
	}
	if e.db.has("team/T2") {
		t.Errorf("after tokens_revoked the store still holds T2's installation")
	}
}

func TestWorkspacesOrgWideInstall(t *testing.T) {
	e := startWorkspaces(t)
	if status, page := e.install(slacktest.Installer{Team: "T1", Enterprise: "E1", OrgWide: true}); status != http.StatusOK || !strings.Contains(page, "every workspace") {
		t.Fatalf("org-wide install ended on %d %s", status, page)
	}
	if !e.db.has("enterprise/E1") || e.db.has("team/T1") {
		t.Fatalf("store = %v, want the org's installation only", e.db.m)
	}
	d := e.slack.Mention(slacktest.Msg{Team: "T1", Channel: "CG", User: "U1", Text: "hi"})
	e.slack.WaitAck(e.ctx, d)
	in, _ := e.slack.Installed("T1")
	if _, err := e.slack.WaitMessage(e.ctx, func(m slacktest.Message) bool { return m.FromBot() && m.Channel == "CG" }); err != nil {
		t.Fatal(err)
	}
	if got := e.tokensIn("CG"); len(got) != 1 || !got[in.Token] {
		t.Errorf("calls carried %v, want the org's token", got)
	}
	// A turn resumed after a restart finds the org's token by its workspace.
	e.ws.forget("enterprise/E1")
	if a := e.ws.forTeam("T1"); a == nil {
		t.Errorf("forTeam(T1) after a restart = nil, want the org's installation")
	}
	e.slack.WaitAck(e.ctx, e.slack.Uninstall("T1"))
	if e.db.has("enterprise/E1") {
		t.Errorf("the org's installation outlived app_uninstalled")
	}
}

func TestWorkspacesInstallRefusals(t *testing.T) {
	e := startWorkspaces(t)
	cb := e.url + "/slack/oauth/callback"
	state, nonce := e.ws.states.issue(time.Now())
	jar, _ := cookiejar.New(nil)
	u, _ := url.Parse(cb)
	jar.SetCookies(u, []*http.Cookie{{Name: stateCookie, Value: nonce, Path: "/slack/oauth/callback"}})
	withCookie := &http.Client{Jar: jar}
	stale, staleNonce := e.ws.states.issue(time.Now().Add(-time.Hour))
	tests := []struct {
		name   string
		client *http.Client
		query  url.Values
		want   string
	}{
		{"no cookie", http.DefaultClient, url.Values{"state": {state}, "code": {"c"}}, "another browser"},
		{"forged state", withCookie, url.Values{"state": {nonce + ".9999999999.forged"}, "code": {"c"}}, "not made by this Neo"},
		{"expired", &http.Client{Jar: jarWith(u, staleNonce)}, url.Values{"state": {stale}, "code": {"c"}}, "expired"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if status, page := get(t, tt.client, cb+"?"+tt.query.Encode()); status != http.StatusBadRequest || !strings.Contains(page, tt.want) {
				t.Errorf("callback = %d %s, want 400 saying %q", status, page, tt.want)
			}
		})
	}
	if len(e.slack.Calls("oauth.v2.access")) != 0 {
		t.Errorf("a refused callback exchanged its code")
	}

	if status, page := e.install(slacktest.Installer{Team: "T1", Deny: true}); status != http.StatusOK || !strings.Contains(page, "cancelled") {
		t.Errorf("a cancelled install ended on %d %s, want a page saying it was cancelled", status, page)
	}
	if status, page := e.install(slacktest.Installer{Team: "T1", User: "UMEMBER", NeedsApproval: true}); status != http.StatusOK || !strings.Contains(page, "sent to the admins") {
		t.Errorf("an install needing approval ended on %d %s, want Slack's page saying the request went to the admins", status, page)
	}
	if e.db.has("team/T1") {
		t.Errorf("an install that was not allowed stored a token")
	}

	// A state is good once: replaying Slack's redirect does nothing more.
	e.slack.NextInstall(slacktest.Installer{Team: "T3"})
	jar2, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar2, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	_, page := get(t, c, e.url+InstallPath)
	resp, err := c.Get(html.UnescapeString(addLink.FindStringSubmatch(page)[1]))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back := resp.Header.Get("Location")
	jar3 := jar2.Cookies(u)
	if status, _ := get(t, c, back); status != http.StatusOK {
		t.Fatalf("callback = %d, want the install to finish", status)
	}
	jar2.SetCookies(u, jar3) // the browser replays its cookie too
	if status, page := get(t, c, back); status != http.StatusBadRequest || !strings.Contains(page, "used already") {
		t.Errorf("replayed callback = %d %s, want 400: used already", status, page)
	}
}

func jarWith(u *url.URL, nonce string) http.CookieJar {
	jar, _ := cookiejar.New(nil)
	jar.SetCookies(u, []*http.Cookie{{Name: stateCookie, Value: nonce, Path: u.Path}})
	return jar
}

func TestNewWorkspacesRefuses(t *testing.T) {
	good := Options{ClientID: "1.2", ClientSecret: "s", RedirectURL: "https://neo.example/slack/oauth/callback", SigningSecret: "s",
		SecretKey: make([]byte, 32), Installs: &memInstalls{}, Hub: intaketest.NewHub(intaketest.NewThreads())}
	tests := []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"no secret", func(o *Options) { o.ClientSecret = "" }, "SLACK_CLIENT_SECRET"},
		{"callback on the events path", func(o *Options) { o.RedirectURL = "https://neo.example/slack/events" }, "SLACK_REDIRECT_URL"},
		{"callback at the root", func(o *Options) { o.RedirectURL = "https://neo.example/" }, "SLACK_REDIRECT_URL"},
		{"no signing secret", func(o *Options) { o.SigningSecret = "" }, "SLACK_SIGNING_SECRET"},
		{"no key", func(o *Options) { o.SecretKey = nil }, "NEO_SECRET_KEY"},
		{"a bot token too", func(o *Options) { o.BotToken = "xoxb-1" }, "SLACK_BOT_TOKEN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := good
			tt.edit(&o)
			if _, err := NewWorkspaces(o); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewWorkspaces = %v, want an error naming %s", err, tt.want)
			}
		})
	}
	if _, err := NewWorkspaces(good); err != nil {
		t.Errorf("NewWorkspaces(good) = %v", err)
	}
}

// TestWorkspacesBotToken: each workspace's token is its own installation's,
// a Grid workspace Neo heard from gets its org's, and a workspace without
// an installation (never, or no longer) gets ErrNotInstalled, never
// another workspace's token.
func TestWorkspacesBotToken(t *testing.T) {
	e := startWorkspaces(t)
	for _, in := range []slacktest.Installer{{Team: "T1"}, {Team: "T2"}, {Team: "TG", Enterprise: "E1", OrgWide: true}} {
		if status, page := e.install(in); status != http.StatusOK {
			t.Fatalf("install in %s ended on %d %s", in.Team, status, page)
		}
	}
	e.slack.WaitAck(e.ctx, e.slack.Mention(slacktest.Msg{Team: "TG", Channel: "CG", User: "U1", Text: "hi"}))
	want := map[string]string{}
	for _, team := range []string{"T1", "T2", "TG"} {
		in, _ := e.slack.Installed(team)
		want[team] = in.Token
	}
	check := func(team, want string) {
		t.Helper()
		got, err := e.ws.BotToken(e.ctx, team)
		switch {
		case want == "" && !errors.Is(err, ErrNotInstalled):
			t.Errorf("BotToken(%q) = %q, %v; want ErrNotInstalled", team, got, err)
		case want != "" && (err != nil || got != want):
			t.Errorf("BotToken(%q) = %q, %v; want its installation's token", team, got, err)
		}
	}
	for team, token := range want {
		check(team, token)
	}
	check("T3", "")
	check("", "")
	e.slack.WaitAck(e.ctx, e.slack.Uninstall("T1"))
	check("T1", "")
	check("T2", want["T2"])
	e.slack.WaitAck(e.ctx, e.slack.RevokeToken("T2"))
	check("T2", "")
}

// TestAdapterBotToken: a single workspace's adapter gives its token for
// its own workspace alone once it knows which that is.
func TestAdapterBotToken(t *testing.T) {
	e := start(t, nil)
	if got, err := e.a.BotToken(e.ctx, slacktest.TeamID); err != nil || got != "xoxb-test" {
		t.Errorf("BotToken(own workspace) = %q, %v; want SLACK_BOT_TOKEN", got, err)
	}
	for _, team := range []string{"T0OTHER", ""} {
		if got, err := e.a.BotToken(e.ctx, team); !errors.Is(err, ErrNotInstalled) || got != "" {
			t.Errorf("BotToken(%q) = %q, %v; want ErrNotInstalled", team, got, err)
		}
	}
}
