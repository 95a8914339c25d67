// Package oauthtest is an OAuth-protected MCP server on loopback for
// tests: a protected resource (any MCP handler) and the authorization
// server that guards it, in one httptest server. The authorization server
// registers clients dynamically (requiring application_type), approves
// every authorization at once (redirecting with the code), checks PKCE
// S256, the redirect URI and the resource parameter, issues access and
// refresh tokens with the scope asked for, rotates refresh tokens,
// revokes tokens (RFC 7009), and can revoke everything it issued. Its
// tool calls can be made to need more scope (a step-up).
package oauthtest

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Scope is the scope the protected server asks for.
const Scope = "notes:read"

// Server is the protected MCP server and its authorization server.
type Server struct {
	srv *httptest.Server
	mcp http.Handler

	mu        sync.Mutex
	clients   map[string]string // client ID -> redirect URI
	codes     map[string]code
	access    map[string]string // live access tokens -> their scope
	refresh   map[string]string // live refresh tokens -> their scope
	issued    []string
	asked     []string // the scope of each authorization request
	callScope string   // what tools/call needs besides Scope
	refuseAll bool     // tools/call is refused whatever the token holds
	authorize int
	refused   int
	forbidden int
	revoked   int
}

type code struct {
	clientID, redirect, challenge, resource, scope string
}

// New starts a server whose /mcp endpoint is mcp, behind OAuth. It stops
// when the test ends.
func New(t testing.TB, mcp http.Handler) *Server {
	s := &Server{mcp: mcp, clients: map[string]string{}, codes: map[string]code{}, access: map[string]string{}, refresh: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", s.resourceMetadata)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.serverMetadata)
	mux.HandleFunc("POST /register", s.register)
	mux.HandleFunc("GET /authorize", s.authorizeEndpoint)
	mux.HandleFunc("POST /token", s.token)
	mux.HandleFunc("POST /revoke", s.revoke)
	mux.HandleFunc("/mcp", s.protected)
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the MCP endpoint.
func (s *Server) URL() string { return s.srv.URL + "/mcp" }

// Issued returns every access and refresh token issued so far.
func (s *Server) Issued() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.issued...)
}

// Authorizations counts the authorization requests (the logins) so far.
func (s *Server) Authorizations() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.authorize
}

// RequireForCalls makes tools/call requests need scope as well as
// [Scope]: a token without it is answered 403 insufficient_scope, asking
// for both (a step-up, as the MCP authorization specification describes).
func (s *Server) RequireForCalls(scope string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.callScope = scope
}

// RefuseCalls makes every tools/call request answered 403
// insufficient_scope, asking for [Scope], which every token holds: a
// step-up that can never succeed.
func (s *Server) RefuseCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuseAll = true
}

// Asked returns the scope each authorization request asked for, in order.
func (s *Server) Asked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.asked...)
}

// Forbidden counts the MCP requests refused with a 403 insufficient_scope.
func (s *Server) Forbidden() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.forbidden
}

// Refused counts the MCP requests refused with a 401 for a token that was
// given but is not (or no longer) valid.
func (s *Server) Refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// Revocations counts the tokens revoked through the revocation endpoint
// (RFC 7009).
func (s *Server) Revocations() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.revoked
}

// RevokeAll revokes every access and refresh token issued so far, as an
// administrator removing the app's access would.
func (s *Server) RevokeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
	clear(s.refresh)
}

func (s *Server) resourceMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"resource": s.URL(), "authorization_servers": []string{s.srv.URL}, "scopes_supported": []string{Scope},
	})
}

func (s *Server) serverMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                s.srv.URL,
		"authorization_endpoint":                s.srv.URL + "/authorize",
		"token_endpoint":                        s.srv.URL + "/token",
		"registration_endpoint":                 s.srv.URL + "/register",
		"revocation_endpoint":                   s.srv.URL + "/revoke",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none"},
		"scopes_supported":                      []string{Scope},
	})
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs    []string `json:"redirect_uris"`
		ApplicationType string   `json:"application_type"`
	}
	// The MCP specification (SEP-837) requires application_type.
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.RedirectURIs) != 1 || req.ApplicationType != "web" && req.ApplicationType != "native" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	id := random()
	s.mu.Lock()
	s.clients[id] = req.RedirectURIs[0]
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": "none"})
}

func (s *Server) authorizeEndpoint(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.authorize++
	s.asked = append(s.asked, q.Get("scope"))
	redirect, ok := s.clients[q.Get("client_id")]
	switch {
	case !ok || redirect != q.Get("redirect_uri"):
		http.Error(w, "unknown client or redirect_uri", http.StatusBadRequest)
		return
	case q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		http.Error(w, "PKCE S256 required", http.StatusBadRequest)
		return
	case q.Get("resource") != s.URL():
		http.Error(w, "resource must be "+s.URL(), http.StatusBadRequest)
		return
	}
	c := random()
	s.codes[c] = code{clientID: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge"), resource: q.Get("resource"), scope: q.Get("scope")}
	u, _ := url.Parse(redirect)
	rq := u.Query()
	rq.Set("code", c)
	rq.Set("state", q.Get("state"))
	u.RawQuery = rq.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	s.mu.Lock()
	defer s.mu.Unlock()
	bad := func() { writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"}) }
	scope := Scope
	switch f.Get("grant_type") {
	case "authorization_code":
		c, ok := s.codes[f.Get("code")]
		delete(s.codes, f.Get("code"))
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if !ok || c.clientID != f.Get("client_id") || c.redirect != f.Get("redirect_uri") || c.resource != f.Get("resource") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge {
			bad()
			return
		}
		if c.scope != "" {
			scope = c.scope
		}
	case "refresh_token":
		rs, ok := s.refresh[f.Get("refresh_token")]
		if !ok {
			bad()
			return
		}
		scope = rs
		delete(s.refresh, f.Get("refresh_token")) // rotated
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	at, rt := "at_"+random(), "rt_"+random()
	s.access[at], s.refresh[rt] = scope, scope
	s.issued = append(s.issued, at, rt)
	writeJSON(w, http.StatusOK, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": 3600, "refresh_token": rt, "scope": scope})
}

// revoke revokes one token; revoking a refresh token also revokes every
// access token (this server does not track which token came from which,
// and a test's grants are one at a time).
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	tok := r.PostForm.Get("token")
	s.mu.Lock()
	_, isRefresh := s.refresh[tok]
	_, isAccess := s.access[tok]
	if isRefresh {
		clear(s.access)
	}
	if isRefresh || isAccess {
		s.revoked++
	}
	delete(s.refresh, tok)
	delete(s.access, tok)
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK) // RFC 7009: 200 whether or not the token was known
}

func (s *Server) protected(w http.ResponseWriter, r *http.Request) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &msg)
	s.mu.Lock()
	scope, live := s.access[tok]
	live = ok && live
	if ok && !live {
		s.refused++
	}
	need := s.callScope
	narrow := live && msg.Method == "tools/call" && (s.refuseAll || need != "" && !slices.Contains(strings.Fields(scope), need))
	if narrow {
		s.forbidden++
	}
	s.mu.Unlock()
	switch {
	case !live:
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+s.srv.URL+`/.well-known/oauth-protected-resource/mcp", scope="`+Scope+`"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_token"})
	case narrow:
		w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+strings.TrimSpace(Scope+" "+need)+`", resource_metadata="`+s.srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
		writeJSON(w, http.StatusForbidden, map[string]string{"error": "insufficient_scope"})
	default:
		s.mcp.ServeHTTP(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func random() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
