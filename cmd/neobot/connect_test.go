package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/neobot/neobot/core/mcp"
)

// TestBindRefusesUnverifiable: a link is made only for a person whose
// platform's sign-in is set up; otherwise the refusal names the settings
// the operator must set, and no link exists to be forwarded.
func TestBindRefusesUnverifiable(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		platform string
		want     string // in the refusal; "" for a link
	}{
		{"slack without its client", Config{HealthAddr: "127.0.0.1:9"}, "slack", "SLACK_CLIENT_ID and SLACK_CLIENT_SECRET"},
		{"discord without its client", Config{HealthAddr: "127.0.0.1:9"}, "discord", "DISCORD_CLIENT_ID and DISCORD_CLIENT_SECRET"},
		{"web without the chat", Config{HealthAddr: "127.0.0.1:9"}, "web", "NEO_WEB_ADDR"},
		{"another platform", Config{HealthAddr: "127.0.0.1:9"}, "terminal", "Slack, Discord and web chat users only"},
		{"no ops listener", Config{SlackClientID: "c", SlackClientSecret: "s"}, "slack", "NEO_HEALTH_ADDR"},
		{"slack", Config{HealthAddr: "127.0.0.1:9", SlackClientID: "c", SlackClientSecret: "s"}, "slack", ""},
		{"discord", Config{HealthAddr: "127.0.0.1:9", DiscordClientID: "c", DiscordClientSecret: "s"}, "discord", ""},
		{"web", Config{HealthAddr: "127.0.0.1:9", WebAddr: "127.0.0.1:8"}, "web", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			links := newPersonLinks(&tt.cfg, zerolog.Nop())
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
	links := newPersonLinks(&Config{HealthAddr: "127.0.0.1:9", WebAddr: "127.0.0.1:8"}, zerolog.Nop())
	link, err := links.Bind(context.Background(), mcp.PersonalLogin{Alias: "notes", Place: mcp.Place{Platform: "web", Workspace: "web", User: "alice"}, AuthURL: "https://as.test/authorize?state=good", State: "good"})
	if err != nil {
		t.Fatal(err)
	}
	callback := func(r *http.Request) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		serveCallback(fakeLogins{}, links)(rec, r)
		return rec
	}
	if rec := callback(httptest.NewRequest(http.MethodGet, callbackPath+"?state=good&code=c", nil)); rec.Code != http.StatusForbidden {
		t.Errorf("callback with no link opened = %d %q, want 403", rec.Code, rec.Body)
	}
	open := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, link, nil)
	req.SetPathValue("id", link[strings.LastIndex(link, "/")+1:])
	links.serveLink(open, req)
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
