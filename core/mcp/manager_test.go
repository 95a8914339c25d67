package mcp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestCallInProcess(t *testing.T) {
	srv := NewServer("t", "1.0.0", testTools(0)...)
	m := start(t, Options{Manifest: manifest(inProc("t")), InProcess: map[string]*Server{"t": srv}})
	ctx := context.Background()

	tests := []struct {
		tool     string
		args     map[string]any
		wantText string
		wantErr  bool
		wantJSON string
	}{
		{tool: "echo", args: map[string]any{"text": "hi"}, wantText: "hi"},
		{tool: "add", args: map[string]any{"a": 2, "b": 3}, wantText: "5", wantJSON: `{"sum":5}`},
		{tool: "fail", wantText: "the widget is jammed", wantErr: true},
		{tool: "boom", wantText: "kaboom", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res, err := m.Call(ctx, "t", tt.tool, tt.args)
			if err != nil {
				t.Fatalf("Call(%s) error = %v, want nil", tt.tool, err)
			}
			if res.IsError != tt.wantErr || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, tt.wantText) {
				t.Errorf("Call(%s) = %+v, want text %q isError %v", tt.tool, res, tt.wantText, tt.wantErr)
			}
			if tt.wantJSON != "" && string(res.Structured) != tt.wantJSON {
				t.Errorf("Call(%s).Structured = %s, want %s", tt.tool, res.Structured, tt.wantJSON)
			}
		})
	}
	if _, err := m.Call(ctx, "t", "nope", nil); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("Call(undeclared tool) error = %v, want ErrUnknownTool", err)
	}
	if _, err := m.Call(ctx, "zz", "echo", nil); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("Call(unknown server) error = %v, want ErrUnknownTool", err)
	}
	tools := m.Tools()
	if len(tools) != len(testToolNames) || tools[0].Name != "add" || tools[0].InputSchema["type"] != "object" {
		t.Errorf("Tools() = %+v, want %d sorted tools with schemas", tools, len(testToolNames))
	}
	if got := tools[0].URI.String(); got != "matrix://tool/mcp/t/add@1.0.0" {
		t.Errorf("Tools()[0].URI = %s, want matrix://tool/mcp/t/add@1.0.0", got)
	}
}

// TestDriftAtBoot: a server whose tools differ from the manifest is
// rejected with the differences listed; the other servers still boot.
func TestDriftAtBoot(t *testing.T) {
	tests := []struct {
		name           string
		declared       []string
		wantMissing    []string
		wantUnexpected []string
	}{
		{name: "missing", declared: append(slices.Clone(testToolNames), "zap"), wantMissing: []string{"zap"}},
		{name: "unexpected", declared: []string{"add", "boom", "echo", "fail", "image"}, wantUnexpected: []string{"pid"}},
		{name: "both", declared: []string{"add", "boom", "echo", "fail", "image", "zap"}, wantMissing: []string{"zap"}, wantUnexpected: []string{"pid"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := inProc("bad")
			bad.Tools = tt.declared
			m := start(t, Options{
				Manifest:  manifest(bad, inProc("good")),
				InProcess: map[string]*Server{"bad": NewServer("b", "1", testTools(0)...), "good": NewServer("g", "1", testTools(0)...)},
			})
			st := m.Status()
			if st[0].State != StateRejected || st[1].State != StateUp {
				t.Fatalf("Status() states = %s, %s; want rejected, up", st[0].State, st[1].State)
			}
			w := m.Warnings()
			if len(w) != 1 {
				t.Fatalf("Warnings() = %q, want one warning", w)
			}
			for _, name := range append(tt.wantMissing, tt.wantUnexpected...) {
				if !strings.Contains(w[0], name) {
					t.Errorf("Warnings()[0] = %q, want it to name %q", w[0], name)
				}
			}
			if len(tt.wantMissing) > 0 != strings.Contains(w[0], "missing") || len(tt.wantUnexpected) > 0 != strings.Contains(w[0], "unexpected") {
				t.Errorf("Warnings()[0] = %q, want missing=%v unexpected=%v", w[0], tt.wantMissing, tt.wantUnexpected)
			}
			if _, err := m.Call(context.Background(), "bad", "echo", nil); !errors.Is(err, ErrServerDown) {
				t.Errorf("Call(rejected server) error = %v, want ErrServerDown", err)
			}
			if len(m.Tools()) != len(testToolNames) {
				t.Errorf("Tools() has %d tools, want only the good server's %d", len(m.Tools()), len(testToolNames))
			}
		})
	}
}

