package slacktest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/neobot/neobot/adapters/internal/fakeapi"
)

// Sign in with Slack, OpenID Connect as Slack documents it: the browser
// goes to /openid/connect/authorize (response_type=code, scope with
// openid, the app's client_id and redirect_uri) and comes back to the
// redirect URI with a code; the app trades it at openid.connect.token
// (client_id, client_secret, code, redirect_uri) for a user token and an
// id_token, and reads who signed in from openid.connect.userInfo (sub,
// https://slack.com/user_id, https://slack.com/team_id, name).

// signInCookie says, on the fake's own address, which user of its
// workspace the browser is signed in to Slack as.
const signInCookie = "slacktest_user"

// SetOIDCClient registers the Slack app's client ID and secret for Sign
// in with Slack.
func (s *Server) SetOIDCClient(id, secret string) { s.signins.SetClient(id, secret) }

// SignIn signs jar's browser in to Slack as user, in their workspace
// (SetPerson; the server's Team by default).
func (s *Server) SignIn(jar http.CookieJar, user string) {
	fakeapi.SignInBrowser(jar, s.srv.URL, signInCookie, user)
}

// SignInSecrets returns every code and user token Sign in with Slack
// handed out, for tests that check none of them leaks.
func (s *Server) SignInSecrets() []string { return s.signins.Issued() }

// serveOIDCAuthorize is /openid/connect/authorize.
func (s *Server) serveOIDCAuthorize(w http.ResponseWriter, r *http.Request) {
	s.signins.Authorize(w, r, func(q url.Values) string {
		switch {
		case q.Get("response_type") != "code":
			return "response_type must be code"
		case !slices.Contains(strings.Fields(q.Get("scope")), "openid"):
			return "scope must include openid"
		case q.Get("team") != "" && q.Get("team") != s.team():
			return "this browser is not signed in to team " + q.Get("team")
		}
		return ""
	})
}

// answerOIDCLocked answers openid.connect.token and
// openid.connect.userInfo.
func (s *Server) answerOIDCLocked(method string, p url.Values, token string) map[string]any {
	switch method {
	case "openid.connect.token":
		if gt := p.Get("grant_type"); gt != "" && gt != "authorization_code" {
			return fail("invalid_grant_type")
		}
		tok, failure := s.signins.Exchange(p.Get("client_id"), p.Get("client_secret"), p.Get("code"), p.Get("redirect_uri"))
		switch failure {
		case "":
		case "invalid_client":
			return fail("invalid_client_id")
		case "invalid_redirect_uri":
			return fail("bad_redirect_uri")
		default:
			return fail("invalid_code")
		}
		who, _ := s.signins.User(tok)
		return map[string]any{"ok": true, "access_token": tok, "token_type": "Bearer", "id_token": s.idToken(who)}
	case "openid.connect.userInfo":
		user, ok := s.signins.User(token)
		if !ok {
			return fail("invalid_auth")
		}
		return map[string]any{
			"ok": true, "sub": user, "https://slack.com/user_id": user, "https://slack.com/team_id": s.personLocked(user).Team,
			"name": strings.ToLower(strings.TrimPrefix(user, "U")), "https://slack.com/team_name": "Fake",
		}
	}
	return fail("unknown_method")
}

// idToken is an id_token's shape with the claims Slack puts in it; the
// fake does not sign it.
func (s *Server) idToken(user string) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]string{"alg": "none", "typ": "JWT"}) + "." + enc(map[string]string{
		"iss": "https://slack.com", "sub": user, "https://slack.com/user_id": user, "https://slack.com/team_id": s.personLocked(user).Team,
	}) + "."
}
