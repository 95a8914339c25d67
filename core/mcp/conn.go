package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// ProtocolVersion is the MCP protocol version neobot asks for. Pinning a
// version that uses the initialize handshake skips the server/discover
// probe, which can stall a start by five seconds on servers that predate
// it.
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
}

func (c *conn) markLost() { c.lostOnce.Do(func() { close(c.lost) }) }

// close ends the connection and, for stdio, the process group, and waits
// for both.
func (c *conn) close(grace time.Duration) error {
	err := c.client.Close()
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
	c := &conn{lost: make(chan struct{})}
	var tr transport.Interface
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
		tr = transport.NewIO(newLineCap(p.stdout, DefaultMaxMessage), p.stdin, nil)
		go func() {
			<-p.exited
			c.markLost()
		}()
	case TransportHTTP:
		headers, err := serverHeaders(spec, m.lookup)
		if err != nil {
			return nil, nil, err
		}
		// The standalone GET stream carries tools/list_changed under the
		// protocol version we pin (ProtocolVersion, 2025-11-25). mcp-go
		// marks the option deprecated for 2026-07-28, which replaced the
		// stream with subscriptions/listen; move to Client.Listen together
		// with the pin.
		hopts := []transport.StreamableHTTPCOption{transport.WithHTTPHeaders(headers), transport.WithContinuousListening()}
		if spec.Auth != "" {
			hc, err := m.authClient(ctx, spec, vals.user) // "" for the operator's grant
			if err != nil {
				return nil, nil, err
			}
			hopts = append(hopts, transport.WithHTTPBasicClient(hc))
		}
		h, err := transport.NewStreamableHTTP(spec.URL, hopts...)
		if err != nil {
			return nil, nil, err
		}
		tr = h
	case TransportInProcess:
		srv := m.inProcess[spec.Alias]
		if srv == nil {
			return nil, nil, fmt.Errorf("no in-process server given for %q", spec.Alias)
		}
		var opts []transport.InProcessOption
		if m.elicit != nil {
			opts = append(opts, transport.WithElicitationHandler(elicitHandler{alias: spec.Alias, c: c, fn: m.elicit, same: sameTurn}))
		}
		tr = transport.NewInProcessTransportWithOptions(srv.s, opts...)
	default:
		return nil, nil, fmt.Errorf("transport %q is not supported", spec.Transport)
	}
	tr = tasksTransport(tr) // a call answered with a task is polled to its end (tasks.go)
	c.client = client.NewClient(tr, append([]client.ClientOption{client.WithProtocolVersion(ProtocolVersion)}, m.elicitOptions(spec.Alias, c)...)...)
	fail := func(stage string, err error) (*conn, []Tool, error) {
		_ = c.close(m.grace)
		if c.proc != nil {
			if line := c.proc.lastStderr(); line != "" {
				return nil, nil, fmt.Errorf("%s: %w (server stderr: %s)", stage, err, line)
			}
		}
		return nil, nil, fmt.Errorf("%s: %w", stage, err)
	}
	// The client lives until Close; only the handshake is bounded by ctx.
	if err := c.client.Start(context.WithoutCancel(ctx)); err != nil {
		return fail("start", err)
	}
	c.client.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			listChanged()
		}
	})
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = ProtocolVersion
	init.Params.ClientInfo = mcp.Implementation{Name: "neobot", Version: m.clientVersion}
	init.Params.Capabilities.Extensions = tasksCapability()
	if m.elicit != nil {
		init.Params.Capabilities.Elicitation = elicitCapability()
	}
	if _, err := c.client.Initialize(ctx, init); err != nil {
		return fail("initialize", handshakeErr(ctx, err))
	}
	tools, err := listTools(ctx, c, spec)
	if err != nil {
		return fail("list tools", handshakeErr(ctx, err))
	}
	return c, tools, nil
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
		tools = append(tools, fromTool(spec.Alias, spec.Version, t))
	}
	slices.SortFunc(tools, func(a, b Tool) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return tools, nil
}