func TestBijection(t *testing.T) {
	tests := []struct {
		declared, discovered []string
		want                 string // "" for no drift
	}{
		{[]string{"a", "b"}, []string{"b", "a"}, ""},
		{[]string{"a", "b"}, []string{"a"}, "missing b;"},
		{[]string{"a"}, []string{"a", "c"}, "unexpected c;"},
		{[]string{"a", "b"}, []string{"c", "a"}, "missing b; unexpected c;"},
		{[]string{"a"}, nil, "missing a;"},
	}
	for _, tt := range tests {
		err := Bijection("s", tt.declared, tt.discovered)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Bijection(%v, %v) = %v, want nil", tt.declared, tt.discovered, err)
		case tt.want != "" && (!errors.Is(err, ErrDrift) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Bijection(%v, %v) = %v, want drift %q", tt.declared, tt.discovered, err, tt.want)
		}
	}
}

// TestListChanged: tools/list_changed triggers a re-list; a change that
// keeps the bijection updates the tools, one that breaks it rejects the
// server.
func TestListChanged(t *testing.T) {
	srv := NewServer("t", "1.0.0", testTools(0)...)
	feed := make(statusFeed, 64)
	m := start(t, Options{Manifest: manifest(inProc("t")), InProcess: map[string]*Server{"t": srv}, OnStatus: feed.on})
	feed.wait(t, "t", StateUp)

	tools := testTools(0)
	tools[0].Description = "Echo, renewed."
	srv.SetTools(tools...)
	for st := feed.wait(t, "t", StateUp); st.Tools[2].Description != "Echo, renewed."; st = feed.wait(t, "t", StateUp) {
	}

	srv.SetTools(tools[1:]...) // echo disappears
	st := feed.wait(t, "t", StateRejected)
	if !strings.Contains(st.Problem, "missing echo") {
		t.Errorf("Status.Problem = %q, want it to say echo is missing", st.Problem)
	}
	if _, err := m.Call(context.Background(), "t", "add", map[string]any{"a": 1, "b": 1}); !errors.Is(err, ErrServerDown) {
		t.Errorf("Call() after drift error = %v, want ErrServerDown", err)
	}
}

