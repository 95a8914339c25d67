package oauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseChallenge(t *testing.T) {
	tests := []struct {
		name   string
		header []string
		want   Challenge
	}{
		{"none", nil, Challenge{}},
		{"bearer with everything", []string{`Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`},
			Challenge{ResourceMetadata: "https://mcp.example.com/.well-known/oauth-protected-resource/mcp", Scope: "files:read files:write", Error: "insufficient_scope"}},
		{"scheme case and token values", []string{`bearer error=invalid_token, scope="a"`}, Challenge{Scope: "a", Error: "invalid_token"}},
		{"quoted escapes", []string{`Bearer scope="a \"b\""`}, Challenge{Scope: `a "b"`}},
		{"after another scheme", []string{`Basic realm="x", Bearer scope="s"`}, Challenge{Scope: "s"}},
		{"in a second header", []string{`Basic realm="x"`, `Bearer resource_metadata="/prm"`}, Challenge{ResourceMetadata: "/prm"}},
		{"only another scheme", []string{`Basic realm="x"`}, Challenge{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tt.header {
				h.Add("WWW-Authenticate", v)
			}
			if got := ParseChallenge(h); got != tt.want {
				t.Errorf("ParseChallenge(%q) = %+v, want %+v", tt.header, got, tt.want)
			}
		})
	}
}

func TestParseKeyAndSeal(t *testing.T) {
	hexKey := strings.Repeat("ab", 32)
	for _, bad := range []string{"", "short", strings.Repeat("ab", 31), strings.Repeat("zz", 32)} {
		if _, err := ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) = nil error, want a refusal", bad)
		} else if bad != "" && strings.Contains(err.Error(), bad) {
			t.Errorf("ParseKey error quotes the value: %v", err)
		}
	}
	key, err := ParseKey(hexKey)
	if err != nil {
		t.Fatalf("ParseKey(hex) = %v", err)
	}
	if b64, err := ParseKey("q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s="); err != nil || !bytes.Equal(b64, key) {
		t.Errorf("ParseKey(base64 of the same bytes) = %x, %v; want %x", b64, err, key)
	}
	s, _ := NewSealer(key)
	sealed := s.Seal([]byte("at_secret"), []byte("op/notes"))
	if bytes.Contains(sealed, []byte("at_secret")) {
		t.Fatal("Seal left the plaintext readable")
	}
	if got, err := s.Open(sealed, []byte("op/notes")); err != nil || string(got) != "at_secret" {
		t.Errorf("Open = %q, %v; want the plaintext", got, err)
	}
	if _, err := s.Open(sealed, []byte("op/other")); !errors.Is(err, ErrUnseal) {
		t.Errorf("Open under another key = %v, want ErrUnseal", err)
	}
	other, _ := NewSealer(bytes.Repeat([]byte{1}, 32))
	if _, err := other.Open(sealed, []byte("op/notes")); !errors.Is(err, ErrUnseal) {
		t.Errorf("Open with another NEO_SECRET_KEY = %v, want ErrUnseal", err)
	}
}

// tokenServer is a token endpoint that counts refreshes, and a resource
// that accepts only the newest access token.
type tokenServer struct {
	srv       *httptest.Server
	refreshes atomic.Int32
	current   atomic.Value // string
	forbid    atomic.Bool  // answer 403 insufficient_scope always
}

