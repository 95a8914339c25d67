package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/neobot/neobot/core/mcp/oauth"
)

// TokenStore keeps the sealed OAuth grants of servers with auth, by key.
// The values are opaque: the manager seals them before they reach the
// store. MCPToken returns nil and no error when the key holds none.
type TokenStore interface {
	MCPToken(ctx context.Context, key string) ([]byte, error)
	PutMCPToken(ctx context.Context, key string, sealed []byte) error
	DeleteMCPToken(ctx context.Context, key string) error
}

// OAuth configures the OAuth client of the servers with [ServerSpec.Auth].
type OAuth struct {
	// Tokens keeps the grants.
	Tokens TokenStore
	// Key seals the grants (AES-256-GCM, [oauth.KeySize] bytes).
	Key []byte
	// RedirectURL is the callback the authorization server sends people
	// back to, served by [Manager.FinishLogin]'s caller.
	RedirectURL string
	// ClientMetadataURL, when set, is the HTTPS URL of neobot's client ID
	// metadata document.
	ClientMetadataURL string
	// HTTPClient sends discovery, registration and token requests
	// (default http.DefaultClient).
	HTTPClient *http.Client
	// Base carries the requests to the servers themselves (default
	// http.DefaultTransport).
	Base http.RoundTripper
	// Links binds each per_user login to the person it is for (see
	// [Binder]); without it no per_user login starts.
	Links Binder
}

// loginTTL is how long a started login waits for its callback.
const loginTTL = 15 * time.Minute

// NotLoggedInError means a server with auth has no usable grant: none
// yet, or (Lost) one the server refused and that could not be refreshed.
type NotLoggedInError struct {
	Alias string
	// Lost is set when neobot held a grant and the server refused it
	// (revoked, or expired past refreshing).
	Lost bool
}

// Error says what happened and what to run.
func (e *NotLoggedInError) Error() string {
	if e.Lost {
		return fmt.Sprintf("the login was revoked or has expired: run `neobot mcp login %s` and open the link it prints", e.Alias)
	}
	return fmt.Sprintf("not logged in: run `neobot mcp login %s` and open the link it prints", e.Alias)
}

// PermissionError means a server refused a call (HTTP 403
// insufficient_scope) because the operator's grant lacks a scope. The
// grant is kept; the next login asks for Scope. It matches
// [ErrNeedsPermission].
type PermissionError struct {
	Alias string
	// Scope is what the next login asks for: the scope held and the
	// scope the server asked for.
	Scope string
	// Held is set when the grant already holds all the scope the server
	// asked for: logging in again cannot help, so no login or link is
	// offered (Scope is then the scope the server asked for).
	Held bool
}

// Error names the scope and what to run.
func (e *PermissionError) Error() string {
	if e.Held {
		return fmt.Sprintf("refuses the call for want of permission (%s) that neobot's grant already holds: logging in again would not help; the server's operator must look at it", e.Scope)
	}
	return fmt.Sprintf("needs more permission (%s): run `neobot mcp login %s` and open the link it prints", e.Scope, e.Alias)
}

// Is makes a PermissionError an [ErrNeedsPermission].
func (e *PermissionError) Is(target error) bool { return target == ErrNeedsPermission }

// LoginError means no login link can be made for a server: its OAuth
// setup could not be discovered or used. Err says why; trying again
// does not help until the server or the manifest changes.
type LoginError struct {
	Alias string
	Err   error
}

// Error says which server and why.
func (e *LoginError) Error() string {
	return fmt.Sprintf("no login to %s can be started: %s", e.Alias, e.Reason())
}

// Reason says why, in a sentence without the package prefix.
func (e *LoginError) Reason() string { return strings.TrimPrefix(e.Err.Error(), "oauth: ") }

// Unwrap returns the cause.
func (e *LoginError) Unwrap() error { return e.Err }

// auth is the manager's OAuth state.
type auth struct {
	opts   OAuth
	sealer *oauth.Sealer
	// clients are the dynamic registrations, per issuer.
	clients oauth.Registrations

	mu      sync.Mutex
	pending map[string]pendingLogin // by state
}

type pendingLogin struct {
	alias, user string
	p           *oauth.Pending
	expires     time.Time
}

func newAuth(o *OAuth) (*auth, error) {
	if o == nil {
		return nil, nil
	}
	if o.Tokens == nil {
		return nil, errors.New("mcp: OAuth needs a token store")
	}
	s, err := oauth.NewSealer(o.Key)
	if err != nil {
		return nil, fmt.Errorf("mcp: %w", err)
	}
	return &auth{opts: *o, sealer: s, pending: map[string]pendingLogin{}}, nil
}

