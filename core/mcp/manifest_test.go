package mcp

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const validManifest = `{
  "did": "did:key:z6MkTest",
  "servers": [
    {"alias": "fs", "transport": "stdio", "command": "npx",
     "args": ["-y", "@modelcontextprotocol/server-filesystem@2026.8.31", "./workspace"],
     "env": ["GITHUB_TOKEN=$env:GITHUB_TOKEN"], "version": "2026.8.31", "tools": ["read_file"]},
    {"alias": "remote", "transport": "http", "url": "https://example.com/mcp",
     "headers": {"Authorization": "Bearer $env:REMOTE_TOKEN", "X-Api-Key": "$env:REMOTE_KEY"},
     "version": "1.2.0", "tools": ["search"], "start_timeout": "10s"}
  ],
  "escalate_patterns": ["send", "pay"]
}`

func TestParseValid(t *testing.T) {
	m, err := Parse([]byte(validManifest))
	if err != nil {
		t.Fatalf("Parse(valid) error = %v", err)
	}
	if len(m.Servers) != 2 || time.Duration(m.Servers[1].StartTimeout) != 10*time.Second || m.Servers[1].Headers["Authorization"] != "Bearer $env:REMOTE_TOKEN" {
		t.Errorf("Parse(valid) = %+v, want both servers with their fields", m)
	}
}

