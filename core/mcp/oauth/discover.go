package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// checkSecure refuses a URL that would carry codes, secrets or tokens
// over plain http to another machine: OAuth 2.1 requires TLS, and plain
// http is allowed only on loopback (the tests' servers, a local proxy).
func checkSecure(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%s %q is not a URL", what, raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
			return nil
		}
	}
	return fmt.Errorf("%s %s is not https; refusing to send OAuth credentials over it", what, raw)
}

// ResourceMetadata is an MCP server's OAuth protected resource metadata
// (RFC 9728).
type ResourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported,omitempty"`
}

// ServerMetadata is an authorization server's metadata (RFC 8414, or an
// OpenID provider configuration).
type ServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint,omitempty"`
	RevocationEndpoint                string   `json:"revocation_endpoint,omitempty"`
	ScopesSupported                   []string `json:"scopes_supported,omitempty"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported,omitempty"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported,omitempty"`
	// AuthorizationResponseIssParameterSupported says the server adds iss
	// to its redirects (RFC 9207).
	AuthorizationResponseIssParameterSupported bool `json:"authorization_response_iss_parameter_supported,omitempty"`
}

// maxMetadata bounds a metadata document or token response read.
const maxMetadata = 1 << 20

// errNotFound is a well-known location that holds no document.
var errNotFound = errors.New("not found")

// getJSON fetches u into v. A 4xx answer is errNotFound, so callers try
// the next location.
func getJSON(ctx context.Context, hc *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxMetadata))
		return errNotFound
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxMetadata)).Decode(v); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}

// resourceMetadataURLs lists where a server's protected resource metadata
// may be when its challenge names none: the path-suffixed well-known URL,
// then the root one (RFC 9728 section 3.1).
func resourceMetadataURLs(server *url.URL) []string {
	origin := server.Scheme + "://" + server.Host
	var out []string
	if p := strings.TrimSuffix(server.EscapedPath(), "/"); p != "" {
		out = append(out, origin+"/.well-known/oauth-protected-resource"+p)
	}
	return append(out, origin+"/.well-known/oauth-protected-resource")
}

// discoverResource finds the protected resource metadata: at the
// challenge's URL, else at the well-known locations. It returns nil and
// no error when the server publishes none (a 2025-03-26 server).
func discoverResource(ctx context.Context, hc *http.Client, r reach, server *url.URL, ch Challenge) (*ResourceMetadata, error) {
	urls := resourceMetadataURLs(server)
	if ch.ResourceMetadata != "" {
		u, err := server.Parse(ch.ResourceMetadata)
		if err != nil {
			return nil, fmt.Errorf("resource_metadata %q is not a URL", ch.ResourceMetadata)
		}
		if err := r.check("resource_metadata", u.String()); err != nil {
			return nil, err
		}
		urls = append([]string{u.String()}, urls...)
	}
	for _, u := range urls {
		var md ResourceMetadata
		err := getJSON(ctx, hc, u, &md)
		if errors.Is(err, errNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("protected resource metadata: %w", err)
		}
		if len(md.AuthorizationServers) == 0 {
			return nil, fmt.Errorf("protected resource metadata at %s names no authorization server", u)
		}
		if err := checkSecure("authorization server", md.AuthorizationServers[0]); err != nil {
			return nil, err
		}
		if err := r.check("authorization server", md.AuthorizationServers[0]); err != nil {
			return nil, err
		}
		if md.Resource != "" && !resourceCovers(md.Resource, server) {
			return nil, fmt.Errorf("protected resource metadata at %s is for %s, not for %s; refusing to send a token there", u, md.Resource, server)
		}
		return &md, nil
	}
	return nil, nil
}