// TokenKey is the [TokenStore] key of a server's grant: the operator's
// (user ""), or one person's (user as [Place.UserValue] writes it, such
// as "slack.T0123.U0456").
func TokenKey(alias, user string) string { return tokenKey(alias, user) }

// tokenKey is the store key of a server's grant: the operator's, or one
// person's.
func tokenKey(alias, user string) string {
	if user == "" {
		return "op/" + alias
	}
	return "user/" + alias + "/" + user
}

// grants is a [oauth.GrantStore] over the sealed token store.
type grants struct {
	a   *auth
	key string
}

func (g grants) Load(ctx context.Context) (*oauth.Grant, error) {
	sealed, err := g.a.opts.Tokens.MCPToken(ctx, g.key)
	if err != nil || sealed == nil {
		return nil, err
	}
	plain, err := g.a.sealer.Open(sealed, []byte(g.key))
	if err != nil {
		return nil, err
	}
	var gr oauth.Grant
	if err := json.Unmarshal(plain, &gr); err != nil {
		return nil, fmt.Errorf("decode grant: %w", err)
	}
	return &gr, nil
}

func (g grants) Save(ctx context.Context, gr *oauth.Grant) error {
	plain, err := json.Marshal(gr)
	if err != nil {
		return err
	}
	return g.a.opts.Tokens.PutMCPToken(ctx, g.key, g.a.sealer.Seal(plain, []byte(g.key)))
}

// flow is the OAuth flow of spec's server.
func (m *Manager) flow(spec ServerSpec) *oauth.Flow {
	f := &oauth.Flow{
		ServerURL:         spec.URL,
		HTTPClient:        m.auth.opts.HTTPClient,
		RedirectURI:       m.auth.opts.RedirectURL,
		ClientMetadataURL: m.auth.opts.ClientMetadataURL,
		ClientName:        "neobot",
		Now:               m.clock.Now,
		Registrations:     &m.auth.clients,
	}
	if o := spec.OAuth; o != nil {
		f.Scope = o.Scope
		f.Client.ID = o.ClientID
		if ref := envRefRe.FindStringSubmatch(o.ClientSecret); ref != nil {
			lookup := m.lookup
			f.Client.Secret, _ = lookup(ref[1])
		}
	}
	return f
}

// authClient is the HTTP client of an http server with auth, for user's
// grant ("" is the operator's). It fails with a NotLoggedInError when
// there is no grant to start with.
func (m *Manager) authClient(ctx context.Context, spec ServerSpec, user string) (*http.Client, error) {
	if m.auth == nil {
		return nil, fmt.Errorf("server %q has auth %q but NEO_SECRET_KEY is not set: set it (openssl rand -hex 32) and restart", spec.Alias, spec.Auth)
	}
	store := grants{a: m.auth, key: tokenKey(spec.Alias, user)}
	g, err := store.Load(ctx)
	if err != nil {
		return nil, err
	}
	if g == nil {
		return nil, &NotLoggedInError{Alias: spec.Alias}
	}
	return &http.Client{Transport: &oauth.Transport{Base: m.auth.opts.Base, Flow: m.flow(spec), Store: store}}, nil
}

// Login starts the operator's authorization to the server alias and
// returns the URL to open; the authorization server's redirect to the
// callback completes it ([Manager.FinishLogin]).
// A login that cannot be started leaves its reason with a server waiting
// for one, so calls say why rather than that no one logged in.
func (m *Manager) Login(ctx context.Context, alias string) (string, error) {
	u, err := m.login(ctx, alias, "")
	var le *LoginError
	if s := m.byAlias[alias]; s != nil && errors.As(err, &le) {
		s.mu.Lock()
		if s.authErr != nil {
			s.authErr, s.problem = le, le.Error()
		}
		s.mu.Unlock()
	}
	return u, err
}