func newTokenServer(t *testing.T) *tokenServer {
	ts := &tokenServer{}
	ts.current.Store("at_0")
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if r.PostForm.Get("grant_type") != "refresh_token" || r.PostForm.Get("refresh_token") == "" {
			http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
			return
		}
		n := ts.refreshes.Add(1)
		at := fmt.Sprintf("at_%d", n)
		ts.current.Store(at)
		fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":3600,"refresh_token":"rt_%d"}`, at, n)
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if ts.forbid.Load() {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="admin"`)
			w.WriteHeader(http.StatusForbidden)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+ts.current.Load().(string) {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		body, _ := io.ReadAll(r.Body)
		w.Write(body) // echo: the body survives a retry
	})
	ts.srv = httptest.NewServer(mux)
	t.Cleanup(ts.srv.Close)
	return ts
}

func TestTransportRefreshesBeforeExpiry(t *testing.T) {
	ts := newTokenServer(t)
	now := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	store := &MemoryStore{}
	_ = store.Save(context.Background(), &Grant{AccessToken: "at_0", RefreshToken: "rt_0", Expiry: now.Add(30 * time.Second), TokenEndpoint: ts.srv.URL + "/token", Client: Client{ID: "c"}})
	tr := &Transport{Flow: &Flow{ServerURL: ts.srv.URL + "/mcp", Now: func() time.Time { return now }}, Store: store}
	hc := &http.Client{Transport: tr}
	resp, err := hc.Post(ts.srv.URL+"/mcp", "application/json", strings.NewReader(`{"ping":1}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != `{"ping":1}` {
		t.Fatalf("POST = %d %q, want 200 with the body echoed", resp.StatusCode, body)
	}
	if n := ts.refreshes.Load(); n != 1 {
		t.Errorf("refreshes = %d, want 1: a token expiring within a minute is refreshed before use", n)
	}
	if g, _ := store.Load(context.Background()); g.AccessToken != "at_1" || g.RefreshToken != "rt_1" {
		t.Errorf("stored grant = %+v, want the refreshed tokens", g)
	}
}

func TestTransportRefreshesOn401(t *testing.T) {
	ts := newTokenServer(t)
	ts.current.Store("at_elsewhere") // the stored token was revoked; its refresh token still works
	store := &MemoryStore{}
	_ = store.Save(context.Background(), &Grant{AccessToken: "at_0", RefreshToken: "rt_0", TokenEndpoint: ts.srv.URL + "/token", Client: Client{ID: "c"}})
	hc := &http.Client{Transport: &Transport{Flow: &Flow{ServerURL: ts.srv.URL + "/mcp"}, Store: store}}
	resp, err := hc.Post(ts.srv.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || ts.refreshes.Load() != 1 {
		t.Errorf("POST = %d after %d refreshes, want 200 after 1", resp.StatusCode, ts.refreshes.Load())
	}
}

func TestTransportBoundsAuthorizations(t *testing.T) {
	ts := newTokenServer(t)
	ts.forbid.Store(true)
	store := &MemoryStore{}
	_ = store.Save(context.Background(), &Grant{AccessToken: "at_0", TokenEndpoint: ts.srv.URL + "/token"})
	var asked atomic.Int32
	tr := &Transport{Flow: &Flow{ServerURL: ts.srv.URL + "/mcp"}, Store: store,
		Authorize: func(context.Context, *Pending) (Redirect, error) {
			asked.Add(1)
			return Redirect{}, errors.New("stop here")
		}}
	// Begin fails (the server publishes no metadata, and the fallback
	// endpoints exist but registration does not), or Authorize does:
	// either way one request never loops.
	resp, err := (&http.Client{Transport: tr}).Post(ts.srv.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err == nil {
		resp.Body.Close()
	}
	if n := asked.Load(); n > DefaultMaxAuthorizations {
		t.Errorf("authorizations asked for one request = %d, want at most %d", n, DefaultMaxAuthorizations)
	}

}

// TestTransportRemembersStepUp: with no person at hand to authorize, a
// 403 insufficient_scope keeps the grant, records the wider scope in it
// for the next authorization, and says which scope is wanted.
func TestTransportRemembersStepUp(t *testing.T) {
	ts := newTokenServer(t)
	ts.forbid.Store(true)
	store := &MemoryStore{}
	_ = store.Save(context.Background(), &Grant{AccessToken: "at_0", RefreshToken: "rt_0", Scope: "read", TokenEndpoint: ts.srv.URL + "/token"})
	tr := &Transport{Flow: &Flow{ServerURL: ts.srv.URL + "/mcp"}, Store: store}
	_, err := (&http.Client{Transport: tr}).Post(ts.srv.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	var se *ScopeError
	if !errors.As(err, &se) || se.Scope != "read admin" {
		t.Fatalf("a step-up without an Authorizer = %v, want a ScopeError for %q", err, "read admin")
	}
	g, _ := store.Load(context.Background())
	if g.AccessToken != "at_0" || g.RefreshToken != "rt_0" || g.Wants() != "read admin" {
		t.Errorf("stored grant = %+v, want the same tokens, wanting %q", g, "read admin")
	}
	if n := ts.refreshes.Load(); n != 0 {
		t.Errorf("refreshes = %d, want none: a refresh cannot widen a grant", n)
	}
}

func TestCheckSecure(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://auth.example.com/token": true,
		"http://127.0.0.1:8080/token":    true,
		"http://localhost/token":         true,
		"http://[::1]:9/token":           true,
		"http://auth.example.com/token":  false,
		"http://10.0.0.5/token":          false,
		"ftp://auth.example.com/token":   false,
		"not a url":                      false,
	} {
		if err := checkSecure("token_endpoint", raw); (err == nil) != ok {
			t.Errorf("checkSecure(%q) = %v, want ok %v", raw, err, ok)
		}
	}
}

// TestTransportStepUpHeld: a 403 insufficient_scope for scope the grant
// already holds says so, and asks the next authorization for nothing:
// another one would be refused the same way.
func TestTransportStepUpHeld(t *testing.T) {
	ts := newTokenServer(t)
	ts.forbid.Store(true) // asks for "admin"
	store := &MemoryStore{}
	_ = store.Save(context.Background(), &Grant{AccessToken: "at_0", Scope: "read admin", TokenEndpoint: ts.srv.URL + "/token"})
	tr := &Transport{Flow: &Flow{ServerURL: ts.srv.URL + "/mcp"}, Store: store}
	_, err := (&http.Client{Transport: tr}).Post(ts.srv.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	var se *ScopeError
	if !errors.As(err, &se) || !se.Held || se.Scope != "admin" {
		t.Fatalf("a step-up for held scope = %v, want a ScopeError with Held", err)
	}
	if g, _ := store.Load(context.Background()); g.StepUp != "" {
		t.Errorf("stored grant wants %q more, want nothing: the scope is held", g.StepUp)
	}
}
