package mcp

import (
	"fmt"
	"os"
	"strings"
)

// MissingEnvError reports a $env: reference whose variable is not set when
// the server starts.
type MissingEnvError struct {
	Alias string
	Var   string // the variable that is not set
	Field string // where the reference is, such as "env GITHUB_TOKEN"
}

// Error says which variable to set.
func (e *MissingEnvError) Error() string {
	return fmt.Sprintf("environment variable %s is not set (needed by %s of server %q); set it and restart", e.Var, e.Field, e.Alias)
}

// LookupEnv reads a variable of neobot's environment.
type LookupEnv func(name string) (string, bool)

// inheritedEnv reports whether a variable of neobot's own environment is
// passed to stdio servers. Only what a launcher needs to run (path, home,
// locale, temp dir, package-manager settings) is passed, so neobot's own
// secrets (chat tokens, LLM keys) never reach a tool server unless the
// manifest names them.
func inheritedEnv(name string) bool {
	switch name {
	case "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TZ",
		"TMPDIR", "TMP", "TEMP", "TERM", "SYSTEMROOT", "APPDATA", "LOCALAPPDATA", "USERPROFILE",
		"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
		"http_proxy", "https_proxy", "no_proxy":
		return true
	}
	for _, p := range []string{"npm_config_", "NPM_CONFIG_", "XDG_", "UV_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// serverEnv builds a stdio server's environment: the inherited variables
// plus the manifest's references, resolved now, and its place values
// (see placeTemplate) with the placeholders standing for vals.
func serverEnv(spec ServerSpec, lookup LookupEnv, vals placeValues) ([]string, error) {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if inheritedEnv(name) {
			env = append(env, kv)
		}
	}
	for _, e := range spec.Env {
		name, ref, _ := strings.Cut(e, "=")
		if placeTemplate(ref) {
			env = append(env, name+"="+vals.expand(ref))
			continue
		}
		m := envRefRe.FindStringSubmatch(ref)
		if m == nil {
			return nil, fmt.Errorf("mcp: %s: env %s is not a $env: reference", spec.Alias, name)
		}
		v, ok := lookup(m[1])
		if !ok {
			return nil, &MissingEnvError{Alias: spec.Alias, Var: m[1], Field: "env " + name}
		}
		env = append(env, name+"="+v)
	}
	return env, nil
}

// serverHeaders resolves an HTTP server's header references.
func serverHeaders(spec ServerSpec, lookup LookupEnv) (map[string]string, error) {
	out := make(map[string]string, len(spec.Headers))
	for k, ref := range spec.Headers {
		m := headerRefRe.FindStringSubmatch(ref)
		if m == nil {
			return nil, fmt.Errorf("mcp: %s: header %s is not a $env: reference", spec.Alias, k)
		}
		v, ok := lookup(m[2])
		if !ok {
			return nil, &MissingEnvError{Alias: spec.Alias, Var: m[2], Field: "header " + k}
		}
		if m[1] != "" {
			v = m[1] + " " + v
		}
		out[k] = v
	}
	return out, nil
}
