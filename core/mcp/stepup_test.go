package mcp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/neobot/neobot/core/mcp/oauth/oauthtest"
)

// wide is what a step-up asks for on the test server: its scope and the
// one its tool calls need.
const wide = oauthtest.Scope + " notes:write"

// scopeOf returns the scope a login URL asks for.
func scopeOf(t *testing.T, u string) string {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatalf("login URL %q: %v", u, err)
	}
	return pu.Query().Get("scope")
}

// TestOAuthStepUpOperator: a server that answers a call 403
// insufficient_scope keeps the operator's grant, says it needs more
// permission (not that the login was lost), and the next login asks for
// the scope held and the scope the server asked for; after it the call
// goes through.
func TestOAuthStepUpOperator(t *testing.T) {
	prot := oauthtest.New(t, NewServer("notes", "1.0.0", testTools(0)...).Handler())
	prot.RequireForCalls("notes:write")
	tokens := &memTokens{m: map[string][]byte{}}
	feed := make(statusFeed, 64)
	m := start(t, Options{
		Manifest:       manifest(ServerSpec{Alias: "notes", Transport: TransportHTTP, URL: prot.URL(), Auth: AuthOAuth, Version: "1.0.0", Tools: testToolNames}),
		OAuth:          &OAuth{Tokens: tokens, Key: bytes.Repeat([]byte{7}, 32), RedirectURL: "http://127.0.0.1:9/mcp/oauth/callback", Links: directLinks{}},
		RestartBackoff: 20e6, OnStatus: feed.on,
	})
	ctx := context.Background()
	code, state := openLogin(t, mustLogin(t, m, "notes"))
	if _, _, err := m.FinishLogin(ctx, state, code, ""); err != nil {
		t.Fatalf("FinishLogin() error = %v", err)
	}
	feed.wait(t, "notes", StateUp)

	_, err := m.Call(ctx, "notes", "echo", map[string]any{"text": "hi"})
	var pe *PermissionError
	if !errors.As(err, &pe) || pe.Scope != wide || !errors.Is(err, ErrNeedsPermission) || !NotSent(err) {
		t.Fatalf("Call(echo) after a 403 = %v, want a PermissionError for %q, not sent", err, wide)
	}
	if nl := new(NotLoggedInError); errors.As(err, &nl) || errors.Is(err, ErrServerDown) {
		t.Errorf("Call(echo) after a 403 = %v, want neither a lost login nor a server down", err)
	}
	if _, ok := tokens.m["op/notes"]; !ok {
		t.Fatal("the grant was deleted after a 403")
	}
	if st := m.Status()[0]; st.State != StateUp {
		t.Errorf("after a 403 Status() = %s %q, want up: the grant still works for what it allowed", st.State, st.Problem)
	}

	u := mustLogin(t, m, "notes")
	if got := scopeOf(t, u); got != wide {
		t.Errorf("the login after a 403 asks for %q, want %q", got, wide)
	}
	code, state = openLogin(t, u)
	if _, _, err := m.FinishLogin(ctx, state, code, ""); err != nil {
		t.Fatalf("FinishLogin(step-up) error = %v", err)
	}
	if res, err := m.Call(ctx, "notes", "echo", map[string]any{"text": "wider"}); err != nil || res.Content[0].Text != "wider" {
		t.Fatalf("Call(echo) after the step-up = %+v, %v; want the echo", res, err)
	}
}

// TestOAuthStepUpPerUser: on a per_user server a 403 insufficient_scope
// keeps the person's grant and offers them a link that asks for the
// wider scope (not one to connect from scratch); opening it lets the
// call through.
func TestOAuthStepUpPerUser(t *testing.T) {
	prot := oauthtest.New(t, NewServer("notes", "1.0.0", testTools(0)...).Handler())
	prot.RequireForCalls("notes:write")
	tokens := &memTokens{m: map[string][]byte{}}
	m := start(t, Options{
		Manifest: manifest(ServerSpec{Alias: "notes", Transport: TransportHTTP, URL: prot.URL(), Auth: AuthPerUser, Version: "1.0.0", Tools: testToolNames}),
		OAuth:    &OAuth{Tokens: tokens, Key: bytes.Repeat([]byte{9}, 32), RedirectURL: "http://127.0.0.1:9/mcp/oauth/callback", Links: directLinks{}},
	})
	ctx := context.Background()
	alice := Place{Platform: "slack", Workspace: "T1", User: "UALICE"}
	echo := func() (Result, error) { return m.CallIn(ctx, alice, "notes", "echo", map[string]any{"text": "hi"}) }

	_, err := echo()
	var ce *ConnectError
	if !errors.As(err, &ce) || ce.Scope != "" || ce.Lost {
		t.Fatalf("CallIn(not connected) = %v, want a ConnectError to connect", err)
	}
	code, state := openLogin(t, ce.URL)
	if _, _, err := m.FinishLogin(ctx, state, code, ""); err != nil {
		t.Fatalf("FinishLogin() error = %v", err)
	}

	_, err = echo()
	if !errors.As(err, &ce) || ce.Scope != wide || ce.Lost || !errors.Is(err, ErrNeedsPermission) {
		t.Fatalf("CallIn after a 403 = %v, want a ConnectError asking for %q", err, wide)
	}
	if strings.Contains(err.Error(), "not connected") {
		t.Errorf("CallIn after a 403 says %q, but the user is connected", err)
	}
	if got := scopeOf(t, ce.URL); got != wide {
		t.Errorf("the link after a 403 asks for %q, want %q", got, wide)
	}
	if _, ok := tokens.m["user/notes/"+alice.UserValue()]; !ok {
		t.Fatal("the person's grant was deleted after a 403")
	}
	// Calls before the link is opened offer it again, still for the
	// wider scope.
	if _, err := echo(); !errors.As(err, &ce) || scopeOf(t, ce.URL) != wide {
		t.Fatalf("CallIn again before the step-up = %v, want a link for %q", err, wide)
	}
	code, state = openLogin(t, ce.URL)
	if _, _, err := m.FinishLogin(ctx, state, code, ""); err != nil {
		t.Fatalf("FinishLogin(step-up) error = %v", err)
	}
	if res, err := echo(); err != nil || res.Content[0].Text != "hi" {
		t.Fatalf("CallIn after the step-up = %+v, %v; want the echo", res, err)
	}
	if n := prot.Forbidden(); n != 2 {
		t.Errorf("the server refused %d calls with a 403, want 2", n)
	}
}