// TestParseInvalid has one case per validation error: each names the
// field and says how to fix it.
func TestParseInvalid(t *testing.T) {
	// server returns a manifest whose only server is the given JSON object.
	server := func(fields string) string {
		return `{"did": "did:key:z6MkTest", "servers": [{` + fields + `}]}`
	}
	stdio := `"alias": "s", "transport": "stdio", "command": "srv", "version": "1.0.0", "tools": ["t"]`
	http := `"alias": "h", "transport": "http", "url": "https://example.com/mcp", "version": "1.0.0", "tools": ["t"]`
	tests := []struct {
		name      string
		json      string
		wantField string
		wantFix   string
	}{
		{"not JSON", `{"did": `, "(document)", "fix the JSON syntax"},
		{"unknown field", `{"did": "did:key:z", "servrs": []}`, "servrs", "correct its spelling"},
		{"wrong type", `{"did": 42}`, "did", "type"},
		{"missing did", `{"servers": []}`, "did", "did:key"},
		{"bad did", `{"did": "agent-7"}`, "did", "did:<method>:<id>"},
		{"unknown allowed side effect", `{"did": "did:key:z", "allowed_side_effects": ["read", "delete"]}`, "allowed_side_effects[1]", "none, read, write, external, spend"},
		{"capitalised allowed side effect", `{"did": "did:key:z", "allowed_side_effects": ["Read"]}`, "allowed_side_effects[0]", "none, read"},
		{"unknown server side effect", server(stdio + `, "side_effects": "mutate"`), "servers[0].side_effects", "none, read, write, external, spend"},
		{"unknown tool side effect", server(stdio + `, "tool_side_effects": {"t": "readonly"}`), "servers[0].tool_side_effects.t", "none, read"},
		{"side effect of an unlisted tool", server(stdio + `, "tool_side_effects": {"u": "write"}`), "servers[0].tool_side_effects.u", "add the tool to tools"},
		{"blank escalate pattern", `{"did": "did:key:z", "escalate_patterns": ["send", " "]}`, "escalate_patterns[1]", "remove it"},
		{"unknown auth", server(http + `, "auth": "bearer"`), "servers[0].auth", `use "oauth"`},
		{"auth on stdio", server(stdio + `, "auth": "oauth"`), "servers[0].auth", `"transport": "http"`},
		{"auth with an Authorization header", server(http + `, "auth": "oauth", "headers": {"Authorization": "Bearer $env:T"}`), "servers[0].headers.Authorization", "remove the header"},
		{"oauth without auth", server(http + `, "oauth": {"client_id": "c"}`), "servers[0].oauth", `add "auth"`},
		{"literal client secret", server(http + `, "auth": "oauth", "oauth": {"client_id": "c", "client_secret": "s3cr3t"}`), "servers[0].oauth.client_secret", "$env:VAR"},
		{"client secret without client id", server(http + `, "auth": "per_user", "oauth": {"client_secret": "$env:S"}`), "servers[0].oauth.client_secret", "client_id"},
		{"missing alias", server(`"transport": "stdio", "command": "srv", "version": "1.0.0", "tools": ["t"]`), "servers[0].alias", "name the server"},
		{"bad alias", server(strings.Replace(stdio, `"alias": "s"`, `"alias": "my__fs"`, 1)), "servers[0].alias", "single '_'"},
		{"duplicate alias", `{"did": "did:key:z", "servers": [{` + stdio + `}, {` + stdio + `}]}`, "servers[1].alias", "its own alias"},
		{"missing transport", server(`"alias": "s", "command": "srv", "version": "1.0.0", "tools": ["t"]`), "servers[0].transport", `"stdio" or "http"`},
		{"sse refused", server(strings.Replace(http, `"http"`, `"sse"`, 1)), "servers[0].transport", "streamable-HTTP"},
		{"plain http off the machine", server(strings.Replace(http, "https://example.com", "http://example.com", 1)), "servers[0].url", "https://example.com/mcp"},
		{"unknown transport", server(strings.Replace(stdio, `"stdio"`, `"grpc"`, 1)), "servers[0].transport", `"stdio" or "http"`},
		{"inprocess from a file", server(strings.Replace(stdio, `"stdio"`, `"inprocess"`, 1)), "servers[0].transport", `"stdio" or "http"`},
		{"missing command", server(`"alias": "s", "transport": "stdio", "version": "1.0.0", "tools": ["t"]`), "servers[0].command", "npx"},
		{"url on stdio", server(stdio + `, "url": "https://x"`), "servers[0].url", "remove it"},
		{"literal env credential", server(stdio + `, "env": ["GITHUB_TOKEN=ghp_abc123"]`), "servers[0].env[0]", "GITHUB_TOKEN=$env:GITHUB_TOKEN"},
		{"malformed env", server(stdio + `, "env": ["$env:X"]`), "servers[0].env[0]", "NAME=$env:VAR"},
		{"unpinned npx package", server(`"alias": "s", "transport": "stdio", "command": "npx", "args": ["-y", "@scope/pkg"], "version": "1.0.0", "tools": ["t"]`), "servers[0].args", "@scope/pkg@1.0.0"},
		{"npx version disagrees", server(`"alias": "s", "transport": "stdio", "command": "npx", "args": ["-y", "pkg@2.0.0"], "version": "1.0.0", "tools": ["t"]`), "servers[0].version", "agree"},
		{"missing url", server(`"alias": "h", "transport": "http", "version": "1.0.0", "tools": ["t"]`), "servers[0].url", "streamable-HTTP endpoint"},
		{"bad url", server(strings.Replace(http, "https://example.com/mcp", "ftp://example.com", 1)), "servers[0].url", "https://host/path"},
		{"credentials in url", server(strings.Replace(http, "https://", "https://user:pw@", 1)), "servers[0].url", "Bearer $env:VAR"},
		{"literal header credential", server(http + `, "headers": {"Authorization": "Bearer sk-live-123"}`), "servers[0].headers.Authorization", "Bearer $env:VAR"},
		{"env on http", server(http + `, "env": ["A=$env:A"]`), "servers[0].env", "headers"},
		{"command on http", server(http + `, "command": "srv"`), "servers[0].command", `"stdio"`},
		{"missing version", server(`"alias": "s", "transport": "stdio", "command": "srv", "tools": ["t"]`), "servers[0].version", "pin the server's version"},
		{"unpinned version", server(strings.Replace(stdio, `"1.0.0"`, `"latest"`, 1)), "servers[0].version", "semantic version"},
		{"missing tools", server(`"alias": "s", "transport": "stdio", "command": "srv", "version": "1.0.0"`), "servers[0].tools", "list exactly the tools"},
		{"duplicate tool", server(strings.Replace(stdio, `["t"]`, `["t", "t"]`, 1)), "servers[0].tools[1]", "list each tool once"},
		{"bad tool name", server(strings.Replace(stdio, `["t"]`, `["read file"]`, 1)), "servers[0].tools[0]", "1-128"},
		{"bad start_timeout", server(stdio + `, "start_timeout": "soon"`), "start_timeout", "30s"},
		{"bad idle_timeout", server(stdio + `, "args": ["{user}"], "idle_timeout": "later"`), "idle_timeout", "30s"},
		{"negative start_timeout", server(stdio + `, "start_timeout": "-1s"`), "servers[0].start_timeout", "positive"},
		{"unknown placeholder", server(stdio + `, "args": ["/data/{team}"]`), "servers[0].args[0]", "{workspace} or {user}"},
		{"placeholder in command", server(strings.Replace(stdio, `"srv"`, `"/bin/{user}"`, 1)), "servers[0].command", "args, env or create_dirs"},
		{"placeholder on http", server(strings.Replace(http, "/mcp", "/{workspace}", 1)), "servers[0].transport", "only a stdio server"},
		{"idle_timeout without placeholder", server(stdio + `, "idle_timeout": "5m"`), "servers[0].idle_timeout", "remove it"},
		{"negative max_processes", server(stdio + `, "args": ["{user}"], "max_processes": -1`), "servers[0].max_processes", "positive"},
		{"max_processes without placeholder", server(stdio + `, "max_processes": 3`), "servers[0].max_processes", "remove it"},
		{"placeholder value with a reference", server(stdio + `, "env": ["ROOT=$env:HOME/{user}"]`), "servers[0].env[0]", "$env:ROOT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.json))
			var ve *ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, ErrInvalidManifest) {
				t.Fatalf("Parse() error = %v, want a *ValidationError", err)
			}
			for _, p := range ve.Problems {
				if p.Field == tt.wantField && strings.Contains(p.Fix, tt.wantFix) {
					return
				}
			}
			t.Errorf("Parse() problems = %q, want field %q with a fix mentioning %q", err, tt.wantField, tt.wantFix)
		})
	}
}

