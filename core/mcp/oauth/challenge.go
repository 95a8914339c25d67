package oauth

import (
	"net/http"
	"strings"
)

// Challenge is what a server's Bearer WWW-Authenticate challenge asks for
// (RFC 6750 section 3, RFC 9728 section 5.1).
type Challenge struct {
	// ResourceMetadata is the URL of the protected resource metadata, if
	// the server named one.
	ResourceMetadata string
	// Scope is the space-separated scope the server says the request needs.
	Scope string
	// Error is the error code, such as "invalid_token" or
	// "insufficient_scope".
	Error string
}

// ParseChallenge reads the Bearer challenge of h's WWW-Authenticate
// headers. A response without one gives the zero Challenge.
func ParseChallenge(h http.Header) Challenge {
	for _, v := range h.Values("WWW-Authenticate") {
		if params, ok := bearerParams(v); ok {
			return Challenge{
				ResourceMetadata: params["resource_metadata"],
				Scope:            params["scope"],
				Error:            params["error"],
			}
		}
	}
	return Challenge{}
}

// bearerParams finds the Bearer challenge in one header value, which may
// hold several challenges, and returns its auth-params.
func bearerParams(v string) (map[string]string, bool) {
	s := v
	for s != "" {
		s = strings.TrimLeft(s, " ,")
		scheme, rest, _ := strings.Cut(s, " ")
		params, after := readParams(rest)
		if strings.EqualFold(scheme, "Bearer") {
			return params, true
		}
		s = after
	}
	return nil, false
}

// readParams reads name=value pairs (values quoted or tokens) until the
// start of the next challenge, and returns them and what follows.
func readParams(s string) (map[string]string, string) {
	params := map[string]string{}
	for {
		s = strings.TrimLeft(s, " ,")
		eq := strings.IndexByte(s, '=')
		sp := strings.IndexAny(s, " ,")
		if eq <= 0 || (sp >= 0 && sp < eq) {
			return params, s // the next challenge's scheme, or the end
		}
		name := strings.ToLower(strings.TrimSpace(s[:eq]))
		s = s[eq+1:]
		var val string
		if strings.HasPrefix(s, `"`) {
			var b strings.Builder
			i := 1
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				b.WriteByte(s[i])
			}
			val = b.String()
			s = s[min(i+1, len(s)):]
		} else {
			end := strings.IndexAny(s, " ,")
			if end < 0 {
				end = len(s)
			}
			val, s = s[:end], s[end:]
		}
		params[name] = val
	}
}
