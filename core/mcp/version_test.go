package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/rs/zerolog"
)

// seen is one JSON-RPC POST a wireRecorder saw.
type seen struct {
	method, header  string // the body's method, the MCP-Protocol-Version header
	mcpMethod, name string // the Mcp-Method and Mcp-Name headers
	meta            map[string]any
	headers         http.Header
}

// wireRecorder is a loopback streamable-HTTP server that records each
// JSON-RPC request (and each GET, the standalone stream) before passing
// it on.
type wireRecorder struct {
	mu   sync.Mutex
	post []seen
	gets int
}

func (v *wireRecorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			v.mu.Lock()
			v.gets++
			v.mu.Unlock()
		case http.MethodPost:
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Meta map[string]any `json:"_meta"`
				} `json:"params"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method != "" {
				v.mu.Lock()
				v.post = append(v.post, seen{method: msg.Method, header: r.Header.Get("MCP-Protocol-Version"),
					mcpMethod: r.Header.Get("Mcp-Method"), name: r.Header.Get("Mcp-Name"), meta: msg.Params.Meta, headers: r.Header.Clone()})
				v.mu.Unlock()
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (v *wireRecorder) requests(method string) []seen {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []seen
	for _, s := range v.post {
		if s.method == method {
			out = append(out, s)
		}
	}
	return out
}

func (v *wireRecorder) streams() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.gets
}

// olderRevision makes next a server of a revision before 2026-07-28 as
// far as server/discover goes: it answers the probe the way such servers
// do. "method" is a JSON-RPC "method not found" (an SDK server without
// sessions); "session" a 400 for the missing session ID (a stateful
// TypeScript SDK server); "empty" an empty result, as a server that
// answers every method it does not know with {} does (no
// supportedVersions, so no 2026-07-28).
func olderRevision(next http.Handler, answer string) http.Handler {
	return answering(next, "server/discover", func(w http.ResponseWriter, body []byte) bool {
		w.Header().Set("Content-Type", "application/json")
		switch answer {
		case "empty":
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + idOf(body) + `,"result":{}}`))
		case "session":
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`))
		default:
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + idOf(body) + `,"error":{"code":-32601,"message":"Method not found"}}`))
		}
		return true
	})
}