// TestParseNeverEchoesCredentials: the literal refused is not repeated in
// the error, which may end up in a log.
func TestParseNeverEchoesCredentials(t *testing.T) {
	_, err := Parse([]byte(`{"did": "did:key:z", "servers": [{"alias": "s", "transport": "stdio", "command": "srv",
		"env": ["TOKEN=ghp_SECRETVALUE"], "version": "1.0.0", "tools": ["t"]},
		{"alias": "h", "transport": "http", "url": "https://x.example/mcp", "headers": {"Authorization": "Bearer sk-SECRETVALUE"}, "version": "1.0.0", "tools": ["t"]}]}`))
	if err == nil || strings.Contains(err.Error(), "SECRETVALUE") {
		t.Errorf("Parse() error = %v, want a refusal that does not quote the credential", err)
	}
}

// TestDefaultManifest: the shipped manifest is valid and pins what it runs.
func TestDefaultManifest(t *testing.T) {
	m, err := Load(filepath.Join("..", "..", "manifests", "default.json"))
	if err != nil {
		t.Fatalf("Load(default.json) error = %v", err)
	}
	for _, s := range m.Servers {
		if _, v, ok := launcherPackage(s.Command, s.Args); ok && v != s.Version {
			t.Errorf("default.json: %s runs version %q, pins %q", s.Alias, v, s.Version)
		}
	}
}

func TestToolURI(t *testing.T) {
	tests := []struct {
		in      string
		want    ToolURI
		wantErr error
	}{
		{in: "matrix://tool/mcp/fs/read_file@2026.8.31", want: ToolURI{"fs", "read_file", "2026.8.31"}},
		{in: "matrix://tool/mcp/gh/repos/list@v1.2.3-rc.1", want: ToolURI{"gh", "repos/list", "v1.2.3-rc.1"}},
		{in: "matrix://tool/mcp/x/t@sha256:" + strings.Repeat("ab", 32), want: ToolURI{"x", "t", "sha256:" + strings.Repeat("ab", 32)}},
		{in: "matrix://tool/mcp/fs/read_file", wantErr: ErrUnpinnedTool},
		{in: "matrix://tool/mcp/fs/read_file@", wantErr: ErrUnpinnedTool},
		{in: "matrix://tool/mcp/fs/read_file@latest", wantErr: ErrUnpinnedTool},
		{in: "https://tool/mcp/fs/read_file@1.0.0", wantErr: ErrBadToolURI},
		{in: "matrix://tool/mcp/fs", wantErr: ErrBadToolURI},
		{in: "matrix://tool/mcp/fs/read file@1.0.0", wantErr: ErrBadToolURI},
	}
	for _, tt := range tests {
		got, err := ParseToolURI(tt.in)
		if !errors.Is(err, tt.wantErr) || got != tt.want {
			t.Errorf("ParseToolURI(%q) = %+v, %v; want %+v, %v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if tt.wantErr == nil && got.String() != tt.in {
			t.Errorf("ParseToolURI(%q).String() = %q, want the input", tt.in, got.String())
		}
	}
}

func TestResolve(t *testing.T) {
	m, err := Parse([]byte(validManifest))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		uri     string
		wantErr error
	}{
		{"matrix://tool/mcp/fs/read_file@2026.8.31", nil},
		{"matrix://tool/mcp/fs/read_file@2026.9.1", ErrUnknownTool},
		{"matrix://tool/mcp/fs/delete_all@2026.8.31", ErrUnknownTool},
		{"matrix://tool/mcp/nope/read_file@1.0.0", ErrUnknownTool},
	}
	for _, tt := range tests {
		u, err := ParseToolURI(tt.uri)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Resolve(u); !errors.Is(err, tt.wantErr) {
			t.Errorf("Resolve(%s) error = %v, want %v", tt.uri, err, tt.wantErr)
		}
	}
}

