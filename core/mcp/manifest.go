package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"
)

// Transports a server may use.
const (
	// TransportStdio runs the server as a local subprocess speaking JSON-RPC
	// over its stdin and stdout.
	TransportStdio = "stdio"
	// TransportHTTP connects to a remote streamable-HTTP server.
	TransportHTTP = "http"
	// TransportInProcess connects to a Go [Server] given in
	// [Options.InProcess]. It exists for Go code and tests; a manifest file
	// cannot use it.
	TransportInProcess = "inprocess"
)

// Manifest is an agent manifest: the agent's identity, the MCP servers it
// may start and exactly which tools each one advertises.
type Manifest struct {
	// DID is the agent's decentralized identifier ("did:method:id").
	DID string `json:"did"`
	// Servers are the MCP servers, in the order they are listed.
	Servers []ServerSpec `json:"servers"`
	// EscalatePatterns add to the default escalate patterns: a tool that
	// declares no side-effect class and whose name contains one of them
	// (case-insensitive) counts as spend, reachable only through
	// core_execute.
	EscalatePatterns []string `json:"escalate_patterns,omitempty"`
	// AllowedSideEffects bounds what any call may do, whatever a skill
	// allows: a tool of a class not listed is never advertised and every
	// call to it is refused ("spend" covers core_execute). Absent admits
	// every class.
	AllowedSideEffects []string `json:"allowed_side_effects,omitempty"`
}

// ServerSpec declares one MCP server.
type ServerSpec struct {
	// Alias names the server in function names (alias__tool) and tool URIs.
	Alias string `json:"alias"`
	// Transport is TransportStdio or TransportHTTP.
	Transport string `json:"transport"`
	// Command and Args start a stdio server.
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Env adds variables to a stdio server's environment, each written
	// "NAME=$env:VAR": the value is read from neobot's environment when the
	// server starts. Literal values are refused.
	Env []string `json:"env,omitempty"`
	// CreateDirs are directories created (with parents) before a stdio
	// server starts, such as the folder a filesystem server is scoped to.
	// Relative paths are relative to neobot's working directory.
	CreateDirs []string `json:"create_dirs,omitempty"`
	// URL is a streamable-HTTP server's endpoint.
	URL string `json:"url,omitempty"`
	// Headers are sent with every HTTP request. A value is "$env:VAR" or a
	// single scheme word followed by one, such as "Bearer $env:VAR".
	Headers map[string]string `json:"headers,omitempty"`
	// Auth is how neobot authorizes to an http server beyond its headers:
	// "" (not at all), [AuthOAuth] (one OAuth grant for the whole bot, from
	// `neobot mcp login ALIAS`) or [AuthPerUser] (each person connects
	// their own account). docs/mcp-auth.md tells the whole story.
	Auth string `json:"auth,omitempty"`
	// OAuth configures the OAuth client of a server with Auth set; it may
	// be omitted when the server's authorization server supports dynamic
	// registration or client ID metadata documents.
	OAuth *OAuthSpec `json:"oauth,omitempty"`
	// Version pins the server: a semantic version or "sha256:<hex>". Tool
	// URIs carry it.
	Version string `json:"version"`
	// Tools lists exactly the tools the server advertises.
	Tools []string `json:"tools"`
	// SideEffects is the class of every tool of the server (see
	// [Effect]) unless ToolSideEffects says otherwise for a tool.
	SideEffects string `json:"side_effects,omitempty"`
	// ToolSideEffects gives the class of the tools that differ from
	// SideEffects, keyed by tool name.
	ToolSideEffects map[string]string `json:"tool_side_effects,omitempty"`
	// StartTimeout bounds start plus initialize for this server, such as
	// "90s"; zero means [Options.StartTimeout].
	StartTimeout Duration `json:"start_timeout,omitzero"`
	// IdleTimeout stops a place's process of a server that uses a place
	// placeholder ({workspace}, {user}) once no call has used it for this
	// long, such as "10m"; zero means [DefaultIdleTimeout].
	IdleTimeout Duration `json:"idle_timeout,omitzero"`
	// MaxProcesses bounds how many places' processes of a server that uses
	// a place placeholder run at once; when a new place needs one, the
	// process idle the longest stops first. Zero means
	// [DefaultMaxProcesses].
	MaxProcesses int `json:"max_processes,omitempty"`
}

