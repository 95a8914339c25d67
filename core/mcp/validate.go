package mcp

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// ErrInvalidManifest is matched (errors.Is) by every [ValidationError].
var ErrInvalidManifest = errors.New("invalid manifest")

// FieldError is one problem in a manifest: the field at fault, what is
// wrong with it and how to fix it. It never quotes a value that may be a
// credential.
type FieldError struct {
	Field   string // JSON path, such as "servers[1].env[0]"
	Problem string
	Fix     string
}

// Error renders "field problem; fix".
func (e FieldError) Error() string {
	return e.Field + " " + e.Problem + "; " + e.Fix
}

// ValidationError lists every problem found in a manifest.
type ValidationError struct {
	Problems []FieldError
}

// Error renders the problems on one line, separated by " | ".
func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Error()
	}
	return "invalid manifest: " + strings.Join(parts, " | ")
}

// Unwrap makes errors.Is(err, ErrInvalidManifest) true.
func (e *ValidationError) Unwrap() error { return ErrInvalidManifest }

var (
	didRe        = regexp.MustCompile(`^did:[a-z0-9]+:[A-Za-z0-9._:%-]+$`)
	aliasRe      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)
	envNameRe    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	envRefRe     = regexp.MustCompile(`^\$env:([A-Za-z_][A-Za-z0-9_]*)$`)
	headerRefRe  = regexp.MustCompile(`^(?:([A-Za-z][A-Za-z0-9-]*) )?\$env:([A-Za-z_][A-Za-z0-9_]*)$`)
	headerNameRe = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
	semverRe     = regexp.MustCompile(`^v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$`)
	digestRe     = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	toolNameRe   = regexp.MustCompile(`^[A-Za-z0-9_./-]{1,128}$`)
)

// Validate checks the manifest and returns a *ValidationError listing every
// problem, or nil.
func (m *Manifest) Validate() error { return m.validate(nil) }

func (m *Manifest) validate(problems []FieldError) error {
	add := func(field, problem, fix string) {
		problems = append(problems, FieldError{Field: field, Problem: problem, Fix: fix})
	}
	switch {
	case m.DID == "":
		add("did", "is missing", `give the agent's identifier, such as "did:key:z6Mk..."`)
	case !didRe.MatchString(m.DID):
		add("did", fmt.Sprintf("%q is not a DID", m.DID), `write it as "did:<method>:<id>", such as "did:key:z6Mk..."`)
	}
	for i, p := range m.EscalatePatterns {
		if strings.TrimSpace(p) == "" {
			add(fmt.Sprintf("escalate_patterns[%d]", i), "is empty and would match every tool", "remove it")
		}
	}
	seen := map[string]int{}
	for i := range m.Servers {
		s := &m.Servers[i]
		at := func(f string) string { return fmt.Sprintf("servers[%d].%s", i, f) }
		switch {
		case s.Alias == "":
			add(at("alias"), "is missing", `name the server, such as "fs"`)
		case !aliasRe.MatchString(s.Alias) || strings.Contains(s.Alias, "__") || strings.HasSuffix(s.Alias, "_"):
			add(at("alias"), fmt.Sprintf("%q is not a valid alias", s.Alias), "use 1-32 letters, digits, '-' or single '_', starting with a letter or digit")
		default:
			if j, dup := seen[strings.ToLower(s.Alias)]; dup {
				add(at("alias"), fmt.Sprintf("%q is already used by servers[%d]", s.Alias, j), "give each server its own alias")
			} else {
				seen[strings.ToLower(s.Alias)] = i
			}
		}
		switch s.Transport {
		case TransportStdio:
			problems = validateStdio(s, at, problems)
		case TransportHTTP:
			problems = validateHTTP(s, at, problems)
		case TransportInProcess:
		case "":
			add(at("transport"), "is missing", `use "stdio" or "http"`)
		case "sse":
			add(at("transport"), `"sse" (SSE-only transport) is not supported`, `use "http" for a streamable-HTTP server, or "stdio"`)
		default:
			add(at("transport"), fmt.Sprintf("%q is not a known transport", s.Transport), `use "stdio" or "http"`)
		}
		switch {
		case s.Version == "":
			add(at("version"), "is missing", `pin the server's version, such as "2026.8.31" or "sha256:<hex>"`)
		case !semverRe.MatchString(s.Version) && !digestRe.MatchString(s.Version):
			add(at("version"), fmt.Sprintf("%q is not a pinned version", s.Version), `write a semantic version such as "1.4.0" or "sha256:<64 hex digits>"`)
		}
		if s.StartTimeout < 0 {
			add(at("start_timeout"), "is negative", `write a positive duration such as "60s", or omit it`)
		}
		problems = validatePlace(s, at, problems)
		problems = validateTools(s, at, problems)
		problems = validateAuth(s, at, problems)
	}
	problems = m.validateEffects(problems)
	if len(problems) > 0 {
		return &ValidationError{Problems: problems}
	}
	return nil
}