func TestManifestEffect(t *testing.T) {
	m, err := Parse([]byte(`{"did": "did:key:z", "allowed_side_effects": ["none", "read", "write"], "servers": [
		{"alias": "fs", "transport": "stdio", "command": "srv", "version": "1.0.0", "tools": ["read", "write"],
		 "side_effects": "read", "tool_side_effects": {"write": "write"}},
		{"alias": "web", "transport": "stdio", "command": "srv", "version": "1.0.0", "tools": ["fetch"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		alias, tool  string
		want         Effect
		wantDeclared bool
	}{
		{"fs", "read", EffectRead, true},
		{"fs", "write", EffectWrite, true},
		{"web", "fetch", "", false},
		{"nope", "read", "", false},
	}
	for _, tt := range tests {
		got, declared := m.Effect(tt.alias, tt.tool)
		if got != tt.want || declared != tt.wantDeclared {
			t.Errorf("Effect(%s, %s) = %q, %v; want %q, %v", tt.alias, tt.tool, got, declared, tt.want, tt.wantDeclared)
		}
	}
	for e, want := range map[Effect]bool{EffectNone: true, EffectRead: true, EffectWrite: true, EffectExternal: false, EffectSpend: false} {
		if got := m.Allows(e); got != want {
			t.Errorf("Allows(%s) = %v, want %v", e, got, want)
		}
	}
	if open := (&Manifest{}); !open.Allows(EffectSpend) {
		t.Error("a manifest without allowed_side_effects must admit every class")
	}
}

// TestShippedManifestsRunPerWorkspace: the manifests neobot ships give
// every workspace (and every web user) a filesystem root of its own, under
// one parent, with a bound and an idle stop.
func TestShippedManifestsRunPerWorkspace(t *testing.T) {
	for _, name := range []string{"default.json", "fly.json"} {
		t.Run(name, func(t *testing.T) {
			m, err := Load(filepath.Join("..", "..", "manifests", name))
			if err != nil {
				t.Fatal(err)
			}
			fs := m.Servers[0]
			if !fs.UsesPlace() || fs.MaxProcesses <= 0 || fs.IdleTimeout <= 0 {
				t.Fatalf("server %s: UsesPlace %v, max_processes %d, idle_timeout %v; want one process per workspace, bounded, stopped when idle",
					fs.Alias, fs.UsesPlace(), fs.MaxProcesses, time.Duration(fs.IdleTimeout))
			}
			root := func(p Place) string {
				v := placeValues{workspace: p.WorkspaceValue(), user: p.UserValue()}
				spec := v.expandSpec(fs)
				return spec.Args[len(spec.Args)-1]
			}
			places := []Place{
				{Platform: "slack", Workspace: "T1", User: "U1"},
				{Platform: "slack", Workspace: "T2", User: "U1"},
				{Platform: "web", Workspace: "web", User: "alice", Personal: true},
				{Platform: "web", Workspace: "web", User: "bob", Personal: true},
			}
			seen := map[string]bool{}
			for _, p := range places {
				r := root(p)
				if seen[r] || filepath.Dir(r) != filepath.Dir(root(places[0])) {
					t.Errorf("root of %+v = %s, want its own folder beside the others", p, r)
				}
				seen[r] = true
			}
		})
	}
}

func TestParsePlaceholders(t *testing.T) {
	m, err := Parse([]byte(`{"did": "did:key:z6MkTest", "servers": [{"alias": "fs", "transport": "stdio", "command": "srv",
		"args": ["--root", "/data/{workspace}/{user}"], "env": ["HOME_DIR=/data/{user}", "TOKEN=$env:TOKEN"],
		"create_dirs": ["/data/{workspace}/{user}"], "version": "1.0.0", "tools": ["t"],
		"idle_timeout": "90s", "max_processes": 3}]}`))
	if err != nil {
		t.Fatalf("Parse() error = %v", err)
	}
	s := m.Servers[0]
	if !s.UsesPlace() || time.Duration(s.IdleTimeout) != 90*time.Second || s.MaxProcesses != 3 {
		t.Errorf("Parse() = %+v, want a per-place server with its idle timeout and bound", s)
	}
	env, err := serverEnv(s, func(string) (string, bool) { return "secret", true }, placeValues{workspace: "slack.T1", user: "slack.T1.U1"})
	if err != nil || !slices.Contains(env, "HOME_DIR=/data/slack.T1.U1") || !slices.Contains(env, "TOKEN=secret") {
		t.Errorf("serverEnv() = %v, %v; want the place value and the reference resolved", env, err)
	}
}
