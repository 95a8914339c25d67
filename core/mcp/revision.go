package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sync"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// StatelessProtocolVersion is the revision neobot offers a
// streamable-HTTP server first: 2026-07-28, where HTTP is stateless (no
// initialize, no session), the client is described by server/discover
// and by the _meta of every request, and every POST carries the
// MCP-Protocol-Version, Mcp-Method and Mcp-Name headers. A server that
// does not speak it is met in [ProtocolVersion], with the handshake, as
// before (see dialHTTP).
const StatelessProtocolVersion = mcp.ProtocolVersion20260728

// errNotStateless is the handshake the stateless attempt refuses to send:
// a server that did not answer server/discover gets its initialize on a
// connection of its own (dialHTTP).
var errNotStateless = errors.New("the server does not speak the stateless revision")

// handshake is what every connection does after its transport is made:
// the client's options, what initialize (or server/discover) declares,
// and where the server's notifications go.
type handshake struct {
	opts   []client.ClientOption
	init   mcp.InitializeRequest
	notify func(mcp.JSONRPCNotification)
	// schemas, when set, keeps the tools' schemas as the server sent
	// them (HTTP transports made by dialHTTP).
	schemas *rawSchemas
}

// start makes a client on tr, starts it and negotiates version with the
// server; the client is closed on failure. ctx bounds the negotiation;
// the client lives until Close.
func (h handshake) start(ctx context.Context, tr transport.Interface, version string) (*client.Client, error) {
	// A call answered with a task is polled to its end (tasks.go).
	c := client.NewClient(tasksTransport(tr), append([]client.ClientOption{client.WithProtocolVersion(version)}, h.opts...)...)
	if err := c.Start(context.WithoutCancel(ctx)); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("start: %w", handshakeErr(ctx, err))
	}
	if h.notify != nil {
		c.OnNotification(h.notify)
	}
	init := h.init
	init.Params.ProtocolVersion = version
	if _, err := c.Initialize(ctx, init); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("initialize: %w", handshakeErr(ctx, err))
	}
	return c, nil
}

// dialHTTP connects to the streamable-HTTP server at rawURL in the newest
// revision it speaks. It first asks server/discover at
// StatelessProtocolVersion, on a transport without the standalone GET
// stream (that revision has none). A server whose answer lists that
// version among its supportedVersions is spoken to statelessly; one that
// says the version is unsupported but lists it
// after all (a server may refuse the first request it sees) is asked once
// more. A server that answers the probe with anything else (a JSON-RPC
// error such as "method not found", a 4xx such as "missing session") is a
// 2025-11-25 or 2025-03-26 server: it is connected afresh exactly as
// before this revision existed, initialize at ProtocolVersion on a
// transport with the GET stream, so its notifications, server-to-client
// requests and SSE resumption are unchanged. A probe that never reached
// the server (refused by the OAuth layer, the network, or ctx) fails the
// dial as it is: trying the handshake would fail the same way, twice.
func dialHTTP(ctx context.Context, rawURL string, opts []transport.StreamableHTTPCOption, h handshake) (*client.Client, error) {
	for range 2 {
		tr, err := transport.NewStreamableHTTP(rawURL, opts...)
		if err != nil {
			return nil, err
		}
		probe := &httpTap{StreamableHTTP: tr, schemas: h.schemas, stateless: true}
		c, err := h.start(ctx, probe, StatelessProtocolVersion)
		if err == nil {
			return c, nil
		}
		why := probe.answer()
		if why == nil {
			return nil, err
		}
		if !answered(ctx, why) {
			return nil, fmt.Errorf("initialize: %w", handshakeErr(ctx, why))
		}
		var unsupported mcp.UnsupportedProtocolVersionError
		if errors.As(why, &unsupported) && slices.Contains(unsupported.Supported, StatelessProtocolVersion) {
			continue // the version it refused is one it lists: ask again, once
		}
		break
	}
	tr, err := transport.NewStreamableHTTP(rawURL, append(slices.Clip(opts), transport.WithContinuousListening())...)
	if err != nil {
		return nil, err
	}
	return h.start(ctx, &httpTap{StreamableHTTP: tr, schemas: h.schemas}, ProtocolVersion)
}

// answered reports whether err, what the server/discover probe came back
// with, is the server's own answer (so the handshake may be tried) rather
// than a failure to reach it: ctx ended, the OAuth layer or the network
// refused the request (a *url.Error, unless only the probe's own time
// limit ran out), or the server wants authorization it was not given.
func answered(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var auth *transport.AuthorizationRequiredError
	if errors.As(err, &auth) {
		return false
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Timeout()
	}
	return true
}

// httpTap is a streamable-HTTP transport that keeps the tools/list
// schemas as sent. For the stateless attempt it also records how the
// server answered server/discover, and refuses to send initialize:
// mcp-go falls back to the handshake on the same connection when the
// probe fails, and a 2025-11-25 server must get a connection with the
// GET stream instead (dialHTTP).
type httpTap struct {
	*transport.StreamableHTTP
	schemas   *rawSchemas
	stateless bool
	mu        sync.Mutex
	probe     error
}

// SendRequest sends req, unless it is the stateless attempt's
// initialize.
func (t *httpTap) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	if t.stateless && req.Method == string(mcp.MethodInitialize) {
		return nil, errNotStateless
	}
	resp, err := t.StreamableHTTP.SendRequest(ctx, req)
	t.schemas.record(req, resp)
	if req.Method == string(mcp.MethodServerDiscover) {
		why := err
		switch {
		case err != nil:
		case resp == nil:
			why = errors.New("server/discover: no response")
		case resp.Error != nil:
			why = resp.Error.AsError()
		case !lists(resp.Result, StatelessProtocolVersion):
			// An answer that does not list the version (a server of an
			// older revision answering every unknown method with an
			// empty result) is not 2026-07-28 (its discover result
			// lists the versions the server supports).
			why = errNoVersion
			resp, err = nil, errNoVersion
		}
		t.mu.Lock()
		t.probe = why
		t.mu.Unlock()
	}
	return resp, err
}

// errNoVersion is a server/discover result that does not list
// StatelessProtocolVersion among the server's supportedVersions.
var errNoVersion = errors.New("server/discover: the result does not list " + StatelessProtocolVersion + " among supportedVersions")

// lists reports whether a server/discover result lists version among its
// supportedVersions.
func lists(result json.RawMessage, version string) bool {
	var r struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	return json.Unmarshal(result, &r) == nil && slices.Contains(r.SupportedVersions, version)
}

// answer is how the last server/discover failed; nil if it did not, or
// was never sent.
func (t *httpTap) answer() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.probe
}

// stateless reports whether c speaks the stateless revision.
func stateless(c *client.Client) bool {
	return mcp.IsModernProtocol(c.ProtocolVersion())
}