func validateTools(s *ServerSpec, at func(string) string, problems []FieldError) []FieldError {
	add := func(field, problem, fix string) {
		problems = append(problems, FieldError{Field: field, Problem: problem, Fix: fix})
	}
	switch {
	case s.Tools == nil:
		return append(problems, FieldError{Field: at("tools"), Problem: "is missing", Fix: "list exactly the tools the server advertises (`neobot check` prints them), or [] for a server with only prompts or resources"})
	}
	names := map[string]bool{}
	for j, t := range s.Tools {
		f := fmt.Sprintf("%s[%d]", at("tools"), j)
		switch {
		case !toolNameRe.MatchString(t):
			add(f, fmt.Sprintf("%q is not a valid MCP tool name", t), "use 1-128 letters, digits, '_', '-', '.' or '/'")
		case names[t]:
			add(f, fmt.Sprintf("%q is listed twice", t), "list each tool once")
		}
		names[t] = true
	}
	return problems
}

func validateStdio(s *ServerSpec, at func(string) string, problems []FieldError) []FieldError {
	add := func(field, problem, fix string) {
		problems = append(problems, FieldError{Field: field, Problem: problem, Fix: fix})
	}
	if s.Command == "" {
		add(at("command"), "is missing", `give the program that runs the server, such as "npx"`)
	}
	if s.URL != "" {
		add(at("url"), "is set on a stdio server", `remove it, or use transport "http"`)
	}
	if len(s.Headers) > 0 {
		add(at("headers"), "are set on a stdio server", `remove them, or use transport "http"`)
	}
	for j, e := range s.Env {
		f := fmt.Sprintf("%s[%d]", at("env"), j)
		name, value, ok := strings.Cut(e, "=")
		switch {
		case !ok || !envNameRe.MatchString(name):
			add(f, "is not NAME=$env:VAR", `write it as "NAME=$env:VAR"`)
		case !envRefRe.MatchString(value) && placeTemplate(value):
			// A place value, such as "/data/{workspace}": not a credential.
		case !envRefRe.MatchString(value):
			// Never quote the value: it may be a credential.
			add(f, fmt.Sprintf("gives %s a literal value; credentials come only from the environment", name),
				fmt.Sprintf(`write "%s=$env:%s" and set %s in neobot's environment`, name, name, name))
		}
	}
	if pkg, version, ok := launcherPackage(s.Command, s.Args); ok {
		switch {
		case version == "" || version == "latest" || version == "next":
			add(at("args"), fmt.Sprintf("runs package %q without a pinned version", pkg),
				fmt.Sprintf(`write "%s@%s"`, pkg, orPlaceholder(s.Version)))
		case s.Version != "" && strings.TrimPrefix(version, "v") != strings.TrimPrefix(s.Version, "v"):
			add(at("version"), fmt.Sprintf("is %q but args run %s@%s", s.Version, pkg, version), "make the two versions agree")
		}
	}
	return problems
}

