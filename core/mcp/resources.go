package mcp

import (
	"context"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Prompt is a prompt template a server offers (prompts/list).
type Prompt struct {
	Name        string
	Description string
	// Arguments names the template's arguments, required ones marked
	// with a trailing "*".
	Arguments []string
}

// ErrNoResources reports a server that offers no resources.
var ErrNoResources = errors.New("the server offers no resources")

// connIn returns the connection that serves alias at place, and the
// function that gives it back; the same states as CallIn refuse.
func (m *Manager) connIn(ctx context.Context, place Place, alias, what string) (*conn, func(), error) {
	s := m.byAlias[alias]
	if s == nil {
		return nil, nil, fmt.Errorf("mcp: %s on %s: %w", what, alias, ErrUnknownServer)
	}
	s.mu.RLock()
	st, c, problem := s.state, s.conn, s.problem
	s.mu.RUnlock()
	switch st {
	case StateUp:
	case StateRestarting:
		return nil, nil, fmt.Errorf("mcp: %s on %s: %w (%w)", what, alias, ErrUnavailable, ErrNotSent)
	default:
		return nil, nil, fmt.Errorf("mcp: %s on %s: %w: %s", what, alias, ErrServerDown, problem)
	}
	if s.pool == nil {
		return c, func() {}, nil
	}
	pr, err := s.pool.acquire(ctx, place)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("mcp: %s on %s: %w", what, alias, err)
		}
		return nil, nil, fmt.Errorf("mcp: %s on %s: %w: %w", what, alias, ErrServerDown, err)
	}
	return pr.conn, func() { s.pool.release(pr) }, nil
}

// ErrUnknownServer reports an alias the manifest does not declare.
var ErrUnknownServer = errors.New("no such server in the manifest")

// ReadResource reads the resource at uri from server alias, for a call
// made at place (resources/read). Its contents come back as resource
// items. A server that declares no resources capability is not asked
// (ErrNoResources); a JSON-RPC error from the server (no such resource)
// comes back as a Result with IsError set, for the model to see; the
// other errors are CallIn's.
func (m *Manager) ReadResource(ctx context.Context, place Place, alias, uri string) (Result, error) {
	c, release, err := m.connIn(ctx, place, alias, "read "+uri)
	if err != nil {
		return Result{}, err
	}
	defer release()
	if c.client.GetServerCapabilities().Resources == nil {
		return Result{}, fmt.Errorf("mcp: read %s on %s: %w", uri, alias, ErrNoResources)
	}
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := c.client.ReadResource(ctx, req)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return Result{}, fmt.Errorf("mcp: read %s on %s: %w", uri, alias, ctx.Err())
	case isTransport(err):
		return Result{}, fmt.Errorf("mcp: read %s on %s: %w: %v", uri, alias, ErrUnavailable, err)
	default:
		return ErrorResult(fmt.Sprintf("reading %s failed: %v", uri, err)), nil
	}
	out := Result{Content: make([]Content, 0, len(res.Contents))}
	for _, rc := range res.Contents {
		if item, ok := fromContent(mcp.EmbeddedResource{Type: "resource", Resource: rc}); ok {
			out.Content = append(out.Content, item)
		}
	}
	return out, nil
}

func isTransport(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) || errors.Is(err, transport.ErrTransportClosed)
}

// Prompts lists the prompts of server alias (prompts/list), nil when the
// server declares no prompts capability. A server that runs per place is
// asked in its first running place's stead, so it is not asked at all.
func (m *Manager) Prompts(ctx context.Context, alias string) ([]Prompt, error) {
	s := m.byAlias[alias]
	if s == nil {
		return nil, fmt.Errorf("mcp: prompts of %s: %w", alias, ErrUnknownServer)
	}
	if s.pool != nil {
		return nil, nil
	}
	c, release, err := m.connIn(ctx, Place{}, alias, "list prompts")
	if err != nil {
		return nil, err
	}
	defer release()
	if c.client.GetServerCapabilities().Prompts == nil {
		return nil, nil
	}
	res, err := c.client.ListPrompts(ctx, mcp.ListPromptsRequest{})
	if err != nil {
		return nil, fmt.Errorf("mcp: prompts of %s: %w", alias, err)
	}
	out := make([]Prompt, 0, len(res.Prompts))
	for _, p := range res.Prompts {
		pr := Prompt{Name: p.Name, Description: p.Description}
		for _, a := range p.Arguments {
			name := a.Name
			if a.Required {
				name += "*"
			}
			pr.Arguments = append(pr.Arguments, name)
		}
		out = append(out, pr)
	}
	return out, nil
}

// OffersResources reports whether server alias declared the resources
// capability when it started; false for a server not up, and for one
// that runs per place (its processes start on demand).
func (m *Manager) OffersResources(alias string) bool {
	s := m.byAlias[alias]
	if s == nil || s.pool != nil {
		return false
	}
	s.mu.RLock()
	c := s.conn
	s.mu.RUnlock()
	return c != nil && c.client.GetServerCapabilities().Resources != nil
}
