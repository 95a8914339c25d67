package mcp

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/core/mcp/oauth/oauthtest"
)

// memTokens is a TokenStore in memory.
type memTokens struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *memTokens) MCPToken(_ context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[key], nil
}

func (s *memTokens) PutMCPToken(_ context.Context, key string, v []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = v
	return nil
}

func (s *memTokens) DeleteMCPToken(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
	return nil
}

// directLinks binds nothing: its link is the authorization URL itself,
// for tests of the login that follows a proven link.
type directLinks struct{}

func (directLinks) Bind(_ context.Context, l PersonalLogin) (string, error) { return l.AuthURL, nil }

func (directLinks) Proven(string) bool { return true }

// TestOAuthPerUserUnbound: without a Binder no per_user link is made, so
// no link can connect someone other than the person it was made for.
func TestOAuthPerUserUnbound(t *testing.T) {
	prot := oauthtest.New(t, NewServer("notes", "1.0.0", testTools(0)...).Handler())
	m := start(t, Options{
		Manifest: manifest(ServerSpec{Alias: "notes", Transport: TransportHTTP, URL: prot.URL(), Auth: AuthPerUser, Version: "1.0.0", Tools: testToolNames}),
		OAuth:    &OAuth{Tokens: &memTokens{m: map[string][]byte{}}, Key: bytes.Repeat([]byte{9}, 32), RedirectURL: "http://127.0.0.1:9/mcp/oauth/callback"},
	})
	alice := Place{Platform: "slack", Workspace: "T1", User: "UALICE"}
	_, err := m.CallIn(context.Background(), alice, "notes", "echo", map[string]any{"text": "hi"})
	if ce, ok := errors.AsType[*ConnectError](err); ok || err == nil {
		t.Errorf("CallIn(unbound per_user) = %v (connect error %+v), want a refusal with no link", err, ce)
	}
	if link, err := m.Connect(context.Background(), "notes", alice); err == nil {
		t.Errorf("Connect(unbound per_user) = %q, want a refusal", link)
	}
}

// unprovenLinks makes links whose callbacks never come back proven.
type unprovenLinks struct{ directLinks }

func (unprovenLinks) Proven(string) bool { return false }

// TestOAuthPerUserUnproven: a person's login whose callback the Binder
// did not see proven stores no grant, however its link was made.
func TestOAuthPerUserUnproven(t *testing.T) {
	prot := oauthtest.New(t, NewServer("notes", "1.0.0", testTools(0)...).Handler())
	tokens := &memTokens{m: map[string][]byte{}}
	m := start(t, Options{
		Manifest: manifest(ServerSpec{Alias: "notes", Transport: TransportHTTP, URL: prot.URL(), Auth: AuthPerUser, Version: "1.0.0", Tools: testToolNames}),
		OAuth:    &OAuth{Tokens: tokens, Key: bytes.Repeat([]byte{9}, 32), RedirectURL: "http://127.0.0.1:9/mcp/oauth/callback", Links: unprovenLinks{}},
	})
	link, err := m.Connect(context.Background(), "notes", Place{Platform: "slack", Workspace: "T1", User: "UALICE"})
	if err != nil {
		t.Fatal(err)
	}
	code, state := openLogin(t, link)
	if _, _, err := m.FinishLogin(context.Background(), state, code, ""); !errors.Is(err, ErrUnproven) {
		t.Errorf("FinishLogin(unproven) = %v, want ErrUnproven", err)
	}
	if n := len(tokens.m); n != 0 {
		t.Errorf("an unproven login stored %d grants", n)
	}
}