// TestOAuthNoLink: when no connect link can be made for a per_user
// server (its metadata names another resource, or it does not use OAuth
// at all) the call fails saying why, not that the server is down.
func TestOAuthNoLink(t *testing.T) {
	for _, tc := range []struct {
		name string
		mux  func(srv **httptest.Server) http.Handler
		want string
	}{
		{"resource mismatch", func(srv **httptest.Server) http.Handler {
			mux := http.NewServeMux()
			mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"resource":"https://elsewhere.example/mcp","authorization_servers":["` + (*srv).URL + `"]}`))
			})
			mux.HandleFunc("/mcp", func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+(*srv).URL+`/.well-known/oauth-protected-resource/mcp"`)
				w.WriteHeader(http.StatusUnauthorized)
			})
			return mux
		}, "is for https://elsewhere.example/mcp"},
		{"no OAuth", func(**httptest.Server) http.Handler {
			mux := http.NewServeMux()
			mux.HandleFunc("/mcp", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(`{}`)) })
			return mux
		}, "may not use OAuth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var srv *httptest.Server
			srv = httptest.NewServer(tc.mux(&srv))
			t.Cleanup(srv.Close)
			m := start(t, Options{
				Manifest: manifest(ServerSpec{Alias: "notes", Transport: TransportHTTP, URL: srv.URL + "/mcp", Auth: AuthPerUser, Version: "1.0.0", Tools: testToolNames}),
				OAuth:    &OAuth{Tokens: &memTokens{m: map[string][]byte{}}, Key: bytes.Repeat([]byte{9}, 32), RedirectURL: "http://127.0.0.1:9/mcp/oauth/callback", Links: directLinks{}},
			})
			_, err := m.CallIn(context.Background(), Place{Platform: "web", User: "alice"}, "notes", "echo", nil)
			var le *LoginError
			if !errors.As(err, &le) || !strings.Contains(le.Reason(), tc.want) || errors.Is(err, ErrServerDown) || !NotSent(err) {
				t.Errorf("CallIn() = %v, want a LoginError saying %q, not a server down", err, tc.want)
			}
		})
	}
}

