package oauth

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Client is a client identity at an authorization server.
type Client struct {
	ID string `json:"client_id"`
	// Secret is empty for a public client.
	Secret string `json:"client_secret,omitempty"`
	// AuthMethod is how the client authenticates at the token endpoint:
	// "client_secret_basic", "client_secret_post" or "none".
	AuthMethod string `json:"token_endpoint_auth_method,omitempty"`
}

// Grant is what one authorization yields and what a refresh needs: the
// tokens, the client they were issued to and where to refresh them. It is
// the unit a [GrantStore] keeps.
type Grant struct {
	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	// Scope is the space-separated scope the grant was asked for or given.
	Scope         string `json:"scope,omitempty"`
	Client        Client `json:"client"`
	TokenEndpoint string `json:"token_endpoint"`
	// RevocationEndpoint is where the tokens are revoked (RFC 7009), when
	// the authorization server has one.
	RevocationEndpoint string `json:"revocation_endpoint,omitempty"`
	// Resource is the RFC 8707 resource the tokens are for ("" for a
	// 2025-03-26 server that publishes no resource metadata).
	Resource string `json:"resource,omitempty"`
	// Issuer is the authorization server that issued the tokens; the
	// client and the endpoints above are that issuer's alone.
	Issuer string `json:"issuer,omitempty"`
	// StepUp is the scope the server asked for in a 403
	// insufficient_scope that no person was at hand to grant, together
	// with the scope held: what the next authorization asks for.
	StepUp string `json:"step_up,omitempty"`
}

// Wants is the scope the next authorization for g's server asks for at
// least: the scope held, and any a step-up challenge asked for.
func (g *Grant) Wants() string { return unionScope(g.Scope, g.StepUp) }

// Pending is an authorization started by [Flow.Begin] and waiting for the
// redirect back: what [Flow.Finish] needs to exchange its code.
type Pending struct {
	// URL is the authorization URL the user opens.
	URL           string `json:"url"`
	State         string `json:"state"`
	Verifier      string `json:"verifier"`
	RedirectURI   string `json:"redirect_uri"`
	Scope         string `json:"scope,omitempty"`
	Resource      string `json:"resource,omitempty"`
	Client        Client `json:"client"`
	TokenEndpoint string `json:"token_endpoint"`
	// RevocationEndpoint passes on to the grant.
	RevocationEndpoint string `json:"revocation_endpoint,omitempty"`
	// Issuer is the authorization server's issuer identifier.
	Issuer string `json:"issuer,omitempty"`
	// IssRequired is set when the authorization server says it adds
	// iss to its redirects (RFC 9207): one without it is refused.
	IssRequired bool `json:"iss_required,omitempty"`
}

// Redirect is what the authorization server's redirect back to neobot
// carries (its query parameters code, state and, RFC 9207, iss).
type Redirect struct {
	Code, State, Iss string
}

// Flow performs authorizations for one MCP server. It is immutable after
// construction and safe for concurrent use.
type Flow struct {
	// ServerURL is the MCP server's endpoint.
	ServerURL string
	// HTTPClient sends discovery, registration and token requests
	// (default http.DefaultClient). It must not be the client whose
	// transport is this flow's [Transport].
	HTTPClient *http.Client
	// RedirectURI is where the authorization server sends the user back.
	RedirectURI string
	// Client is a pre-registered client; empty ID means none.
	Client Client
	// ClientMetadataURL is the HTTPS URL of neobot's client ID metadata
	// document, used as the client ID where the authorization server
	// supports that (and no client is pre-registered).
	ClientMetadataURL string
	// ClientName is sent in a dynamic registration.
	ClientName string
	// Scope, when set, is asked for when neither the challenge nor the
	// metadata say which scope to ask.
	Scope string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Registrations, when set, keeps dynamic client registrations per
	// issuer, so logins reuse them.
	Registrations *Registrations
}

// Registrations keeps the clients registered dynamically (RFC 7591), by
// issuer and redirect URI: a login reuses its issuer's registration, and
// a client registered at one authorization server is never presented to
// another. It lives in memory; the zero value is ready, and it is safe
// for concurrent use.
type Registrations struct {
	mu sync.Mutex
	m  map[string]Client
}