// Values of [ServerSpec.Auth].
const (
	// AuthOAuth authorizes with one OAuth grant that the operator obtains
	// with `neobot mcp login ALIAS`.
	AuthOAuth = "oauth"
	// AuthPerUser authorizes each person's calls with their own OAuth
	// grant, obtained through a "connect your account" link.
	AuthPerUser = "per_user"
)

// OAuthSpec is the OAuth client of a server with [ServerSpec.Auth] set.
type OAuthSpec struct {
	// ClientID is a client registered beforehand at the server's
	// authorization server; empty means neobot registers itself (client
	// ID metadata document or dynamic registration).
	ClientID string `json:"client_id,omitempty"`
	// ClientSecret is the pre-registered client's secret, as "$env:VAR".
	// Literal secrets are refused.
	ClientSecret string `json:"client_secret,omitempty"`
	// Scope is asked for when neither the server's challenge nor its
	// metadata say which scope to ask.
	Scope string `json:"scope,omitempty"`
}

// Duration is a time.Duration written in JSON as a string ("30s", "2m").
type Duration time.Duration

// MarshalJSON writes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New(`want a duration string such as "30s"`)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf(`%q is not a duration; write one such as "30s"`, s)
	}
	*d = Duration(v)
	return nil
}

// badDurationRe finds the quoted value in Duration's error.
var badDurationRe = regexp.MustCompile(`^("(?:[^"\\]|\\.)*") is not a duration`)

// Load reads and validates the manifest at path.
func Load(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mcp: read manifest: %w", err)
	}
	m, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	return m, nil
}

// Parse decodes and validates a manifest. Unknown fields are refused so a
// misspelt field never silently drops a setting. The error is a
// *ValidationError naming each bad field and its fix.
func Parse(data []byte) (*Manifest, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, decodeError(err, data)
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		return nil, &ValidationError{Problems: []FieldError{{Field: "(document)", Problem: "has content after the manifest object", Fix: "keep one JSON object in the file"}}}
	}
	var problems []FieldError
	for i, s := range m.Servers {
		if s.Transport == TransportInProcess {
			problems = append(problems, FieldError{
				Field: fmt.Sprintf("servers[%d].transport", i), Problem: `"inprocess" is only for Go code`,
				Fix: `use "stdio" or "http"`,
			})
		}
	}
	if err := m.validate(problems); err != nil {
		return nil, err
	}
	return &m, nil
}

// decodeError turns a JSON decoding failure of data into a
// ValidationError that names the field when the decoder knows it.
func decodeError(err error, data []byte) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	fe := FieldError{Field: "(document)", Problem: "is not valid JSON: " + err.Error(), Fix: "fix the JSON syntax"}
	switch {
	case errors.As(err, &typeErr):
		fe = FieldError{Field: typeErr.Field, Problem: "has the wrong type (" + typeErr.Value + ")", Fix: "see docs/manifest.md for the field's type"}
	case errors.As(err, &syntaxErr):
		fe.Problem = fmt.Sprintf("is not valid JSON at byte %d: %v", syntaxErr.Offset, err)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		fe = FieldError{Field: strings.Trim(name, `"`), Problem: "is not a manifest field", Fix: "remove it or correct its spelling (see docs/manifest.md)"}
	case strings.Contains(err.Error(), "duration"):
		// Duration's error has no field; name the one that holds the value.
		field := "start_timeout"
		if m := badDurationRe.FindStringSubmatch(err.Error()); m != nil &&
			regexp.MustCompile(`"idle_timeout"\s*:\s*`+regexp.QuoteMeta(m[1])).Match(data) {
			field = "idle_timeout"
		}
		fe = FieldError{Field: field, Problem: err.Error(), Fix: `write a duration such as "30s"`}
	}
	return &ValidationError{Problems: []FieldError{fe}}
}
