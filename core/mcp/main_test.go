package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The test binary doubles as a Go stdio MCP server: started with
// NEOBOT_MCPTEST_MODE=serve it serves testTools on stdin/stdout instead of
// running tests.
const (
	modeVar       = "NEOBOT_MCPTEST_MODE"
	delayVar      = "NEOBOT_MCPTEST_DELAY"
	grandchildVar = "NEOBOT_MCPTEST_GRANDCHILD"
	// placeVar, when set, adds the tool "place", which reports the
	// variable and the server's arguments; a value containing "drift"
	// also adds "zap", which no manifest declares.
	placeVar = "NEOBOT_MCPTEST_PLACE"
	// schemaVar, when set, adds the tool "rich", whose input schema is
	// richSchema with the variable as its network $ref.
	schemaVar = "NEOBOT_MCPTEST_SCHEMA"
)

func TestMain(m *testing.M) {
	switch os.Getenv(modeVar) {
	case "serve":
		os.Exit(serveStdio())
	case "hang": // reads requests, never answers
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	case "sleep": // a grandchild left behind, as npx leaves node
		time.Sleep(time.Hour)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func serveStdio() int {
	if d, err := time.ParseDuration(os.Getenv(delayVar)); err == nil {
		time.Sleep(d) // a slow-starting server, for the parallel boot benchmark
	}
	grandchild := 0
	if os.Getenv(grandchildVar) == "1" {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), modeVar+"=sleep")
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "grandchild:", err)
			return 1
		}
		grandchild = cmd.Process.Pid
	}
	fmt.Fprintln(os.Stderr, "test server ready")
	tools := testTools(grandchild)
	if place, ok := os.LookupEnv(placeVar); ok {
		tools = append(tools, ServerTool{Name: "place", Description: "Report the place the server runs for.",
			Handle: func(context.Context, map[string]any) (Result, error) {
				return TextResult(strings.Join(append([]string{place}, os.Args[1:]...), " ")), nil
			}})
		if strings.Contains(place, "drift") {
			tools = append(tools, ServerTool{Name: "zap", Description: "Not in the manifest."})
		}
	}
	if ref := os.Getenv(schemaVar); ref != "" {
		var schema map[string]any
		if err := json.Unmarshal([]byte(richSchema(ref)), &schema); err != nil {
			fmt.Fprintln(os.Stderr, "schema:", err)
			return 1
		}
		tools = append(tools, ServerTool{Name: "rich", Description: "A tool with a JSON Schema 2020-12 schema.", InputSchema: schema})
	}
	s := NewServer("neobot-test", "1.0.0", tools...)
	if err := s.ServeStdio(context.Background(), os.Stdin, os.Stdout); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "serve:", err)
		return 1
	}
	return 0
}

// testToolNames are the tools testTools serves, as a manifest lists them.
var testToolNames = []string{"add", "boom", "echo", "fail", "image", "pid"}

func testTools(grandchild int) []ServerTool {
	obj := func(props map[string]any, required ...string) map[string]any {
		return map[string]any{"type": "object", "properties": props, "required": required}
	}
	str := map[string]any{"type": "string"}
	num := map[string]any{"type": "number"}
	return []ServerTool{
		{Name: "echo", Description: "Echo the text back.", InputSchema: obj(map[string]any{"text": str}, "text"),
			Handle: func(_ context.Context, args map[string]any) (Result, error) {
				s, _ := args["text"].(string)
				return TextResult(s), nil
			}},
		{Name: "add", Description: "Add two numbers.", InputSchema: obj(map[string]any{"a": num, "b": num}, "a", "b"),
			Handle: func(_ context.Context, args map[string]any) (Result, error) {
				a, _ := args["a"].(float64)
				b, _ := args["b"].(float64)
				r := TextResult(strconv.FormatFloat(a+b, 'f', -1, 64))
				r.Structured = []byte(fmt.Sprintf(`{"sum":%v}`, a+b))
				return r, nil
			}},
		{Name: "fail", Description: "Fail in-band.",
			Handle: func(context.Context, map[string]any) (Result, error) {
				return ErrorResult("the widget is jammed"), nil
			}},
		{Name: "boom", Description: "Fail with a JSON-RPC error.",
			Handle: func(context.Context, map[string]any) (Result, error) {
				return Result{}, errors.New("kaboom")
			}},
		{Name: "image", Description: "Return a tiny PNG.",
			Handle: func(context.Context, map[string]any) (Result, error) {
				return Result{Content: []Content{{Type: ContentImage, MIMEType: "image/png", Data: "iVBORw0KGgo="}}}, nil
			}},
		{Name: "pid", Description: "Report the server's and its grandchild's process IDs.",
			Handle: func(context.Context, map[string]any) (Result, error) {
				return TextResult(fmt.Sprintf("%d %d", os.Getpid(), grandchild)), nil
			}},
	}
}