func (r *Registrations) get(key string) (Client, bool) {
	if r == nil {
		return Client{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.m[key]
	return c, ok
}

// registrationKey is the key of a registration at issuer for a callback.
func registrationKey(issuer, redirect string) string { return issuer + " " + redirect }

// forget drops the registration under key if it is still the client id.
func (r *Registrations) forget(key, id string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.m[key]; ok && c.ID == id {
		delete(r.m, key)
	}
}

func (r *Registrations) put(key string, c Client) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]Client{}
	}
	r.m[key] = c
}

// ErrNoRegistration means the authorization server offers no way for
// neobot to get a client ID: no dynamic registration, no client ID
// metadata documents, and none pre-registered.
var ErrNoRegistration = errors.New("the authorization server offers no client registration; register a client there and put its client_id in the manifest")

// http is the client for requests to the authorization server, its
// dials guarded so they reach only public addresses and those of the MCP
// server's own class (see reach).
func (f *Flow) http(ctx context.Context) (*http.Client, reach) {
	hc := f.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	r := reach{server: classPublic}
	if su, err := url.Parse(f.ServerURL); err == nil && su.Host != "" {
		r.server = serverClass(ctx, su)
	}
	return r.client(hc), r
}

func (f *Flow) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// Begin discovers the server's authorization setup from the challenge,
// gets a client identity, and returns the authorization URL to open.
// have is the scope of the grant in hand, if any: a step-up asks for it
// and the challenge's scope together.
func (f *Flow) Begin(ctx context.Context, ch Challenge, have string) (*Pending, error) {
	su, err := url.Parse(f.ServerURL)
	if err != nil || su.Host == "" {
		return nil, fmt.Errorf("oauth: server URL %q is not a URL", f.ServerURL)
	}
	hc, r := f.http(ctx)
	prm, err := discoverResource(ctx, hc, r, su, ch)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	issuer := su.Scheme + "://" + su.Host
	resource := ""
	if prm != nil {
		issuer = prm.AuthorizationServers[0]
		resource = prm.Resource
		if resource == "" {
			resource = canonical(su)
		}
	}
	asm, err := discoverServer(ctx, hc, r, issuer, prm == nil)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	client, err := f.client(ctx, hc, asm)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	scope := ch.Scope
	switch {
	case scope != "":
	case prm != nil && len(prm.ScopesSupported) > 0:
		scope = strings.Join(prm.ScopesSupported, " ")
	default:
		scope = f.Scope
	}
	scope = unionScope(have, scope)
	p := &Pending{
		State:         randomString(24),
		Verifier:      randomString(48),
		RedirectURI:   f.RedirectURI,
		Scope:         scope,
		Resource:      resource,
		Client:        client,
		TokenEndpoint: asm.TokenEndpoint,
		Issuer:        asm.Issuer,
		IssRequired:   asm.AuthorizationResponseIssParameterSupported,

		RevocationEndpoint: asm.RevocationEndpoint,
	}
	au, err := url.Parse(asm.AuthorizationEndpoint)
	if err != nil {
		return nil, fmt.Errorf("oauth: authorization_endpoint %q is not a URL", asm.AuthorizationEndpoint)
	}
	q := au.Query()
	q.Set("response_type", "code")
	q.Set("client_id", client.ID)
	q.Set("redirect_uri", f.RedirectURI)
	q.Set("state", p.State)
	q.Set("code_challenge", challengeS256(p.Verifier))
	q.Set("code_challenge_method", "S256")
	if scope != "" {
		q.Set("scope", scope)
	}
	if resource != "" {
		q.Set("resource", resource)
	}
	au.RawQuery = q.Encode()
	p.URL = au.String()
	return p, nil
}

// Finish exchanges the code the redirect brought back for a grant. Its
// state must be the pending authorization's, and its iss the issuer's
// when present or when the issuer promised it (RFC 9207), or the
// redirect is refused.
func (f *Flow) Finish(ctx context.Context, p *Pending, rd Redirect) (*Grant, error) {
	if rd.State != p.State {
		return nil, errors.New("oauth: the redirect's state does not match the authorization's; start the login again")
	}
	switch {
	case rd.Iss == "" && p.IssRequired:
		return nil, fmt.Errorf("oauth: the redirect carries no iss, though the authorization server %s says it sends one (RFC 9207); refusing it, as it may come from another server", p.Issuer)
	case rd.Iss != "" && p.Issuer != "" && rd.Iss != p.Issuer:
		return nil, fmt.Errorf("oauth: the redirect's iss %q is not the authorization server's issuer %q (RFC 9207); refusing it, as it may come from another server", rd.Iss, p.Issuer)
	}
	code := rd.Code
	if code == "" {
		return nil, errors.New("oauth: the redirect carries no authorization code")
	}
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {p.RedirectURI},
		"code_verifier": {p.Verifier},
	}
	if p.Resource != "" {
		form.Set("resource", p.Resource)
	}
	g := &Grant{Client: p.Client, TokenEndpoint: p.TokenEndpoint, RevocationEndpoint: p.RevocationEndpoint, Resource: p.Resource, Scope: p.Scope, Issuer: p.Issuer}
	if err := f.token(ctx, g, form); err != nil {
		var te *TokenError
		if errors.As(err, &te) && te.Code == "invalid_client" {
			// The registration kept for this issuer is gone there: the
			// next login registers anew.
			f.Registrations.forget(registrationKey(p.Issuer, p.RedirectURI), p.Client.ID)
		}
		return nil, err
	}
	return g, nil
}

