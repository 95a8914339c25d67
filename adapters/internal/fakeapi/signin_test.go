package fakeapi

import (
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"testing"
)

// TestSignIns: a browser signed in to the fake comes back to the redirect
// URI with a code and the state; the code works once, for the registered
// client and the same redirect URI, and its token names the user. A
// browser that is not signed in, or a wrong client, gets no code.
func TestSignIns(t *testing.T) {
	s := &SignIns{Cookie: "who", TokenPrefix: "tok-"}
	s.SetClient("app", "shh")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Authorize(w, r, func(q url.Values) string {
			if q.Get("response_type") != "code" {
				return "response_type must be code"
			}
			return ""
		})
	}))
	defer srv.Close()
	back := "http://127.0.0.1:9/back"
	authorize := func(jar http.CookieJar, client string) (status int, code, state string) {
		t.Helper()
		c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		q := url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {back}, "state": {"st"}}
		resp, err := c.Get(srv.URL + "/authorize?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		return resp.StatusCode, loc.Query().Get("code"), loc.Query().Get("state")
	}
	jar, _ := cookiejar.New(nil)
	if status, code, _ := authorize(jar, "app"); status != http.StatusOK || code != "" {
		t.Errorf("authorize, not signed in = %d with code %q; want a page asking to sign in", status, code)
	}
	SignInBrowser(jar, srv.URL, "who", "U1")
	if status, code, _ := authorize(jar, "other"); status != http.StatusBadRequest || code != "" {
		t.Errorf("authorize, unknown client = %d with code %q; want a refusal", status, code)
	}
	status, code, state := authorize(jar, "app")
	if status != http.StatusFound || code == "" || state != "st" {
		t.Fatalf("authorize, signed in = %d code %q state %q; want a redirect with both", status, code, state)
	}
	tests := []struct {
		name, id, secret, redirect, failure string
	}{
		{"wrong secret", "app", "guess", back, "invalid_client"},
		{"other redirect", "app", "shh", "http://127.0.0.1:9/elsewhere", "invalid_redirect_uri"},
	}
	for _, tt := range tests {
		_, code2, _ := authorize(jar, "app")
		if tok, failure := s.Exchange(tt.id, tt.secret, code2, tt.redirect); failure != tt.failure || tok != "" {
			t.Errorf("%s: Exchange = %q, %q; want %q", tt.name, tok, failure, tt.failure)
		}
	}
	tok, failure := s.Exchange("app", "shh", code, back)
	if user, ok := s.User(tok); failure != "" || !ok || user != "U1" {
		t.Fatalf("Exchange = %q, %q; User = %q, %v; want U1's token", tok, failure, user, ok)
	}
	if _, failure := s.Exchange("app", "shh", code, back); failure != "invalid_grant" {
		t.Errorf("a code used twice: failure %q, want invalid_grant", failure)
	}
}