func (m *Manager) login(ctx context.Context, alias, user string) (string, error) {
	s := m.byAlias[alias]
	if s == nil {
		return "", fmt.Errorf("mcp: login: no server %q in the manifest", alias)
	}
	if s.spec.Auth == "" {
		return "", fmt.Errorf("mcp: login: server %q has no auth in the manifest; add \"auth\": \"oauth\"", alias)
	}
	if s.spec.Auth == AuthPerUser && user == "" {
		return "", fmt.Errorf("mcp: login: server %q is per_user: each person connects their own account through the link Neo sends them when they first need it", alias)
	}
	if m.auth == nil {
		return "", errors.New("mcp: login: NEO_SECRET_KEY is not set; set it (openssl rand -hex 32) and restart")
	}
	if m.auth.opts.RedirectURL == "" {
		return "", fmt.Errorf("mcp: %w", &LoginError{Alias: alias, Err: errors.New("no callback URL: set NEO_HEALTH_ADDR (the callback is served there) and NEO_PUBLIC_URL if browsers reach it at another address")})
	}
	ch, status, err := m.probe(ctx, s.spec)
	if err != nil {
		return "", fmt.Errorf("mcp: %w", &LoginError{Alias: alias, Err: err})
	}
	// A step-up the server asked for earlier is asked for now, with the
	// scope held.
	have := ""
	if g, err := (grants{a: m.auth, key: tokenKey(alias, user)}).Load(ctx); err == nil && g != nil {
		have = g.Wants()
	}
	p, err := m.flow(s.spec).Begin(ctx, ch, have)
	if err != nil {
		if status != http.StatusUnauthorized {
			err = fmt.Errorf("%w (the server answered HTTP %d without asking for authorization, so it may not use OAuth at all: if so, remove \"auth\" from its manifest entry)", err, status)
		}
		return "", fmt.Errorf("mcp: %w", &LoginError{Alias: alias, Err: err})
	}
	now := m.clock.Now()
	m.auth.mu.Lock()
	for k, pl := range m.auth.pending {
		if now.After(pl.expires) {
			delete(m.auth.pending, k)
		}
	}
	m.auth.pending[p.State] = pendingLogin{alias: alias, user: user, p: p, expires: now.Add(loginTTL)}
	m.auth.mu.Unlock()
	return p.URL, nil
}