// Refresh renews g's access token with its refresh token, in place.
func (f *Flow) Refresh(ctx context.Context, g *Grant) error {
	if g.RefreshToken == "" {
		return errors.New("oauth: the grant has no refresh token; log in again")
	}
	form := url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {g.RefreshToken},
	}
	if g.Resource != "" {
		form.Set("resource", g.Resource)
	}
	return f.token(ctx, g, form)
}

// Revoke asks the authorization server to revoke g (RFC 7009): its
// refresh token, which takes the access tokens issued from it along, or
// else its access token. A server without a revocation endpoint is left
// alone; the caller deletes its own copy either way.
func (f *Flow) Revoke(ctx context.Context, g *Grant) error {
	if g.RevocationEndpoint == "" {
		return nil
	}
	form := url.Values{"token": {g.RefreshToken}, "token_type_hint": {"refresh_token"}}
	if g.RefreshToken == "" {
		form = url.Values{"token": {g.AccessToken}, "token_type_hint": {"access_token"}}
	}
	resp, err := f.post(ctx, g.RevocationEndpoint, g.Client, form)
	if err != nil {
		return fmt.Errorf("oauth: revoke: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("oauth: revoke: the revocation endpoint answered HTTP %d", resp.StatusCode)
	}
	return nil
}

// TokenError is an error answer of a token endpoint.
type TokenError struct {
	Status      int
	Code        string // such as "invalid_grant"
	Description string
}

// Error says what the authorization server answered.
func (e *TokenError) Error() string {
	s := fmt.Sprintf("oauth: token endpoint answered HTTP %d", e.Status)
	if e.Code != "" {
		s += ": " + e.Code
	}
	if e.Description != "" {
		s += " (" + e.Description + ")"
	}
	return s
}

// token posts form to g's token endpoint, authenticating as g's client,
// and stores the answer in g.
func (f *Flow) token(ctx context.Context, g *Grant, form url.Values) error {
	resp, err := f.post(ctx, g.TokenEndpoint, g.Client, form)
	if err != nil {
		return fmt.Errorf("oauth: token endpoint: %w", err)
	}
	defer resp.Body.Close()
	var tr struct {
		AccessToken  string `json:"access_token"`
		TokenType    string `json:"token_type"`
		RefreshToken string `json:"refresh_token"`
		ExpiresIn    int64  `json:"expires_in"`
		Scope        string `json:"scope"`
		Error        string `json:"error"`
		Description  string `json:"error_description"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, maxMetadata)).Decode(&tr)
	if resp.StatusCode != http.StatusOK || tr.AccessToken == "" {
		return &TokenError{Status: resp.StatusCode, Code: tr.Error, Description: tr.Description}
	}
	if tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "Bearer") {
		return fmt.Errorf("oauth: token endpoint issued a %q token; only Bearer tokens are supported", tr.TokenType)
	}
	g.AccessToken = tr.AccessToken
	if tr.RefreshToken != "" {
		g.RefreshToken = tr.RefreshToken
	}
	g.Expiry = time.Time{}
	if tr.ExpiresIn > 0 {
		g.Expiry = f.now().Add(time.Duration(tr.ExpiresIn) * time.Second)
	}
	if tr.Scope != "" {
		g.Scope = tr.Scope
	}
	return nil
}

// post sends form to an endpoint of the authorization server,
// authenticating as c.
func (f *Flow) post(ctx context.Context, endpoint string, c Client, form url.Values) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, nil)
	if err != nil {
		return nil, err
	}
	switch c.AuthMethod {
	case "client_secret_basic":
		req.SetBasicAuth(url.QueryEscape(c.ID), url.QueryEscape(c.Secret))
	case "client_secret_post":
		form.Set("client_id", c.ID)
		form.Set("client_secret", c.Secret)
	default:
		form.Set("client_id", c.ID)
	}
	body := form.Encode()
	req.Body = io.NopCloser(strings.NewReader(body))
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	hc, _ := f.http(ctx)
	return hc.Do(req)
}

// client picks the client identity: the pre-registered one, a client ID
// metadata document, or a dynamic registration (this issuer's earlier
// one, if kept).
func (f *Flow) client(ctx context.Context, hc *http.Client, asm *ServerMetadata) (Client, error) {
	if f.Client.ID != "" {
		c := f.Client
		if c.AuthMethod == "" {
			c.AuthMethod = authMethod(asm, c.Secret != "")
		}
		return c, nil
	}
	if f.ClientMetadataURL != "" && asm.ClientIDMetadataDocumentSupported {
		return Client{ID: f.ClientMetadataURL, AuthMethod: "none"}, nil
	}
	if asm.RegistrationEndpoint == "" {
		return Client{}, ErrNoRegistration
	}
	key := registrationKey(asm.Issuer, f.RedirectURI)
	if c, ok := f.Registrations.get(key); ok {
		return c, nil
	}
	c, err := f.register(ctx, hc, asm)
	if err == nil {
		f.Registrations.put(key, c)
	}
	return c, err
}

// authMethod picks how a client authenticates at the token endpoint from
// what the server supports (RFC 8414: absent means client_secret_basic).
func authMethod(asm *ServerMetadata, hasSecret bool) string {
	if !hasSecret {
		return "none"
	}
	supported := asm.TokenEndpointAuthMethodsSupported
	switch {
	case len(supported) == 0 || contains(supported, "client_secret_basic"):
		return "client_secret_basic"
	case contains(supported, "client_secret_post"):
		return "client_secret_post"
	}
	return "client_secret_basic"
}

// register registers neobot as a client (RFC 7591).
func (f *Flow) register(ctx context.Context, hc *http.Client, asm *ServerMetadata) (Client, error) {
	method := "none"
	if s := asm.TokenEndpointAuthMethodsSupported; len(s) > 0 && !contains(s, "none") {
		method = authMethod(asm, true)
	}
	name := f.ClientName
	if name == "" {
		name = "neobot"
	}
	reqBody, err := json.Marshal(map[string]any{
		"client_name":                name,
		"redirect_uris":              []string{f.RedirectURI},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": method,
		"application_type":           applicationType(f.RedirectURI),
	})
	if err != nil {
		return Client{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, asm.RegistrationEndpoint, bytes.NewReader(reqBody))
	if err != nil {
		return Client{}, fmt.Errorf("client registration: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return Client{}, fmt.Errorf("client registration: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return Client{}, fmt.Errorf("client registration at %s: HTTP %d", asm.RegistrationEndpoint, resp.StatusCode)
	}
	var c Client
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxMetadata)).Decode(&c); err != nil || c.ID == "" {
		return Client{}, fmt.Errorf("client registration at %s: the answer holds no client_id", asm.RegistrationEndpoint)
	}
	if c.AuthMethod == "" {
		c.AuthMethod = method
		if c.Secret != "" && method == "none" {
			c.AuthMethod = authMethod(asm, true)
		}
	}
	return c, nil
}

// applicationType is the application_type a registration declares
// (OpenID Connect Dynamic Registration, required by the MCP
// specification since SEP-837): "web" for a callback on a public https
// address, "native" for one on loopback, which only a program on the
// person's own machine can receive.
func applicationType(redirect string) string {
	u, err := url.Parse(redirect)
	if err == nil {
		if c, ok := hostClass(u.Hostname()); ok && c == classLoopback {
			return "native"
		}
	}
	return "web"
}

// canonical is the canonical URI of an MCP server (RFC 8707): scheme and
// host lower case, no fragment, no trailing slash.
func canonical(u *url.URL) string {
	c := *u
	c.Scheme = strings.ToLower(c.Scheme)
	c.Host = strings.ToLower(c.Host)
	c.Fragment = ""
	c.RawQuery = ""
	s := c.String()
	return strings.TrimSuffix(s, "/")
}

// unionScope joins two space-separated scopes, each scope once, in order.
func unionScope(a, b string) string {
	out := strings.Fields(a)
	for _, s := range strings.Fields(b) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

func challengeS256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
