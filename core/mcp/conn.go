package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// ProtocolVersion is the MCP protocol version neobot asks for in the
// initialize handshake: over stdio and in-process always, and over
// streamable HTTP when the server does not speak
// [StatelessProtocolVersion]. Pinning a version that uses the handshake
// skips mcp-go's server/discover probe on stdio, which can stall a start
// by five seconds on servers that predate it.
const ProtocolVersion = mcp.ProtocolVersion20251125

// conn is one live connection to one server instance. A restart replaces
// the conn.
type conn struct {
	client *client.Client
	proc   *process // stdio only
	// lost is closed when the connection is known to be dead: the process
	// exited, or a call failed at the transport.
	lost     chan struct{}
	lostOnce sync.Once
	// calls are the tool calls in flight, for the server's questions.
	calls calls
	// schemas are the tools' input schemas as the server sent them.
	schemas *rawSchemas
	// stopListen closes the subscriptions/listen stream of a stateless
	// connection; nil when none is open.
	stopListen func()
}

func (c *conn) markLost() { c.lostOnce.Do(func() { close(c.lost) }) }

// close ends the connection and, for stdio, the process group, and waits
// for both.
func (c *conn) close(grace time.Duration) error {
	if c.stopListen != nil {
		c.stopListen()
	}
	var err error
	if c.client != nil {
		err = c.client.Close()
	}
	if c.proc != nil {
		c.proc.stop(grace)
		err = nil // closing stdin of a dead child is not a failure
	}
	c.markLost()
	return err
}

func (c *conn) pid() int {
	if c.proc == nil {
		return 0
	}
	return c.proc.pid
}

// connect starts one server instance, performs the handshake and lists
// its tools. ctx bounds all of it; the connection itself outlives ctx.
func (m *Manager) connect(ctx context.Context, s *entry) (*conn, []Tool, error) {
	return m.connectSpec(ctx, s.spec, placeValues{}, func() {
		select {
		case s.relist <- struct{}{}:
		default: // a re-list is already pending
		}
	})
}

// connectSpec is connect for spec with its place placeholders standing for
// vals; listChanged is called when the server says its tools changed.
func (m *Manager) connectSpec(ctx context.Context, spec ServerSpec, vals placeValues, listChanged func()) (*conn, []Tool, error) {
	spec = vals.expandSpec(spec)
	c := &conn{lost: make(chan struct{}), schemas: &rawSchemas{}}
	hs := handshake{opts: m.elicitOptions(spec.Alias, c), schemas: c.schemas, notify: func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			listChanged()
		}
	}}
	hs.init.Params.ClientInfo = mcp.Implementation{Name: "neobot", Version: m.clientVersion}
	hs.init.Params.Capabilities.Extensions = tasksCapability()
	if m.elicit != nil {
		hs.init.Params.Capabilities.Elicitation = elicitCapability()
	}
	fail := func(err error) (*conn, []Tool, error) {
		_ = c.close(m.grace)
		if c.proc != nil {
			if line := c.proc.lastStderr(); line != "" {
				return nil, nil, fmt.Errorf("%w (server stderr: %s)", err, line)
			}
		}
		return nil, nil, err
	}
	var err error
	switch spec.Transport {
	case TransportStdio:
		for _, d := range spec.CreateDirs {
			if err := os.MkdirAll(d, 0o750); err != nil {
				return nil, nil, fmt.Errorf("create directory %s: %w", d, err)
			}
		}
		env, err := serverEnv(spec, m.lookup, vals)
		if err != nil {
			return nil, nil, err
		}
		p, err := startProcess(spec, env, m.log.With().Str("server", spec.Alias).Logger())
		if err != nil {
			return nil, nil, err
		}
		c.proc = p
		go func() {
			<-p.exited
			c.markLost()
		}()
		c.client, err = hs.start(ctx, &stdioTap{Stdio: transport.NewIO(newLineCap(p.stdout, DefaultMaxMessage), p.stdin, nil), schemas: c.schemas}, ProtocolVersion)
		if err != nil {
			return fail(err)
		}
	case TransportHTTP:
		headers, err := serverHeaders(spec, m.lookup)
		if err != nil {
			return nil, nil, err
		}
		hopts := []transport.StreamableHTTPCOption{transport.WithHTTPHeaders(headers)}
		if spec.Auth != "" {
			hc, err := m.authClient(ctx, spec, vals.user) // "" for the operator's grant
			if err != nil {
				return nil, nil, err
			}
			hopts = append(hopts, transport.WithHTTPBasicClient(hc))
		}
		c.client, err = dialHTTP(ctx, spec.URL, hopts, hs)
		if err != nil {
			return fail(err)
		}
	case TransportInProcess:
		srv := m.inProcess[spec.Alias]
		if srv == nil {
			return nil, nil, fmt.Errorf("no in-process server given for %q", spec.Alias)
		}
		var opts []transport.InProcessOption
		if m.elicit != nil {
			opts = append(opts, transport.WithElicitationHandler(elicitHandler{alias: spec.Alias, c: c, fn: m.elicit, same: sameTurn}))
		}
		c.client, err = hs.start(ctx, transport.NewInProcessTransportWithOptions(srv.s, opts...), ProtocolVersion)
		if err != nil {
			return fail(err)
		}
	default:
		return nil, nil, fmt.Errorf("transport %q is not supported", spec.Transport)
	}
	tools, err := listTools(ctx, c, spec)
	if err != nil {
		return fail(fmt.Errorf("list tools: %w", handshakeErr(ctx, err)))
	}
	for _, name := range c.schemas.leftOut(tools) {
		m.log.Warn().Str("server", spec.Alias).Str("tool", name).
			Msg("mcp tool left out: its x-mcp-header annotations break the 2026-07-28 rules (empty, not on a primitive, repeated, or not a valid header name); the server must fix the tool's schema")
	}
	m.listen(c, spec.Alias)
	return c, tools, nil
}

// listen opens the subscriptions/listen stream of a stateless connection
// whose server announces tools/list_changed, so a change reaches the
// same re-list as the GET stream's notifications do on older revisions.
// A server that refuses the stream is logged, and its tools are listed
// at each connection only.
func (m *Manager) listen(c *conn, alias string) {
	caps := c.client.GetServerCapabilities()
	if !stateless(c.client) || caps.Tools == nil || !caps.Tools.ListChanged {
		return
	}
	log := m.log.With().Str("server", alias).Logger()
	stop, err := c.client.ListenAsync(context.Background(), mcp.SubscriptionFilter{ToolsListChanged: true}, func(err error) {
		log.Warn().Err(err).Msg("mcp server's subscriptions/listen stream ended; tool changes are seen at the next connection")
	})
	if err != nil {
		log.Warn().Err(err).Msg("mcp server refused subscriptions/listen")
		return
	}
	c.stopListen = stop
}

func handshakeErr(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errStartTimeout
	}
	return err
}

var errStartTimeout = errors.New("timed out")

// listTools lists the server's tools; a server that declares no tools
// capability (one with only prompts or resources) has none.
func listTools(ctx context.Context, c *conn, spec ServerSpec) ([]Tool, error) {
	if c.client.GetServerCapabilities().Tools == nil {
		return []Tool{}, nil
	}
	res, err := c.client.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return nil, err
	}
	tools := make([]Tool, 0, len(res.Tools))
	for _, t := range res.Tools {
		tools = append(tools, fromTool(spec.Alias, spec.Version, t, c.schemas.get(t.Name)))
	}
	slices.SortFunc(tools, byName)
	return tools, nil
}

// byName orders tools by name.
func byName(a, b Tool) int { return strings.Compare(a.Name, b.Name) }