// openLogin opens a login URL as a person who approves at once, and
// returns the code and state the authorization server redirected with.
func openLogin(t testing.TB, u string) (code, state string) {
	t.Helper()
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(u)
	if err != nil {
		t.Fatalf("open the login URL: %v", err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil {
		t.Fatalf("the login URL answered %d, want a redirect with the code", resp.StatusCode)
	}
	return loc.Query().Get("code"), loc.Query().Get("state")
}

// TestOAuthOperatorLogin walks an operator's login to a server behind
// OAuth: the server waits for it, the login's redirect brings it up, the
// grant is stored sealed, a revoked grant is refused, and logout removes
// it.
func TestOAuthOperatorLogin(t *testing.T) {
	prot := oauthtest.New(t, NewServer("notes", "1.0.0", testTools(0)...).Handler())
	tokens := &memTokens{m: map[string][]byte{}}
	feed := make(statusFeed, 64)
	m := start(t, Options{
		Manifest:       manifest(ServerSpec{Alias: "notes", Transport: TransportHTTP, URL: prot.URL(), Auth: AuthOAuth, Version: "1.0.0", Tools: testToolNames}),
		OAuth:          &OAuth{Tokens: tokens, Key: bytes.Repeat([]byte{7}, 32), RedirectURL: "http://127.0.0.1:9/mcp/oauth/callback"},
		RestartBackoff: 20 * time.Millisecond, OnStatus: feed.on,
	})
	ctx := context.Background()
	if st := m.Status()[0]; st.State != StateFailed || !strings.Contains(st.Problem, "neobot mcp login notes") {
		t.Fatalf("before login Status() = %s %q, want failed saying to run neobot mcp login notes", st.State, st.Problem)
	}
	_, err := m.Call(ctx, "notes", "echo", map[string]any{"text": "before login"})
	if nl := new(NotLoggedInError); !errors.As(err, &nl) || nl.Lost {
		t.Errorf("Call before any login = %v, want a NotLoggedInError that is not a lost login", err)
	}
	u, err := m.Login(ctx, "notes")
	if err != nil {
		t.Fatalf("Login() error = %v", err)
	}
	for _, p := range []string{"code_challenge_method=S256", "resource=" + url.QueryEscape(prot.URL()), "scope=notes%3Aread"} {
		if !strings.Contains(u, p) {
			t.Errorf("Login() URL = %s, want it to carry %s", u, p)
		}
	}
	code, state := openLogin(t, u)
	if _, _, err := m.FinishLogin(ctx, "forged-state", code, ""); !errors.Is(err, ErrUnknownLogin) {
		t.Errorf("FinishLogin(forged state) error = %v, want ErrUnknownLogin", err)
	}
	alias, user, err := m.FinishLogin(ctx, state, code, "")
	if err != nil || alias != "notes" || user != "" {
		t.Fatalf("FinishLogin() = %q, %q, %v; want notes, operator, nil", alias, user, err)
	}
	feed.wait(t, "notes", StateUp)
	res, err := m.Call(ctx, "notes", "echo", map[string]any{"text": "behind oauth"})
	if err != nil || res.Content[0].Text != "behind oauth" {
		t.Fatalf("Call(echo) = %+v, %v; want the echo", res, err)
	}
	if _, _, err := m.FinishLogin(ctx, state, code, ""); !errors.Is(err, ErrUnknownLogin) {
		t.Errorf("FinishLogin(used state) error = %v, want ErrUnknownLogin", err)
	}
	sealed := tokens.m["op/notes"]
	if len(sealed) == 0 {
		t.Fatal("no grant stored under op/notes")
	}
	for _, tok := range prot.Issued() {
		if bytes.Contains(sealed, []byte(tok)) {
			t.Errorf("the stored grant holds a token in clear")
		}
	}

	prot.RevokeAll()
	if res, err := m.Call(ctx, "notes", "echo", map[string]any{"text": "after revoke"}); err == nil && !res.IsError {
		t.Errorf("Call after revocation = %+v, want it refused", res)
	}
	if prot.Refused() == 0 {
		t.Errorf("the server refused no request after revocation")
	}
	st := feed.wait(t, "notes", StateRestarting)
	for !strings.Contains(st.Problem, "neobot mcp login notes") {
		st = feed.wait(t, "notes", StateRestarting)
	}
	// Waiting for the login, the server says so, not that it restarts.
	_, err = m.Call(ctx, "notes", "echo", map[string]any{"text": "while waiting"})
	if nl := new(NotLoggedInError); !errors.As(err, &nl) || !nl.Lost || errors.Is(err, ErrUnavailable) {
		t.Errorf("Call while waiting for a new login = %v, want a lost login", err)
	}
	// A new login brings the server back without waiting for a timer.
	code, state = openLogin(t, mustLogin(t, m, "notes"))
	if _, _, err := m.FinishLogin(ctx, state, code, ""); err != nil {
		t.Fatalf("FinishLogin(again) error = %v", err)
	}
	feed.wait(t, "notes", StateUp)
	if res, err := m.Call(ctx, "notes", "echo", map[string]any{"text": "back"}); err != nil || res.Content[0].Text != "back" {
		t.Fatalf("Call after a new login = %+v, %v; want the echo", res, err)
	}

	if err := m.Logout(ctx, "notes", ""); err != nil {
		t.Fatalf("Logout() error = %v", err)
	}
	if n := prot.Revocations(); n != 1 {
		t.Errorf("Logout() revoked %d tokens at the authorization server, want 1", n)
	}
	if res, err := m.Call(ctx, "notes", "echo", map[string]any{"text": "after logout"}); err == nil && !res.IsError {
		t.Errorf("Call after logout = %+v, want it refused", res)
	}
	if _, ok := tokens.m["op/notes"]; ok {
		t.Errorf("Logout() left the grant in the store")
	}
}

func mustLogin(t *testing.T, m *Manager, alias string) string {
	t.Helper()
	u, err := m.Login(context.Background(), alias)
	if err != nil {
		t.Fatalf("Login(%s) error = %v", alias, err)
	}
	return u
}

// TestOAuthPerUser: on a per_user server each person's calls need their
// own grant; without one the call returns the person's connect link; a
// grant the server no longer accepts is dropped and the link offered
// again.
func TestOAuthPerUser(t *testing.T) {
	prot := oauthtest.New(t, NewServer("notes", "1.0.0", testTools(0)...).Handler())
	tokens := &memTokens{m: map[string][]byte{}}
	m := start(t, Options{
		Manifest: manifest(ServerSpec{Alias: "notes", Transport: TransportHTTP, URL: prot.URL(), Auth: AuthPerUser, Version: "1.0.0", Tools: testToolNames}),
		OAuth:    &OAuth{Tokens: tokens, Key: bytes.Repeat([]byte{9}, 32), RedirectURL: "http://127.0.0.1:9/mcp/oauth/callback", Links: directLinks{}},
	})
	ctx := context.Background()
	if st := m.Status()[0]; st.State != StateUp || len(st.Tools) != len(testToolNames) {
		t.Fatalf("Status() = %s with %d tools, want up with the manifest's tools before anyone connects", st.State, len(st.Tools))
	}
	if _, err := m.Login(ctx, "notes"); err == nil {
		t.Errorf("Login(per_user server) = nil error, want a refusal: people connect through their own links")
	}
	alice := Place{Platform: "slack", Workspace: "T1", User: "UALICE"}
	bob := Place{Platform: "slack", Workspace: "T1", User: "UBOB"}
	echo := func(p Place) (Result, error) {
		return m.CallIn(ctx, p, "notes", "echo", map[string]any{"text": "hi " + p.User})
	}
	connectLink := func(p Place) string {
		t.Helper()
		_, err := echo(p)
		var ce *ConnectError
		if !errors.As(err, &ce) || !strings.Contains(ce.URL, "/authorize?") || strings.Contains(err.Error(), ce.URL) {
			t.Fatalf("CallIn(%s, not connected) error = %v, want a ConnectError carrying (but not printing) the link", p.User, err)
		}
		return ce.URL
	}
	code, state := openLogin(t, connectLink(alice))
	if _, user, err := m.FinishLogin(ctx, state, code, ""); err != nil || user != alice.UserValue() {
		t.Fatalf("FinishLogin() user = %q, %v; want Alice's", user, err)
	}
	if res, err := echo(alice); err != nil || res.Content[0].Text != "hi UALICE" {
		t.Fatalf("CallIn(Alice, connected) = %+v, %v; want the echo", res, err)
	}
	connectLink(bob) // Alice's grant is hers alone
	if _, ok := tokens.m["user/notes/"+alice.UserValue()]; !ok {
		t.Errorf("no grant stored under Alice's key; keys: %v", tokens.m)
	}

	prot.RevokeAll()
	_, err := echo(alice)
	if ce := new(ConnectError); !errors.As(err, &ce) || !ce.Lost || strings.Contains(err.Error(), "not connected") {
		t.Errorf("CallIn(Alice, grant revoked) = %v, want a ConnectError saying her connection was refused, not that she never connected", err)
	}
	if _, ok := tokens.m["user/notes/"+alice.UserValue()]; ok {
		t.Errorf("Alice's dead grant is still stored")
	}
}
