package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"

	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/manifests"
)

// envRef finds the variable names of $env: references.
var envRef = regexp.MustCompile(`\$env:([A-Za-z_][A-Za-z0-9_]*)`)

// loadManifest loads and validates the manifest at path, and refuses one
// that hands neobot's own credentials (chat tokens, model keys, the daemon
// token) to a tool server: a tool server is code neobot runs, not code
// neobot trusts with the keys to its chats and its wallet.
//
// The default path, when no such file exists where neobot runs, is the
// manifest built into the binary.
func loadManifest(path string) (*mcp.Manifest, error) {
	var (
		m   *mcp.Manifest
		err error
	)
	if _, statErr := os.Stat(path); path == manifests.DefaultPath && errors.Is(statErr, fs.ErrNotExist) {
		m, err = mcp.Parse(manifests.Default)
	} else {
		m, err = mcp.Load(path)
	}
	if err != nil {
		return nil, fmt.Errorf("NEO_MANIFEST=%s: %w", path, err)
	}
	var secret []string
	for _, s := range settings() {
		if s.secret {
			secret = append(secret, s.env)
		}
	}
	var errs []error
	refuse := func(alias, field, ref string) {
		for _, v := range envRef.FindAllStringSubmatch(ref, -1) {
			if slices.Contains(secret, v[1]) {
				errs = append(errs, fmt.Errorf("server %q: %s refers to $env:%s, which is neobot's own credential; give the server a credential of its own under another variable name", alias, field, v[1]))
			}
		}
	}
	for _, s := range m.Servers {
		for _, e := range s.Env {
			refuse(s.Alias, "env", e)
		}
		for k, v := range s.Headers {
			refuse(s.Alias, "header "+k, v)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("NEO_MANIFEST=%s: %w", path, err)
	}
	return m, nil
}
