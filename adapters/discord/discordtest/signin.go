package discordtest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/neobot/neobot/adapters/internal/fakeapi"
)

// Discord's OAuth2 authorization code grant, as Discord documents it:
// the browser goes to /oauth2/authorize (response_type=code, client_id,
// scope, redirect_uri, state) and comes back to the redirect URI with a
// code; the app trades it at POST /api/oauth2/token (form-encoded
// grant_type=authorization_code, code, redirect_uri; the client ID and
// secret by HTTP Basic or in the form) for a Bearer access token, and
// with the identify scope reads the user from GET /api/users/@me.

// signInCookie says, on the fake's own address, which Discord user ID
// the browser is signed in as.
const signInCookie = "discordtest_user"

// SetOAuthClient registers the application's OAuth2 client ID and
// secret.
func (s *Server) SetOAuthClient(id, secret string) { s.signins.SetClient(id, secret) }

// SignIn signs jar's browser in to Discord as user (an ID).
func (s *Server) SignIn(jar http.CookieJar, user string) {
	fakeapi.SignInBrowser(jar, s.srv.URL, signInCookie, user)
}

// SignInSecrets returns every code and access token the OAuth2 flow
// handed out, for tests that check none of them leaks.
func (s *Server) SignInSecrets() []string { return s.signins.Issued() }

// serveOAuthAuthorize is /oauth2/authorize.
func (s *Server) serveOAuthAuthorize(w http.ResponseWriter, r *http.Request) {
	s.signins.Authorize(w, r, func(q url.Values) string {
		switch {
		case q.Get("response_type") != "code":
			return "response_type must be code"
		case !slices.Contains(strings.Fields(q.Get("scope")), "identify"):
			return "this fake signs in with the identify scope (and guilds) only"
		}
		for _, sc := range strings.Fields(q.Get("scope")) {
			if sc != "identify" && sc != "guilds" {
				return "this fake signs in with the identify scope (and guilds) only"
			}
		}
		return ""
	})
}

// serveOAuthToken is POST /api/oauth2/token.
func (s *Server) serveOAuthToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "authorization_code" {
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	tok, failure := s.signins.Exchange(id, secret, r.PostForm.Get("code"), r.PostForm.Get("redirect_uri"))
	switch failure {
	case "":
	case "invalid_client":
		oauthError(w, http.StatusUnauthorized, failure)
		return
	default:
		oauthError(w, http.StatusBadRequest, "invalid_grant")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"access_token": tok, "token_type": "Bearer", "expires_in": 604800, "scope": s.signins.Scope(tok),
		"refresh_token": "refresh-" + tok,
	})
}

// serveOAuthMe is GET /api/users/@me with a user's Bearer token.
func (s *Server) serveOAuthMe(w http.ResponseWriter, r *http.Request) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	user, known := s.signins.User(tok)
	w.Header().Set("Content-Type", "application/json")
	if !ok || !known {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"message": "401: Unauthorized", "code": 0}`))
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": user, "username": "user" + user, "global_name": "User " + user, "discriminator": "0", "avatar": nil,
	})
}

func oauthError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code})
}
