package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
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

// NotLoggedInError means a server with auth has no grant yet.
type NotLoggedInError struct{ Alias string }

// Error says what to run.
func (e *NotLoggedInError) Error() string {
	return fmt.Sprintf("not logged in: run `neobot mcp login %s` and open the link it prints", e.Alias)
}

// auth is the manager's OAuth state.
type auth struct {
	opts   OAuth
	sealer *oauth.Sealer

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
func (m *Manager) Login(ctx context.Context, alias string) (string, error) {
	return m.login(ctx, alias, "")
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
		return "", errors.New("mcp: login: no callback URL: set NEO_HEALTH_ADDR (the callback is served there) and NEO_PUBLIC_URL if browsers reach it at another address")
	}
	ch, err := m.probe(ctx, s.spec)
	if err != nil {
		return "", fmt.Errorf("mcp: login %s: %w", alias, err)
	}
	have := ""
	if g, err := (grants{a: m.auth, key: tokenKey(alias, user)}).Load(ctx); err == nil && g != nil {
		have = g.Scope
	}
	p, err := m.flow(s.spec).Begin(ctx, ch, have)
	if err != nil {
		return "", fmt.Errorf("mcp: login %s: %w", alias, err)
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
// challenge (the scope it wants, where its metadata is). A server that
// does not answer 401 gives the zero challenge: discovery then uses the
// well-known locations.
func (m *Manager) probe(ctx context.Context, spec ServerSpec) (oauth.Challenge, error) {
	body := []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + ProtocolVersion + `","capabilities":{},"clientInfo":{"name":"neobot","version":"` + m.clientVersion + `"}}}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, spec.URL, bytes.NewReader(body))
	if err != nil {
		return oauth.Challenge{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	base := m.auth.opts.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		return oauth.Challenge{}, fmt.Errorf("reach %s: %w", spec.URL, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		return oauth.Challenge{}, nil
	}
	return oauth.ParseChallenge(resp.Header), nil
}

// ErrUnknownLogin means a callback's state matches no login in progress:
// it expired, was used, or never was.
var ErrUnknownLogin = errors.New("this login link has expired or was already used; start the login again")

// FinishLogin completes the login whose state the callback carries: it
// exchanges the code, seals and stores the grant, and starts the server
// if it was waiting for one. It returns the server's alias and the
// person the grant is for ("" for the operator).
func (m *Manager) FinishLogin(ctx context.Context, state, code string) (alias, user string, err error) {
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
	g, err := m.flow(s.spec).Finish(ctx, pl.p, code, state)
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

// notLoggedIn reports whether err means the server needs a login: no
// grant, or one the server refuses and that cannot be refreshed.
func notLoggedIn(err error) bool {
	var nl *NotLoggedInError
	return errors.As(err, &nl) || errors.Is(err, oauth.ErrLoginRequired)
}

// loginLost answers a call the server refused because its grant is dead
// (revoked, or expired past refreshing). A person's grant is deleted and
// they are offered the connect link again; the operator's connection is
// dropped, and the server waits for `neobot mcp login`.
func (m *Manager) loginLost(ctx context.Context, s *entry, c *conn, place Place, alias, tool string) (Result, error) {
	if s.spec.Auth == AuthPerUser {
		_ = m.auth.opts.Tokens.DeleteMCPToken(ctx, tokenKey(alias, place.UserValue()))
		c.markLost()
		if err := m.connected(ctx, s, place); err != nil {
			return Result{}, fmt.Errorf("mcp: call %s/%s: %w", alias, tool, err)
		}
	}
	c.markLost()
	return Result{}, fmt.Errorf("mcp: call %s/%s: %w (%w): %w", alias, tool, ErrServerDown, ErrNotSent, &NotLoggedInError{Alias: alias})
}
