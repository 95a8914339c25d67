package oauth

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// GrantStore keeps the grant of one MCP server (and, per user, of one
// user). Load returns nil and no error when there is none.
type GrantStore interface {
	Load(ctx context.Context) (*Grant, error)
	Save(ctx context.Context, g *Grant) error
}

// Authorizer completes an authorization interactively: it has the user
// open p.URL and returns what the redirect brought back.
// An Authorizer that cannot reach a person returns an error (typically
// wrapping [ErrLoginRequired]).
type Authorizer func(ctx context.Context, p *Pending) (Redirect, error)

// ErrLoginRequired means a request needs an authorization that only a
// person can give (run `neobot mcp login`, or open the connect link).
var ErrLoginRequired = errors.New("oauth: login required")

// ScopeError means the server refused a request for want of scope (a 403
// with error="insufficient_scope") and no person was at hand to grant
// more. The grant is not lost: it still opens what it opened before.
type ScopeError struct {
	// Scope is what the next authorization must ask for: the scope held,
	// the scope asked for before, and the scope the server wants now.
	Scope string
	// Held is set when the grant already holds all the scope the server
	// asked for: authorizing again would ask for nothing new, so it
	// cannot help (and a client that kept trying would loop).
	Held bool
}

// Error names the scope the server wants.
func (e *ScopeError) Error() string {
	if e.Held {
		return "oauth: the server refuses the request for want of scope " + e.Scope + ", which the grant already holds"
	}
	return "oauth: the server needs more permission (scope " + e.Scope + ")"
}

// DefaultMaxAuthorizations bounds the authorizations one request may start
// (a first one and a step-up), so a server that keeps refusing tokens
// cannot loop the client.
const DefaultMaxAuthorizations = 2

// refreshAhead is how long before its expiry a token is refreshed.
const refreshAhead = 60 * time.Second

// Transport is an http.RoundTripper that authorizes requests to one MCP
// server: it adds the bearer token, refreshes it before it expires, and on
// a 401 or a 403 insufficient_scope refreshes or authorizes again, then
// repeats the request, a bounded number of times.
type Transport struct {
	// Base sends the requests (default http.DefaultTransport).
	Base http.RoundTripper
	// Flow performs discovery, registration, authorization and refresh.
	Flow *Flow
	// Store keeps the grant.
	Store GrantStore
	// Authorize completes an authorization; nil means requests that need
	// one fail: with a [*ScopeError] after a 403 insufficient_scope (the
	// wider scope is remembered in the grant, see [Grant.StepUp]), with
	// [ErrLoginRequired] otherwise.
	Authorize Authorizer
	// MaxAuthorizations bounds the authorizations per request (default
	// [DefaultMaxAuthorizations]).
	MaxAuthorizations int

	mu sync.Mutex // serializes refreshes and authorizations
}

func (t *Transport) base() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	return http.DefaultTransport
}

// RoundTrip sends req with the grant's bearer token and reacts to the
// server's challenges.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	g, err := t.current(ctx)
	if err != nil {
		return nil, err
	}
	maxAuth := t.MaxAuthorizations
	if maxAuth <= 0 {
		maxAuth = DefaultMaxAuthorizations
	}
	refreshed := false
	for auths := 0; ; {
		resp, err := t.send(req, body, g)
		if err != nil {
			return nil, err
		}
		ch := ParseChallenge(resp.Header)
		stepUp := resp.StatusCode == http.StatusForbidden && ch.Error == "insufficient_scope"
		if resp.StatusCode != http.StatusUnauthorized && !stepUp {
			return resp, nil
		}
		if auths >= maxAuth {
			return resp, nil // the caller sees the refusal
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if !stepUp && !refreshed && g != nil && g.RefreshToken != "" {
			refreshed = true
			if ng, err := t.refresh(ctx, g); err == nil {
				g = ng
				continue
			}
		}
		auths++
		ng, err := t.authorize(ctx, g, ch)
		if err != nil {
			return nil, err
		}
		g = ng
	}
}

