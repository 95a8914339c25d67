package connect

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/neobot/neobot/core/mcp"
)

// base is where the tests' browsers reach the ops listener.
const base = "http://127.0.0.1:9"

// callbackPath is where cmd/neobot mounts [Callback].
const callbackPath = "/mcp/oauth/callback"

// fakeLogins finishes the login whose state is "good".
type fakeLogins struct{}

func (fakeLogins) FinishLogin(_ context.Context, state, code, _ string) (string, string, error) {
	switch state {
	case "good":
		return "notes", "", nil
	case "refused":
		return "notes", "", errors.New("oauth: token endpoint answered HTTP 400: invalid_grant")
	}
	return "", "", mcp.ErrUnknownLogin
}

func TestCallbackPage(t *testing.T) {
	tests := []struct {
		query  string
		status int
		want   string
	}{
		{"?state=good&code=c0de-SECRET", http.StatusOK, "connected to notes"},
		{"?state=stale&code=c0de-SECRET", http.StatusBadRequest, "expired or was already used"},
		{"?state=refused&code=c0de-SECRET", http.StatusBadGateway, "refused the code"},
		{"?error=access_denied&state=good", http.StatusBadRequest, "did not grant access (access_denied)"},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		Callback(fakeLogins{}, nil)(rec, httptest.NewRequest(http.MethodGet, callbackPath+tt.query, nil))
		body := rec.Body.String()
		if rec.Code != tt.status || !strings.Contains(body, tt.want) {
			t.Errorf("callback%s = %d %q, want %d saying %q", tt.query, rec.Code, body, tt.status, tt.want)
		}
		if strings.Contains(body, "SECRET") || strings.Contains(body, "invalid_grant") {
			t.Errorf("callback%s shows the code or the authorization server's error: %q", tt.query, body)
		}
		if rec.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("callback%s Cache-Control = %q, want no-store", tt.query, rec.Header().Get("Cache-Control"))
		}
	}
}

// TestBindRefusesUnverifiable: a link is made only for a person whose
// platform's sign-in is set up; otherwise the refusal names the settings
// the operator must set, and no link exists to be forwarded.
func TestBindRefusesUnverifiable(t *testing.T) {
	tests := []struct {
		name     string
		opts     Options
		platform string
		want     string // in the refusal; "" for a link
	}{
		{"slack without its client", Options{Base: base}, "slack", "SLACK_CLIENT_ID and SLACK_CLIENT_SECRET"},
		{"discord without its client", Options{Base: base}, "discord", "DISCORD_CLIENT_ID and DISCORD_CLIENT_SECRET"},
		{"web without the chat", Options{Base: base}, "web", "NEO_WEB_ADDR"},
		{"another platform", Options{Base: base}, "terminal", "Slack, Discord and web chat users only"},
		{"no ops listener", Options{SlackClientID: "c", SlackClientSecret: "s"}, "slack", "NEO_HEALTH_ADDR"},
		{"slack", Options{Base: base, SlackClientID: "c", SlackClientSecret: "s"}, "slack", ""},
		{"discord", Options{Base: base, DiscordClientID: "c", DiscordClientSecret: "s"}, "discord", ""},
		{"web", Options{Base: base, WebPage: "http://127.0.0.1:8"}, "web", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Log = zerolog.Nop()
			links := New(tt.opts)
			login := mcp.PersonalLogin{Alias: "notes", Place: mcp.Place{Platform: tt.platform, Workspace: "W", User: "U"}, AuthURL: "https://as.test/authorize?state=s1", State: "s1"}
			link, err := links.Bind(context.Background(), login)
			switch {
			case tt.want == "" && (err != nil || !strings.HasPrefix(link, "http://127.0.0.1:9/mcp/connect/")):
				t.Errorf("Bind = %q, %v; want a link on the ops listener", link, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Bind = %q, %v; want a refusal naming %q", link, err, tt.want)
			}
		})
	}
}