// answering answers the POSTs whose body names method with answer, and
// passes every other request (and a POST answer declines, returning
// false) to next.
func answering(next http.Handler, method string, answer func(w http.ResponseWriter, body []byte) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if strings.Contains(string(body), `"`+method+`"`) && answer(w, body) {
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// idOf is the raw id of a JSON-RPC request body.
func idOf(body []byte) string {
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(body, &msg)
	return string(msg.ID)
}

// echoHandler is a streamable-HTTP mcp-go server with one tool, echo;
// mcp-go's server speaks 2026-07-28 and the older revisions.
func echoHandler() http.Handler {
	s := server.NewMCPServer("echo", "1.0.0")
	s.AddTool(mcp.NewTool("echo"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	return server.NewStreamableHTTPServer(s)
}

// callEcho connects to url with a Manager or with Dial, and calls echo.
var callEcho = map[string]func(t *testing.T, url string){
	"manager": func(t *testing.T, url string) {
		m := start(t, Options{Manifest: manifest(ServerSpec{Alias: "echo", Transport: TransportHTTP, URL: url, Version: "1.0.0", Tools: []string{"echo"}})})
		if res, err := m.Call(context.Background(), "echo", "echo", map[string]any{}); err != nil || res.IsError {
			t.Fatalf("Call() = %+v, %v; want a result", res, err)
		}
	},
	"dial": func(t *testing.T, url string) {
		s, err := Dial(context.Background(), DialOptions{URL: url})
		if err != nil {
			t.Fatalf("Dial() error = %v", err)
		}
		defer s.Close()
		if _, err := s.Call(context.Background(), "echo", map[string]any{}); err != nil {
			t.Fatalf("Call() error = %v", err)
		}
	},
}

// TestProtocolVersionHeader: over streamable HTTP, a server that speaks
// 2026-07-28 is spoken to statelessly: server/discover and no
// initialize, every POST carrying MCP-Protocol-Version 2026-07-28, the
// _meta keys io.modelcontextprotocol/protocolVersion (the same version)
// and clientCapabilities, and the Mcp-Method and Mcp-Name headers; no
// standalone GET stream (that revision has none). A server of an older
// revision, whichever way it refuses server/discover, gets what it got
// before 2026-07-28 existed: initialize without the header (a header
// naming a version it does not know would be answered 400), 2025-11-25
// on every request after it, and the GET stream. Both clients are
// checked, the Manager's and Dial's.
//
// Before neobot spoke 2026-07-28 this test asked every server for the
// handshake; the stateless cases are the change.
func TestProtocolVersionHeader(t *testing.T) {
	servers := map[string]func(http.Handler) http.Handler{
		"2026-07-28":                  func(h http.Handler) http.Handler { return h },
		"2025-11-25 method not found": func(h http.Handler) http.Handler { return olderRevision(h, "method") },
		"2025-11-25 session required": func(h http.Handler) http.Handler { return olderRevision(h, "session") },
		"2025-11-25 empty result":     func(h http.Handler) http.Handler { return olderRevision(h, "empty") },
	}
	for client, call := range callEcho {
		for revision, wrap := range servers {
			t.Run(client+" "+revision, func(t *testing.T) {
				rec := &wireRecorder{}
				srv := httptest.NewServer(rec.wrap(wrap(echoHandler())))
				t.Cleanup(srv.Close)
				call(t, srv.URL)
				calls := rec.requests("tools/call")
				if len(calls) != 1 {
					t.Fatalf("tools/call sent %d times, want 1", len(calls))
				}
				if revision == "2026-07-28" {
					if got := rec.requests("initialize"); len(got) != 0 {
						t.Errorf("initialize sent to a 2026-07-28 server: %+v", got)
					}
					if got := rec.requests("server/discover"); len(got) != 1 {
						t.Errorf("server/discover sent %d times, want 1", len(got))
					}
					for _, s := range append(rec.requests("server/discover"), append(rec.requests("tools/list"), calls...)...) {
						if s.header != StatelessProtocolVersion || s.meta["io.modelcontextprotocol/protocolVersion"] != StatelessProtocolVersion ||
							s.meta["io.modelcontextprotocol/clientCapabilities"] == nil || s.mcpMethod != s.method {
							t.Errorf("%s carries header %q, Mcp-Method %q, _meta %v; want %s in both and the client's capabilities",
								s.method, s.header, s.mcpMethod, s.meta, StatelessProtocolVersion)
						}
					}
					if calls[0].name != "echo" {
						t.Errorf("Mcp-Name on tools/call = %q, want echo", calls[0].name)
					}
					if n := rec.streams(); n != 0 {
						t.Errorf("%d GET streams opened to a stateless server, want none", n)
					}
					return
				}
				inits := rec.requests("initialize")
				if len(inits) != 1 || inits[0].header != "" {
					t.Errorf("initialize = %+v, want one, without MCP-Protocol-Version", inits)
				}
				if calls[0].header != ProtocolVersion || calls[0].meta["io.modelcontextprotocol/protocolVersion"] != nil {
					t.Errorf("tools/call carries header %q and _meta %v, want %s and no protocol version in _meta", calls[0].header, calls[0].meta, ProtocolVersion)
				}
			})
		}
	}
}

// TestStatelessRetry: a 2026-07-28 server that refuses the first
// server/discover as an unsupported version (-32022) but lists
// 2026-07-28 among those it supports is asked once more, and never sent
// initialize; one that lists only versions neobot does not speak
// statelessly is met with the handshake.
func TestStatelessRetry(t *testing.T) {
	for _, tt := range []struct {
		supported string
		stateless bool
	}{
		{`["2026-07-28"]`, true},
		{`["2099-01-01"]`, false},
	} {
		t.Run(tt.supported, func(t *testing.T) {
			rec := &wireRecorder{}
			var once sync.Once
			next := echoHandler()
			srv := httptest.NewServer(rec.wrap(answering(next, "server/discover", func(w http.ResponseWriter, body []byte) bool {
				refused := false
				once.Do(func() {
					refused = true
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusBadRequest)
					_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + idOf(body) + `,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":` + tt.supported + `,"requested":"2026-07-28"}}}`))
				})
				return refused
			})))
			t.Cleanup(srv.Close)
			callEcho["dial"](t, srv.URL)
			discovers, inits := len(rec.requests("server/discover")), len(rec.requests("initialize"))
			if tt.stateless && (discovers != 2 || inits != 0) {
				t.Errorf("server/discover sent %d times and initialize %d, want 2 and 0", discovers, inits)
			}
			if !tt.stateless && (discovers != 1 || inits != 1) {
				t.Errorf("server/discover sent %d times and initialize %d, want 1 and 1", discovers, inits)
			}
		})
	}
}

// TestStatelessNotReached: a server/discover that never got the
// server's answer (here the server wants authorization neobot was not
// given) fails the connection as it is: no initialize follows, which
// would only be refused the same way.
func TestStatelessNotReached(t *testing.T) {
	rec := &wireRecorder{}
	srv := httptest.NewServer(rec.wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource"`)
		w.WriteHeader(http.StatusUnauthorized)
	})))
	t.Cleanup(srv.Close)
	_, err := Dial(context.Background(), DialOptions{URL: srv.URL})
	if err == nil || errors.Is(err, errNotStateless) {
		t.Fatalf("Dial() error = %v, want the server's refusal", err)
	}
	if got := rec.requests("initialize"); len(got) != 0 {
		t.Errorf("initialize sent after an unauthorized server/discover: %+v", got)
	}
	if got := rec.requests("server/discover"); len(got) != 1 {
		t.Errorf("server/discover sent %d times, want 1", len(got))
	}
}

// ackWriter signals once the server has acknowledged a
// subscriptions/listen stream (it registers the subscription first).
type ackWriter struct {
	http.ResponseWriter
	once  *sync.Once
	acked chan struct{}
}

func (w ackWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	if bytes.Contains(p, []byte("notifications/subscriptions/acknowledged")) {
		w.once.Do(func() { close(w.acked) })
	}
	return n, err
}