func (t *Transport) send(req *http.Request, body []byte, g *Grant) (*http.Response, error) {
	r := req.Clone(req.Context())
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	if g != nil {
		r.Header.Set("Authorization", "Bearer "+g.AccessToken)
	}
	return t.base().RoundTrip(r)
}

// current loads the grant, refreshing it first if it is about to expire.
func (t *Transport) current(ctx context.Context) (*Grant, error) {
	g, err := t.Store.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("oauth: load token: %w", err)
	}
	if g == nil || g.Expiry.IsZero() || g.RefreshToken == "" || t.Flow.now().Add(refreshAhead).Before(g.Expiry) {
		return g, nil
	}
	if ng, err := t.refresh(ctx, g); err == nil {
		return ng, nil
	}
	return g, nil // the server decides; a 401 starts an authorization
}

// refresh renews g unless another request did so meanwhile.
func (t *Transport) refresh(ctx context.Context, g *Grant) (*Grant, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cur, err := t.Store.Load(ctx); err == nil && cur != nil && cur.AccessToken != g.AccessToken {
		return cur, nil
	}
	ng := *g
	if err := t.Flow.Refresh(ctx, &ng); err != nil {
		return nil, err
	}
	if err := t.Store.Save(ctx, &ng); err != nil {
		return nil, fmt.Errorf("oauth: save token: %w", err)
	}
	return &ng, nil
}

// authorize runs a new authorization for the challenge, unless another
// request already replaced g.
func (t *Transport) authorize(ctx context.Context, g *Grant, ch Challenge) (*Grant, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cur, err := t.Store.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("oauth: load token: %w", err)
	}
	if cur != nil && (g == nil || cur.AccessToken != g.AccessToken) && ch.Error != "insufficient_scope" {
		return cur, nil
	}
	if t.Authorize == nil {
		if ch.Error == "insufficient_scope" {
			return nil, t.remember(ctx, cmp.Or(cur, g), ch)
		}
		return nil, ErrLoginRequired
	}
	have := ""
	if g != nil {
		have = g.Wants()
	}
	p, err := t.Flow.Begin(ctx, ch, have)
	if err != nil {
		return nil, err
	}
	rd, err := t.Authorize(ctx, p)
	if err != nil {
		return nil, err
	}
	ng, err := t.Flow.Finish(ctx, p, rd)
	if err != nil {
		return nil, err
	}
	if err := t.Store.Save(ctx, ng); err != nil {
		return nil, fmt.Errorf("oauth: save token: %w", err)
	}
	return ng, nil
}

// remember records in the stored grant the scope a step-up challenge asks
// for, so the next authorization asks for it (with what is held), and
// returns the *ScopeError that says so. t.mu is held.
func (t *Transport) remember(ctx context.Context, g *Grant, ch Challenge) error {
	if g == nil {
		return &ScopeError{Scope: ch.Scope}
	}
	if ch.Scope != "" && unionScope(g.Scope, ch.Scope) == unionScope(g.Scope, "") {
		return &ScopeError{Scope: ch.Scope, Held: true}
	}
	want := unionScope(g.Wants(), ch.Scope)
	if want != g.Wants() {
		ng := *g
		ng.StepUp = want
		if err := t.Store.Save(ctx, &ng); err != nil {
			return fmt.Errorf("oauth: save token: %w", err)
		}
	}
	return &ScopeError{Scope: want}
}

// MemoryStore is a [GrantStore] in memory, for programs that authorize
// anew each run (the conformance client) and for tests.
type MemoryStore struct {
	mu sync.Mutex
	g  *Grant
}

// Load returns a copy of the grant, or nil.
func (s *MemoryStore) Load(context.Context) (*Grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.g == nil {
		return nil, nil
	}
	g := *s.g
	return &g, nil
}

// Save keeps a copy of g.
func (s *MemoryStore) Save(_ context.Context, g *Grant) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := *g
	s.g = &c
	return nil
}