// TestCallbackOfPersonNeedsProof: a per_user login's callback that comes
// back to a browser that never proved to be the person (no link opened,
// or opened but not signed in) completes nothing.
func TestCallbackOfPersonNeedsProof(t *testing.T) {
	links := New(Options{Base: base, WebPage: "http://127.0.0.1:8", Log: zerolog.Nop()})
	link, err := links.Bind(context.Background(), mcp.PersonalLogin{Alias: "notes", Place: mcp.Place{Platform: "web", Workspace: "web", User: "alice"}, AuthURL: "https://as.test/authorize?state=good", State: "good"})
	if err != nil {
		t.Fatal(err)
	}
	callback := func(r *http.Request) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		Callback(fakeLogins{}, links)(rec, r)
		return rec
	}
	if rec := callback(httptest.NewRequest(http.MethodGet, callbackPath+"?state=good&code=c", nil)); rec.Code != http.StatusForbidden {
		t.Errorf("callback with no link opened = %d %q, want 403", rec.Code, rec.Body)
	}
	open := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, link, nil)
	req.SetPathValue("id", link[strings.LastIndex(link, "/")+1:])
	links.ServeLink(open, req)
	if open.Code != http.StatusSeeOther || !strings.HasPrefix(open.Header().Get("Location"), "http://127.0.0.1:8/#connect=") {
		t.Fatalf("opening the link = %d to %q, want the chat page", open.Code, open.Header().Get("Location"))
	}
	back := httptest.NewRequest(http.MethodGet, callbackPath+"?state=good&code=c", nil)
	for _, c := range open.Result().Cookies() {
		back.AddCookie(c)
	}
	if rec := callback(back); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "not started from your link") {
		t.Errorf("callback in the browser that opened the link but never signed in = %d %q, want 403", rec.Code, rec.Body)
	}
	if rec := callback(httptest.NewRequest(http.MethodGet, callbackPath+"?state=op&code=c", nil)); rec.Code == http.StatusForbidden {
		t.Errorf("an operator's login (a state no link holds) was refused: %q", rec.Body)
	}
}

// TestLinkOpenedByItsPerson: a link goes through the web chat's sign-in
// to the authorization server only for the person it was made for, and
// the login's callback then completes in that browser, once; anyone else
// who opens it is told it was made for someone else, and connects nothing.
func TestLinkOpenedByItsPerson(t *testing.T) {
	tests := []struct {
		name     string
		signedIn string // who the chat page says opened the link
		status   int    // of the sign-in's return
		callback int    // of the login's callback; 0 when it never comes
	}{
		{"its person", "alice", http.StatusSeeOther, http.StatusOK},
		{"someone else", "mallory", http.StatusForbidden, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			links := New(Options{Base: base, WebPage: "http://127.0.0.1:8", Log: zerolog.Nop()})
			link, err := links.Bind(context.Background(), mcp.PersonalLogin{Alias: "notes", Place: mcp.Place{Platform: "web", Workspace: "web", User: "alice"},
				AuthURL: "https://as.test/authorize?state=good", State: "good"})
			if err != nil {
				t.Fatal(err)
			}
			browser := func(r *http.Request, prev *httptest.ResponseRecorder) *http.Request {
				for _, c := range prev.Result().Cookies() {
					r.AddCookie(c)
				}
				return r
			}
			open := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, link, nil)
			req.SetPathValue("id", link[strings.LastIndex(link, "/")+1:])
			links.ServeLink(open, req)
			page, _ := url.Parse(open.Header().Get("Location"))
			frag, _ := url.ParseQuery(page.Fragment)
			next, err := links.SignedIn(context.Background(), frag.Get("connect"), tt.signedIn)
			if err != nil {
				t.Fatalf("SignedIn = %v", err)
			}
			back := httptest.NewRecorder()
			links.ServeSignin(back, browser(httptest.NewRequest(http.MethodGet, next, nil), open))
			if back.Code != tt.status {
				t.Fatalf("sign-in's return = %d %q, want %d", back.Code, back.Body, tt.status)
			}
			if tt.callback == 0 {
				if !strings.Contains(back.Body.String(), "made for someone else") || links.Proven("good") {
					t.Errorf("someone else's sign-in = %q (proven %v), want a refusal saying the link is another person's", back.Body, links.Proven("good"))
				}
				return
			}
			if got := back.Header().Get("Location"); got != "https://as.test/authorize?state=good" {
				t.Errorf("its person goes on to %q, want the authorization server", got)
			}
			done := httptest.NewRecorder()
			Callback(fakeLogins{}, links)(done, browser(httptest.NewRequest(http.MethodGet, callbackPath+"?state=good&code=c", nil), open))
			if done.Code != tt.callback || !strings.Contains(done.Body.String(), "alice (web chat user) is connected to notes") {
				t.Errorf("callback = %d %q, want alice connected", done.Code, done.Body)
			}
			if !links.Proven("good") || links.Proven("good") {
				t.Error("Proven(good) after the callback: want true once, then false")
			}
		})
	}
}