func orPlaceholder(v string) string {
	if v == "" {
		return "<version>"
	}
	return v
}

// launcherPackage finds the package a package-runner command (npx, uvx,
// bunx, pnpx) runs and the version it pins, if any.
func launcherPackage(command string, args []string) (pkg, version string, ok bool) {
	base := strings.TrimSuffix(filepath.Base(command), filepath.Ext(command))
	if !slices.Contains([]string{"npx", "bunx", "pnpx", "uvx"}, base) {
		return "", "", false
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--package" || a == "-p" || a == "--from" {
			if i+1 < len(args) {
				return splitPackage(base, args[i+1])
			}
			return "", "", false
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		return splitPackage(base, a)
	}
	return "", "", false
}

func splitPackage(launcher, spec string) (pkg, version string, ok bool) {
	if launcher == "uvx" {
		if p, v, found := strings.Cut(spec, "=="); found {
			return p, v, true
		}
	}
	scope := ""
	rest := spec
	if strings.HasPrefix(spec, "@") {
		if i := strings.Index(spec, "/"); i > 0 {
			scope, rest = spec[:i+1], spec[i+1:]
		}
	}
	name, v, _ := strings.Cut(rest, "@")
	return scope + name, v, true
}

func validateHTTP(s *ServerSpec, at func(string) string, problems []FieldError) []FieldError {
	add := func(field, problem, fix string) {
		problems = append(problems, FieldError{Field: field, Problem: problem, Fix: fix})
	}
	if s.URL == "" {
		add(at("url"), "is missing", `give the server's streamable-HTTP endpoint, such as "https://example.com/mcp"`)
	} else if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		add(at("url"), "is not an http or https URL", `write it as "https://host/path"`)
	} else if u.User != nil {
		add(at("url"), "carries credentials in the URL", `remove them and send them in a header such as "Authorization": "Bearer $env:VAR"`)
	} else if u.Scheme == "http" && !Loopback(u.Hostname()) {
		add(at("url"), "uses plain http to another machine, where anyone on the way can read and change the tool calls and their headers",
			`use "https://`+u.Host+u.Path+`"; plain http is allowed only on loopback (127.0.0.1, ::1, localhost)`)
	}
	if s.Command != "" || len(s.Args) > 0 {
		add(at("command"), "is set on an http server", `remove command and args, or use transport "stdio"`)
	}
	if len(s.Env) > 0 {
		add(at("env"), "is set on an http server", `send credentials in headers instead`)
	}
	if len(s.CreateDirs) > 0 {
		add(at("create_dirs"), "is set on an http server", "remove it")
	}
	keys := make([]string, 0, len(s.Headers))
	for k := range s.Headers {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		f := at("headers." + k)
		if !headerNameRe.MatchString(k) {
			add(f, "is not a valid header name", "use letters, digits and '-'")
			continue
		}
		if !headerRefRe.MatchString(s.Headers[k]) {
			canon := http.CanonicalHeaderKey(k)
			add(f, "has a literal value; credentials come only from the environment",
				fmt.Sprintf(`write "$env:VAR", or a scheme then a reference such as "Bearer $env:VAR", and set VAR in neobot's environment (header %s)`, canon))
		}
	}
	return problems
}

// Loopback reports whether host (no port) is this machine: localhost, or
// an address in 127.0.0.0/8 or ::1. Plain http is safe only there.
func Loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// placeTemplate reports whether an env value is a place value: it uses a
// place placeholder and refers to no variable.
func placeTemplate(value string) bool {
	return (strings.Contains(value, PlaceholderWorkspace) || strings.Contains(value, PlaceholderUser)) &&
		!strings.Contains(value, "$env:")
}