// TestHTTPHeaders: a streamable-HTTP server receives the header the
// manifest references, resolved from the environment at start.
func TestHTTPHeaders(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	h := NewServer("h", "1.0.0", testTools(0)...).Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the manager closes its listening stream
	spec := ServerSpec{Alias: "h", Transport: TransportHTTP, URL: ts.URL, Version: "1.0.0", Tools: testToolNames,
		Headers: map[string]string{"Authorization": "Bearer $env:H_TOKEN"}}

	m := start(t, Options{Manifest: manifest(spec), LookupEnv: testEnv(map[string]string{"H_TOKEN": "s3cret"}).lookup})
	res, err := m.Call(context.Background(), "h", "echo", map[string]any{"text": "over http"})
	if err != nil || res.Content[0].Text != "over http" {
		t.Fatalf("Call(echo) = %+v, %v; want the text back", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range seen {
		if a != "Bearer s3cret" {
			t.Errorf("Authorization header = %q, want %q", a, "Bearer s3cret")
		}
	}
	if len(seen) == 0 {
		t.Error("the HTTP server saw no requests")
	}
}

// TestMissingEnv: a $env reference to an unset variable fails that
// server with a warning naming the variable; the rest boots.
func TestMissingEnv(t *testing.T) {
	httpSpec := ServerSpec{Alias: "h", Transport: TransportHTTP, URL: "http://127.0.0.1:1/mcp", Version: "1.0.0", Tools: []string{"x"},
		Headers: map[string]string{"X-Api-Key": "$env:NOPE_HTTP"}}
	stdio := goStdio("s")
	stdio.Env = append(stdio.Env, "API_KEY=$env:NOPE_STDIO")
	m := start(t, Options{
		Manifest:  manifest(httpSpec, stdio, inProc("ok")),
		LookupEnv: testEnv(nil).lookup,
		InProcess: map[string]*Server{"ok": NewServer("ok", "1", testTools(0)...)},
	})
	st := m.Status()
	for i, v := range []string{"NOPE_HTTP", "NOPE_STDIO"} {
		if st[i].State != StateFailed || !strings.Contains(st[i].Problem, v) {
			t.Errorf("Status()[%d] = %s %q, want failed naming %s", i, st[i].State, st[i].Problem, v)
		}
	}
	if st[2].State != StateUp {
		t.Errorf("Status()[2].State = %s, want up", st[2].State)
	}
	if len(m.Warnings()) != 2 {
		t.Errorf("Warnings() = %q, want 2", m.Warnings())
	}
}

func TestStartInvalidManifest(t *testing.T) {
	_, err := Start(context.Background(), Options{Manifest: &Manifest{DID: "nope"}})
	if !errors.Is(err, ErrInvalidManifest) {
		t.Errorf("Start(invalid manifest) error = %v, want ErrInvalidManifest", err)
	}
}

// lateEnv is a LookupEnv whose variables a test sets while the manager
// runs.
type lateEnv struct {
	mu   sync.Mutex
	vars map[string]string
}

func (e *lateEnv) lookup(name string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v, ok := e.vars[name]
	return v, ok
}

func (e *lateEnv) set(name, value string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.vars[name] = value
}

// TestFailedAtBootRetried: a server that fails at boot is started again
// with backoff; once it comes up (its tools checked against the manifest),
// its tools are listed and callable, and the generation moves so schemas
// are rebuilt.
func TestFailedAtBootRetried(t *testing.T) {
	env := &lateEnv{vars: map[string]string{"TEST_MODE": "serve", "TEST_DELAY": "0s", "TEST_GRANDCHILD": "0"}}
	spec := goStdio("late")
	spec.Env = append(spec.Env, "API_KEY=$env:LATE_KEY")
	up := make(chan Status, 16)
	m := start(t, Options{
		Manifest: manifest(spec), LookupEnv: env.lookup, RestartBackoff: time.Millisecond, RestartMaxBackoff: 5 * time.Millisecond,
		OnStatus: func(s Status) {
			if s.State == StateUp {
				up <- s
			}
		},
	})
	if st := m.Status()[0]; st.State != StateFailed || !strings.Contains(st.Problem, "LATE_KEY") {
		t.Fatalf("at boot: %s %q, want failed naming LATE_KEY", st.State, st.Problem)
	}
	gen := m.Generation()
	if _, err := m.Call(context.Background(), "late", "echo", map[string]any{"text": "hi"}); !errors.Is(err, ErrServerDown) {
		t.Errorf("call while failed = %v, want ErrServerDown", err)
	}
	env.set("LATE_KEY", "k")
	select {
	case s := <-up:
		if len(s.Tools) == 0 {
			t.Errorf("up without tools: %+v", s)
		}
	case <-time.After(30 * time.Second): // a bound on a hung test, not a timing assertion
		t.Fatalf("the server never came up; status %+v", m.Status())
	}
	if m.Generation() == gen || len(m.Tools()) == 0 {
		t.Errorf("after coming up: generation %d (was %d), %d tools; want a new generation and the tools listed", m.Generation(), gen, len(m.Tools()))
	}
	res, err := m.Call(context.Background(), "late", "echo", map[string]any{"text": "hi"})
	if err != nil || res.IsError {
		t.Errorf("call after coming up = %+v, %v", res, err)
	}
}