// TestOAuthNoLoginOperator: an operator's login that cannot be started
// (the metadata names another resource) leaves its reason with the
// server, so calls say why instead of that no one has logged in.
func TestOAuthNoLoginOperator(t *testing.T) {
	var srv *httptest.Server
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"resource":"https://elsewhere.example/mcp","authorization_servers":["` + srv.URL + `"]}`))
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
		w.WriteHeader(http.StatusUnauthorized)
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	m := start(t, Options{
		Manifest: manifest(ServerSpec{Alias: "notes", Transport: TransportHTTP, URL: srv.URL + "/mcp", Auth: AuthOAuth, Version: "1.0.0", Tools: testToolNames}),
		OAuth:    &OAuth{Tokens: &memTokens{m: map[string][]byte{}}, Key: bytes.Repeat([]byte{7}, 32), RedirectURL: "http://127.0.0.1:9/mcp/oauth/callback", Links: directLinks{}},
	})
	ctx := context.Background()
	if _, err := m.Login(ctx, "notes"); err == nil || !strings.Contains(err.Error(), "is for https://elsewhere.example/mcp") {
		t.Fatalf("Login() = %v, want a refusal naming the other resource", err)
	}
	_, err := m.Call(ctx, "notes", "echo", nil)
	var le *LoginError
	if !errors.As(err, &le) || !NotSent(err) {
		t.Errorf("Call after a failed login = %v, want the LoginError", err)
	}
	if st := m.Status()[0]; !strings.Contains(st.Problem, "elsewhere.example") {
		t.Errorf("Status().Problem = %q, want the reason", st.Problem)
	}
}

func TestWaitReason(t *testing.T) {
	failed := &LoginError{Alias: "a", Err: errors.New("no metadata")}
	none, lost := &NotLoggedInError{Alias: "a"}, &NotLoggedInError{Alias: "a", Lost: true}
	narrow := &PermissionError{Alias: "a", Scope: "x"}
	for _, tt := range []struct {
		name            string
		prev, why, want error
	}{
		{"a failed login outlives retries that find no grant", failed, none, failed},
		{"a lost grant replaces it", failed, lost, lost},
		{"a narrow grant replaces it", failed, narrow, narrow},
		{"coming up clears it", failed, nil, nil},
		{"no login yet", nil, none, none},
		{"lost, then none", lost, none, none},
	} {
		if got := waitReason(tt.prev, tt.why); got != tt.want {
			t.Errorf("%s: waitReason(%v, %v) = %v, want %v", tt.name, tt.prev, tt.why, got, tt.want)
		}
	}
}

// TestOAuthStepUpHeld: a server that refuses a call for want of scope
// the person's grant already holds gets no new link (it would be refused
// the same way, and the person would loop through links): the call says
// so, and the grant is kept.
func TestOAuthStepUpHeld(t *testing.T) {
	prot := oauthtest.New(t, NewServer("notes", "1.0.0", testTools(0)...).Handler())
	prot.RefuseCalls()
	tokens := &memTokens{m: map[string][]byte{}}
	m := start(t, Options{
		Manifest: manifest(ServerSpec{Alias: "notes", Transport: TransportHTTP, URL: prot.URL(), Auth: AuthPerUser, Version: "1.0.0", Tools: testToolNames}),
		OAuth:    &OAuth{Tokens: tokens, Key: bytes.Repeat([]byte{9}, 32), RedirectURL: "http://127.0.0.1:9/mcp/oauth/callback", Links: directLinks{}},
	})
	ctx := context.Background()
	alice := Place{Platform: "slack", Workspace: "T1", User: "UALICE"}
	_, err := m.CallIn(ctx, alice, "notes", "echo", nil)
	var ce *ConnectError
	if !errors.As(err, &ce) {
		t.Fatalf("CallIn(not connected) = %v, want a ConnectError", err)
	}
	code, state := openLogin(t, ce.URL)
	if _, _, err := m.FinishLogin(ctx, state, code, ""); err != nil {
		t.Fatalf("FinishLogin() error = %v", err)
	}
	for range 2 {
		_, err = m.CallIn(ctx, alice, "notes", "echo", nil)
		var pe *PermissionError
		if !errors.As(err, &pe) || !pe.Held || errors.As(err, &ce) {
			t.Fatalf("CallIn after a 403 for held scope = %v, want a PermissionError with Held and no link", err)
		}
	}
	if n := prot.Authorizations(); n != 1 {
		t.Errorf("authorizations = %d, want only the first connection", n)
	}
	if _, ok := tokens.m["user/notes/"+alice.UserValue()]; !ok {
		t.Error("the grant was deleted")
	}
}

// TestLoginProbesPastOpenInitialize: a server that lets an initialize
// through without a token and challenges only later requests still has
// its challenge read, so the login asks for the challenge's scope rather
// than every scope the metadata lists.
func TestLoginProbesPastOpenInitialize(t *testing.T) {
	var srv *httptest.Server
	mux := http.NewServeMux()
	json := func(w http.ResponseWriter, status int, body string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		json(w, 200, `{"resource":"`+srv.URL+`/mcp","authorization_servers":["`+srv.URL+`"],"scopes_supported":["everything"]}`)
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		json(w, 200, `{"issuer":"`+srv.URL+`","authorization_endpoint":"`+srv.URL+`/authorize","token_endpoint":"`+srv.URL+`/token","registration_endpoint":"`+srv.URL+`/register","code_challenge_methods_supported":["S256"]}`)
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, _ *http.Request) { json(w, 201, `{"client_id":"c1"}`) })
	mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"initialize"`) {
			json(w, 200, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer scope="notes:basic", resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
		json(w, 401, `{"error":"invalid_token"}`)
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	m := start(t, Options{
		Manifest: manifest(ServerSpec{Alias: "notes", Transport: TransportHTTP, URL: srv.URL + "/mcp", Auth: AuthOAuth, Version: "1.0.0", Tools: testToolNames}),
		OAuth:    &OAuth{Tokens: &memTokens{m: map[string][]byte{}}, Key: bytes.Repeat([]byte{7}, 32), RedirectURL: "http://127.0.0.1:9/mcp/oauth/callback"},
	})
	if got := scopeOf(t, mustLogin(t, m, "notes")); got != "notes:basic" {
		t.Errorf("Login() asks for %q, want the challenge's %q", got, "notes:basic")
	}
}