// validatePlace checks the place placeholders and the settings of the
// processes they make.
func validatePlace(s *ServerSpec, at func(string) string, problems []FieldError) []FieldError {
	add := func(field, problem, fix string) {
		problems = append(problems, FieldError{Field: field, Problem: problem, Fix: fix})
	}
	known := func(field, v string) {
		for _, p := range placeholderRe.FindAllString(v, -1) {
			if p != PlaceholderWorkspace && p != PlaceholderUser {
				add(field, fmt.Sprintf("uses %s, which is not a place placeholder", p), "use {workspace} or {user}")
			}
		}
	}
	for j, a := range s.Args {
		known(fmt.Sprintf("%s[%d]", at("args"), j), a)
	}
	for j, e := range s.Env {
		known(fmt.Sprintf("%s[%d]", at("env"), j), e)
	}
	for j, d := range s.CreateDirs {
		known(fmt.Sprintf("%s[%d]", at("create_dirs"), j), d)
	}
	if placeholderRe.MatchString(s.Command) {
		add(at("command"), "uses a placeholder", "use placeholders in args, env or create_dirs only")
	}
	uses := s.UsesPlace()
	if s.Transport != TransportStdio {
		headers := ""
		for _, v := range s.Headers {
			headers += v
		}
		if uses || placeholderRe.MatchString(s.URL+headers) {
			add(at("transport"), "is not stdio but the server uses a place placeholder",
				"place placeholders make one process per place, so only a stdio server may use them")
		}
	}
	switch {
	case s.IdleTimeout < 0:
		add(at("idle_timeout"), "is negative", `write a positive duration such as "10m", or omit it`)
	case s.IdleTimeout > 0 && !uses && s.Auth != AuthPerUser:
		add(at("idle_timeout"), "is set on a server that uses no place placeholder", "remove it: only a server with {workspace} or {user} in its args, env or create_dirs stops when idle")
	}
	switch {
	case s.MaxProcesses < 0:
		add(at("max_processes"), "is negative", "write a positive number, or omit it")
	case s.MaxProcesses > 0 && !uses && s.Auth != AuthPerUser:
		add(at("max_processes"), "is set on a server that uses no place placeholder", "remove it: only a server with {workspace} or {user} in its args, env or create_dirs runs more than one process")
	}
	return problems
}

// validateAuth checks a server's auth and oauth fields.
func validateAuth(s *ServerSpec, at func(string) string, problems []FieldError) []FieldError {
	add := func(field, problem, fix string) {
		problems = append(problems, FieldError{Field: field, Problem: problem, Fix: fix})
	}
	switch s.Auth {
	case "":
		if s.OAuth != nil {
			add(at("oauth"), `is set but auth is not`, `add "auth": "oauth" (or "per_user"), or remove oauth`)
		}
		return problems
	case AuthOAuth, AuthPerUser:
	default:
		add(at("auth"), fmt.Sprintf("%q is not a known auth mode", s.Auth), `use "oauth" (one login for the bot) or "per_user" (each person connects their own account)`)
		return problems
	}
	if s.Transport != TransportHTTP {
		add(at("auth"), "is set on a server that is not http", `OAuth applies to remote servers: use "transport": "http", or remove auth`)
	}
	for k := range s.Headers {
		if strings.EqualFold(k, "Authorization") {
			add(at("headers.Authorization"), "is set together with auth", "the OAuth token goes in Authorization: remove the header, or remove auth")
		}
	}
	if o := s.OAuth; o != nil {
		if o.ClientSecret != "" && !envRefRe.MatchString(o.ClientSecret) {
			add(at("oauth.client_secret"), "is not a $env: reference", `write "$env:VAR" and set VAR in neobot's environment; a manifest never holds a secret`)
		}
		if o.ClientSecret != "" && o.ClientID == "" {
			add(at("oauth.client_secret"), "is set without client_id", "give the pre-registered client's client_id too")
		}
	}
	return problems
}