// probe sends the server an unauthorized initialize to read its
// challenge (the scope it wants, where its metadata is), and returns it
// with the HTTP status. A server that lets an initialize through without
// a token (as one may, asking for one only from the first real request)
// is asked for its tools too. A server that answers neither with a 401
// gives the zero challenge: discovery then uses the well-known
// locations.
func (m *Manager) probe(ctx context.Context, spec ServerSpec) (oauth.Challenge, int, error) {
	first := 0
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + ProtocolVersion + `","capabilities":{},"clientInfo":{"name":"neobot","version":"` + m.clientVersion + `"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
	} {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, spec.URL, strings.NewReader(body))
		if err != nil {
			return oauth.Challenge{}, 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", ProtocolVersion)
		base := m.auth.opts.Base
		if base == nil {
			base = http.DefaultTransport
		}
		resp, err := base.RoundTrip(req)
		if err != nil {
			return oauth.Challenge{}, 0, fmt.Errorf("reach %s: %w", spec.URL, err)
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized {
			return oauth.ParseChallenge(resp.Header), resp.StatusCode, nil
		}
		if first == 0 {
			first = resp.StatusCode
		}
	}
	return oauth.Challenge{}, first, nil
}

// ErrUnknownLogin means a callback's state matches no login in progress:
// it expired, was used, or never was.
var ErrUnknownLogin = errors.New("this login link has expired or was already used; start the login again")

// FinishLogin completes the login whose state the callback carries: it
// checks the callback's iss (RFC 9207, "" when it carries none),
// exchanges the code, seals and stores the grant, and starts the server
// if it was waiting for one. It returns the server's alias and the
// person the grant is for ("" for the operator).
func (m *Manager) FinishLogin(ctx context.Context, state, code, iss string) (alias, user string, err error) {
	if m.auth == nil {
		return "", "", ErrUnknownLogin
	}
	m.auth.mu.Lock()
	pl, ok := m.auth.pending[state]
	delete(m.auth.pending, state) // single use, whatever happens next
	m.auth.mu.Unlock()
	if !ok || m.clock.Now().After(pl.expires) {
		return "", "", ErrUnknownLogin
	}
	if err := m.proven(pl.user, state); err != nil {
		return pl.alias, pl.user, err
	}
	s := m.byAlias[pl.alias]
	g, err := m.flow(s.spec).Finish(ctx, pl.p, oauth.Redirect{Code: code, State: state, Iss: iss})
	if err != nil {
		return pl.alias, pl.user, fmt.Errorf("mcp: login %s: %w", pl.alias, err)
	}
	if err := (grants{a: m.auth, key: tokenKey(pl.alias, pl.user)}).Save(ctx, g); err != nil {
		return pl.alias, pl.user, fmt.Errorf("mcp: login %s: save token: %w", pl.alias, err)
	}
	if pl.user == "" {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
	m.log.Info().Str("server", pl.alias).Bool("per_user", pl.user != "").Msg("mcp server login completed")
	return pl.alias, pl.user, nil
}

// Logout revokes at the authorization server (RFC 7009, where it has a
// revocation endpoint) and deletes the grant neobot holds for the server
// alias: the operator's, or user's when user is set. Calls that need it fail (or,
// per user, offer the connect link again) until the next login.
func (m *Manager) Logout(ctx context.Context, alias, user string) error {
	s := m.byAlias[alias]
	if s == nil {
		return fmt.Errorf("mcp: logout: no server %q in the manifest", alias)
	}
	if m.auth == nil {
		return errors.New("mcp: logout: NEO_SECRET_KEY is not set, so no token is stored")
	}
	store := grants{a: m.auth, key: tokenKey(alias, user)}
	if g, err := store.Load(ctx); err == nil && g != nil {
		// Best effort: the server may be down, or the token dead already;
		// neobot's copy goes either way.
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if err := m.flow(s.spec).Revoke(rctx, g); err != nil {
			m.log.Warn().Str("server", alias).Err(err).Msg("mcp logout: the authorization server did not revoke the token; neobot's copy is deleted anyway")
		}
		cancel()
	}
	if err := m.auth.opts.Tokens.DeleteMCPToken(ctx, tokenKey(alias, user)); err != nil {
		return fmt.Errorf("mcp: logout %s: %w", alias, err)
	}
	m.log.Info().Str("server", alias).Bool("per_user", user != "").Msg("mcp server logged out")
	return nil
}

// authFailure is the reason an operator's server cannot start or answer
// for want of a login, if err is one: no grant, a grant the server
// refused (lost), or one without the scope it asks for.
func authFailure(alias string, err error) error {
	var nl *NotLoggedInError
	var se *oauth.ScopeError
	switch {
	case errors.As(err, &nl):
		return nl
	case errors.Is(err, oauth.ErrLoginRequired):
		return &NotLoggedInError{Alias: alias, Lost: true}
	case errors.As(err, &se):
		return &PermissionError{Alias: alias, Scope: se.Scope, Held: se.Held}
	}
	return nil
}

// waitReason is why a server waits for a login after an attempt to
// start it failed with why (see authFailure), prev being the reason so
// far: a failed login's reason outlives the retries that find no grant,
// until a login succeeds or the server comes up.
func waitReason(prev, why error) error {
	var nl *NotLoggedInError
	if _, failed := prev.(*LoginError); failed && errors.As(why, &nl) && !nl.Lost {
		return prev
	}
	return why
}

// refused answers a call the server refused for want of a grant, if err
// says so: a dead grant (revoked, or expired past refreshing) or one
// without the scope the call needs (403 insufficient_scope). A narrow
// grant is kept, and the next login asks for the wider scope; a dead one
// drops the connection, and a person's is deleted. A person is offered
// their connect link; the operator's server says to run `neobot mcp
// login`. c is nil when the refusal came while connecting. ok is false
// for any other err.
func (m *Manager) refused(ctx context.Context, s *entry, c *conn, place Place, tool string, err error) (_ Result, _ error, ok bool) {
	why := authFailure(s.spec.Alias, err)
	if why == nil {
		return Result{}, nil, false
	}
	alias := s.spec.Alias
	pe, narrow := why.(*PermissionError)
	if !narrow && c != nil {
		c.markLost()
	}
	if s.spec.Auth != AuthPerUser || narrow && pe.Held {
		if narrow {
			return Result{}, fmt.Errorf("mcp: call %s/%s: %w (%w)", alias, tool, why, ErrNotSent), true
		}
		return Result{}, fmt.Errorf("mcp: call %s/%s: %w (%w): %w", alias, tool, ErrServerDown, ErrNotSent, why), true
	}
	user := place.UserValue()
	if !narrow {
		_ = m.auth.opts.Tokens.DeleteMCPToken(ctx, tokenKey(alias, user))
	}
	// The person's link, bound to them like their first one: a step-up
	// or a reconnection link forwarded to someone else connects nobody.
	u, err := m.personalLink(ctx, alias, place)
	if err != nil {
		return Result{}, fmt.Errorf("mcp: call %s/%s: %w (%w)", alias, tool, err, ErrNotSent), true
	}
	ce := &ConnectError{Alias: alias, URL: u, Lost: !narrow}
	if narrow {
		ce.Scope = pe.Scope
	}
	return Result{}, fmt.Errorf("mcp: call %s/%s: %w (%w)", alias, tool, ce, ErrNotSent), true
}