func (w ackWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// TestListChangedStateless: on a 2026-07-28 connection, where there is no
// GET stream, a server that announces tools.listChanged is listened to
// with subscriptions/listen, and its tools/list_changed leads to a
// re-list as it does on older revisions.
func TestListChangedStateless(t *testing.T) {
	srv := NewServer("t", "1.0.0", testTools(0)...)
	acked := make(chan struct{})
	var once sync.Once
	next := srv.Handler()
	rec := &wireRecorder{}
	ts := httptest.NewServer(rec.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if strings.Contains(string(body), `"subscriptions/listen"`) {
				w = ackWriter{ResponseWriter: w, once: &once, acked: acked}
			}
		}
		next.ServeHTTP(w, r)
	})))
	t.Cleanup(ts.Close)
	feed := make(statusFeed, 64)
	start(t, Options{Manifest: manifest(ServerSpec{Alias: "t", Transport: TransportHTTP, URL: ts.URL, Version: "1.0.0", Tools: testToolNames}), OnStatus: feed.on})
	feed.wait(t, "t", StateUp)
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	select {
	case <-acked:
	case <-timeout.C:
		t.Fatal("no subscriptions/listen stream was opened")
	}
	if got := rec.requests("initialize"); len(got) != 0 {
		t.Fatalf("initialize sent: the connection is not stateless")
	}
	tools := testTools(0)
	tools[0].Description = "Echo, renewed."
	srv.SetTools(tools...)
	for st := feed.wait(t, "t", StateUp); st.Tools[2].Description != "Echo, renewed."; st = feed.wait(t, "t", StateUp) {
	}
}

// TestParamHeaders: on a 2026-07-28 connection a tool parameter
// annotated x-mcp-header is mirrored into its Mcp-Param header (Base64
// when it is not plain ASCII, left out when null), and a tool whose
// annotation breaks the rules (here an empty header name) is left out of
// the server's tools while the others stay usable: the manifest lists
// only the good one, and the server comes up.
func TestParamHeaders(t *testing.T) {
	route := `{"name":"route","description":"Route.","inputSchema":{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"greeting":{"type":"string","x-mcp-header":"Greeting"},
		"verbose":{"type":"boolean","x-mcp-header":"Verbose"},
		"query":{"type":"string"}}}}`
	bad := `{"name":"bad","description":"Bad.","inputSchema":{"type":"object","properties":{"v":{"type":"string","x-mcp-header":""}}}}`
	s := server.NewMCPServer("h", "1.0.0")
	var tool mcp.Tool
	if err := json.Unmarshal([]byte(route), &tool); err != nil {
		t.Fatal(err)
	}
	s.AddTool(tool, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	next := server.NewStreamableHTTPServer(s)
	// mcp-go's server refuses to serve "bad" at all, so tools/list is
	// answered here, as a server that does not check its tools would.
	rec := &wireRecorder{}
	srv := httptest.NewServer(rec.wrap(answering(next, "tools/list", func(w http.ResponseWriter, body []byte) bool {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + idOf(body) + `,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"private","tools":[` + route + `,` + bad + `]}}`))
		return true
	})))
	t.Cleanup(srv.Close)
	logs := make(logLines, 64)
	m := start(t, Options{Manifest: manifest(ServerSpec{Alias: "h", Transport: TransportHTTP, URL: srv.URL, Version: "1.0.0", Tools: []string{"route"}}),
		Logger: zerolog.New(logs)})
	if st := m.Status()[0]; st.State != StateUp {
		t.Fatalf("Status() = %+v, want up with route alone", st)
	}
	if !logs.any(`"tool":"bad"`, "x-mcp-header") {
		t.Error("the log does not say bad was left out and why")
	}
	res, err := m.Call(context.Background(), "h", "route", map[string]any{"region": "us-west1", "greeting": "Hello, 世界", "verbose": nil, "query": "x"})
	if err != nil || res.IsError {
		t.Fatalf("Call(route) = %+v, %v", res, err)
	}
	calls := rec.requests("tools/call")
	if len(calls) != 1 {
		t.Fatalf("tools/call sent %d times, want 1", len(calls))
	}
	h := calls[0].headers
	for name, want := range map[string]string{
		"Mcp-Param-Region":   "us-west1",
		"Mcp-Param-Greeting": "=?base64?" + base64.StdEncoding.EncodeToString([]byte("Hello, 世界")) + "?=",
		"Mcp-Param-Verbose":  "",
		"Mcp-Param-Query":    "",
	} {
		if got := h.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

// logLines is a log writer that keeps what is logged, one entry per
// write, up to its capacity.
type logLines chan string

func (l logLines) Write(p []byte) (int, error) {
	select {
	case l <- string(p):
	default:
	}
	return len(p), nil
}

// any reports whether an entry logged so far contains every one of want.
func (l logLines) any(want ...string) bool {
	for {
		select {
		case line := <-l:
			if !slices.ContainsFunc(want, func(w string) bool { return !strings.Contains(line, w) }) {
				return true
			}
		default:
			return false
		}
	}
}
