package fakeapi

import (
	"crypto/rand"
	"encoding/hex"
	"html"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// SignIns is a fake platform's "sign in with" flow, the authorization
// code grant both platforms use: a browser signed in to the platform (a
// cookie of the fake) is sent to the app's redirect URI with a one-time
// code, which the app trades, with its client ID and secret, for a user
// token that reads who signed in. The zero value has no app registered
// and refuses every request.
type SignIns struct {
	// Cookie names the fake's cookie that says who the browser is signed
	// in as; set it before use.
	Cookie string
	// TokenPrefix starts the user tokens it issues ("xoxp-" on Slack).
	TokenPrefix string

	mu       sync.Mutex
	id       string
	secret   string
	codes    map[string]signedIn // by code, single use
	tokens   map[string]string   // user token -> user
	scopes   map[string]string   // user token -> the scope authorized
	issued   []string            // codes and tokens, ever
	declined int                 // authorizations refused
}

type signedIn struct{ user, redirect, scope string }

// SetClient registers the app's client ID and secret.
func (s *SignIns) SetClient(id, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.id, s.secret = id, secret
}

// Authorize is the browser's visit to the authorize page, whose query
// the platform's own checks (check) have accepted: a browser signed in to
// the fake goes back to redirect_uri with a code and the state; one that
// is not gets a page asking it to sign in. A wrong client is refused
// with a page, as the platforms do, never redirected.
func (s *SignIns) Authorize(w http.ResponseWriter, r *http.Request, check func(url.Values) string) {
	q := r.URL.Query()
	s.mu.Lock()
	id := s.id
	s.mu.Unlock()
	redirect, err := url.Parse(q.Get("redirect_uri"))
	switch {
	case id == "" || q.Get("client_id") != id:
		s.refuse(w, http.StatusBadRequest, "unknown client_id")
		return
	case err != nil || redirect.Scheme != "http" && redirect.Scheme != "https":
		s.refuse(w, http.StatusBadRequest, "redirect_uri is not an http(s) URL")
		return
	}
	if bad := check(q); bad != "" {
		s.refuse(w, http.StatusBadRequest, bad)
		return
	}
	c, err := r.Cookie(s.Cookie)
	if err != nil || c.Value == "" {
		s.refuse(w, http.StatusOK, "sign in to continue")
		return
	}
	code := s.newSecret("code-")
	s.mu.Lock()
	if s.codes == nil {
		s.codes = map[string]signedIn{}
	}
	s.codes[code] = signedIn{user: c.Value, redirect: q.Get("redirect_uri"), scope: q.Get("scope")}
	s.mu.Unlock()
	back := redirect.Query()
	back.Set("code", code)
	if st := q.Get("state"); st != "" {
		back.Set("state", st)
	}
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (s *SignIns) refuse(w http.ResponseWriter, status int, why string) {
	s.mu.Lock()
	s.declined++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte("<!doctype html><title>sign in</title><p>" + html.EscapeString(why) + "</p>"))
}

// Exchange trades code for a user token: the client must be the
// registered one, and redirect the URI the code was issued for (when the
// app sends one). It returns the error code the platform would.
func (s *SignIns) Exchange(id, secret, code, redirect string) (token, failure string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.id == "" || id != s.id || secret != s.secret {
		return "", "invalid_client"
	}
	c, ok := s.codes[code]
	delete(s.codes, code)
	if !ok {
		return "", "invalid_grant"
	}
	if redirect != "" && redirect != c.redirect {
		return "", "invalid_redirect_uri"
	}
	token = s.newSecretLocked(s.TokenPrefix)
	if s.tokens == nil {
		s.tokens = map[string]string{}
	}
	s.tokens[token] = c.user
	if s.scopes == nil {
		s.scopes = map[string]string{}
	}
	s.scopes[token] = c.scope
	return token, ""
}

// Scope returns the scope (space-separated) the browser authorized for
// token, "" for an unknown token.
func (s *SignIns) Scope(token string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scopes[strings.TrimSpace(token)]
}

// User returns who token was issued to.
func (s *SignIns) User(token string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.tokens[strings.TrimSpace(token)]
	return u, ok
}

// Issued returns every code and token handed out, for tests that check
// none of them leaks.
func (s *SignIns) Issued() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.issued...)
}

// Declined counts the authorize visits refused or asked to sign in.
func (s *SignIns) Declined() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.declined
}

func (s *SignIns) newSecret(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newSecretLocked(prefix)
}

func (s *SignIns) newSecretLocked(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	v := prefix + hex.EncodeToString(b[:])
	s.issued = append(s.issued, v)
	return v
}

// SignInBrowser sets cookie in jar for the fake at base: the browser is
// signed in to the platform as user.
func SignInBrowser(jar http.CookieJar, base, cookie, user string) {
	u, err := url.Parse(base)
	if err != nil {
		return
	}
	jar.SetCookies(u, []*http.Cookie{{Name: cookie, Value: user, Path: "/"}})
}