// resourceCovers reports whether the resource identifier names server:
// the same origin and a path that is server's path or a parent of it.
func resourceCovers(resource string, server *url.URL) bool {
	r, err := url.Parse(resource)
	if err != nil {
		return false
	}
	if !strings.EqualFold(r.Scheme, server.Scheme) || !strings.EqualFold(r.Host, server.Host) {
		return false
	}
	rp := strings.TrimSuffix(r.Path, "/")
	sp := strings.TrimSuffix(server.Path, "/")
	return rp == "" || rp == sp || strings.HasPrefix(sp, rp+"/")
}

// serverMetadataURLs lists where an issuer's metadata may be, in the
// order the MCP specification gives: RFC 8414 and OpenID discovery with
// the path inserted, then OpenID discovery with the path appended.
func serverMetadataURLs(issuer *url.URL) []string {
	origin := issuer.Scheme + "://" + issuer.Host
	p := strings.TrimSuffix(issuer.EscapedPath(), "/")
	if p == "" {
		return []string{
			origin + "/.well-known/oauth-authorization-server",
			origin + "/.well-known/openid-configuration",
		}
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server" + p,
		origin + "/.well-known/openid-configuration" + p,
		origin + p + "/.well-known/openid-configuration",
	}
}

// discoverServer finds the authorization server's metadata and checks
// it: its issuer is the one asked for (RFC 8414 section 3.3), it
// supports PKCE S256, and its endpoints are https and reachable (see
// reach). Without any (a 2025-03-26 server), it falls back to the
// default endpoints at the issuer's origin: /authorize, /token and
// /register. guessed means no resource metadata named the issuer: it is
// a 2025-03-26 server's origin, which its metadata's issuer need not be.
func discoverServer(ctx context.Context, hc *http.Client, r reach, issuer string, guessed bool) (*ServerMetadata, error) {
	iu, err := url.Parse(issuer)
	if err != nil || iu.Host == "" {
		return nil, fmt.Errorf("authorization server %q is not a URL", issuer)
	}
	for _, u := range serverMetadataURLs(iu) {
		var md ServerMetadata
		err := getJSON(ctx, hc, u, &md)
		if errors.Is(err, errNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("authorization server metadata: %w", err)
		}
		named := issuer
		if guessed {
			named = ""
		}
		if err := checkServerMetadata(&md, u, named, r); err != nil {
			return nil, err
		}
		return &md, nil
	}
	origin := iu.Scheme + "://" + iu.Host
	return &ServerMetadata{
		Issuer:                origin,
		AuthorizationEndpoint: origin + "/authorize",
		TokenEndpoint:         origin + "/token",
		RegistrationEndpoint:  origin + "/register",
	}, nil
}

// checkServerMetadata checks the authorization server metadata found at
// u for issuer ("" when no resource metadata named one).
func checkServerMetadata(md *ServerMetadata, u, issuer string, r reach) error {
	if issuer != "" && strings.TrimSuffix(md.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
		return fmt.Errorf("authorization server metadata at %s names the issuer %q, not %q (RFC 8414 requires them identical); refusing it, as it may be another server's", u, md.Issuer, issuer)
	}
	if md.AuthorizationEndpoint == "" || md.TokenEndpoint == "" {
		return fmt.Errorf("authorization server metadata at %s lacks authorization_endpoint or token_endpoint", u)
	}
	if !contains(md.CodeChallengeMethodsSupported, "S256") {
		return fmt.Errorf("authorization server %s does not list S256 in code_challenge_methods_supported (its metadata at %s lists %q); neobot authorizes only with PKCE S256", issuer, u, md.CodeChallengeMethodsSupported)
	}
	for _, e := range []struct{ what, url string }{
		{"authorization_endpoint", md.AuthorizationEndpoint}, {"token_endpoint", md.TokenEndpoint},
		{"registration_endpoint", md.RegistrationEndpoint}, {"revocation_endpoint", md.RevocationEndpoint},
	} {
		if e.url == "" {
			continue
		}
		if err := checkSecure(e.what, e.url); err != nil {
			return err
		}
		if err := r.check(e.what, e.url); err != nil {
			return err
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