// goStdio returns a manifest entry that runs the test binary as a stdio
// server. Its environment comes through $env references resolved by the
// test's LookupEnv (see testEnv).
func goStdio(alias string) ServerSpec {
	return ServerSpec{
		Alias: alias, Transport: TransportStdio, Command: os.Args[0], Version: "1.0.0",
		Env: []string{
			modeVar + "=$env:TEST_MODE", delayVar + "=$env:TEST_DELAY", grandchildVar + "=$env:TEST_GRANDCHILD",
		},
		Tools: testToolNames,
	}
}

func inProc(alias string) ServerSpec {
	return ServerSpec{Alias: alias, Transport: TransportInProcess, Version: "1.0.0", Tools: testToolNames}
}

func manifest(servers ...ServerSpec) *Manifest {
	return &Manifest{DID: "did:key:z6MkTest", Servers: servers}
}

// envGate is a LookupEnv over a fixed map that can be held shut, so a test
// controls when a restart may proceed without sleeping.
type envGate struct {
	vars map[string]string
	mu   sync.Mutex
	open chan struct{}
}

func testEnv(vars map[string]string) *envGate {
	g := &envGate{vars: map[string]string{"TEST_MODE": "serve", "TEST_DELAY": "0s", "TEST_GRANDCHILD": "0"}, open: make(chan struct{})}
	for k, v := range vars {
		g.vars[k] = v
	}
	close(g.open)
	return g
}

func (g *envGate) lookup(name string) (string, bool) {
	g.mu.Lock()
	ch := g.open
	g.mu.Unlock()
	<-ch
	v, ok := g.vars[name]
	return v, ok
}

func (g *envGate) hold() {
	g.mu.Lock()
	g.open = make(chan struct{})
	g.mu.Unlock()
}

func (g *envGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

// start runs a manager for the test and closes it at the end.
func start(tb testing.TB, opts Options) *Manager {
	tb.Helper()
	if opts.StopGrace == 0 {
		opts.StopGrace = 500 * time.Millisecond
	}
	m, err := Start(context.Background(), opts)
	if err != nil {
		tb.Fatalf("Start() error = %v", err)
	}
	tb.Cleanup(func() { _ = m.Close() })
	return m
}

// statusFeed collects OnStatus events for waitState.
type statusFeed chan Status

func (f statusFeed) on(s Status) { f <- s }

func (f statusFeed) wait(t *testing.T, alias string, want State) Status {
	t.Helper()
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for {
		select {
		case s := <-f:
			if s.Alias == alias && s.State == want {
				return s
			}
		case <-timeout.C:
			t.Fatalf("server %s never reached state %s", alias, want)
		}
	}
}

// liveGroup lists the processes of process group pgid that are not
// zombies.
func liveGroup(t *testing.T, pgid int) []int {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("process-group inspection reads /proc")
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var live []int
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			live = append(live, pid)
		}
	}
	return live
}

// repoBin finds a program installed by `npm ci` at the repository root.
func repoBin(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	missing := t.Skipf
	if os.Getenv("CI") == "true" {
		missing = t.Fatalf // CI must run these tests, never skip them
	}
	if _, err := os.Stat(p); err != nil {
		missing("%s is not installed: run `make test` (it runs npm ci at the repository root first)", name)
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing("node is not installed")
	}
	return p
}
