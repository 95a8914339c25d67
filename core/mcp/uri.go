package mcp

import (
	"errors"
	"fmt"
	"strings"
)

// URIPrefix starts every tool URI.
const URIPrefix = "matrix://tool/mcp/"

// Errors returned by [ParseToolURI] and [Manifest.Resolve].
var (
	// ErrUnpinnedTool reports a tool URI without an @version: a bare-head
	// URI could silently run a different tool tomorrow.
	ErrUnpinnedTool = errors.New("tool URI is not version-pinned")
	// ErrBadToolURI reports a string that is not a tool URI.
	ErrBadToolURI = errors.New("not a tool URI")
	// ErrUnknownTool reports a tool the manifest does not declare.
	ErrUnknownTool = errors.New("tool not declared in the manifest")
)

// ToolURI names one tool of one pinned server:
// matrix://tool/mcp/<alias>/<tool>@<version>.
type ToolURI struct {
	Alias   string
	Tool    string
	Version string
}

// String formats the URI.
func (u ToolURI) String() string {
	return URIPrefix + u.Alias + "/" + u.Tool + "@" + u.Version
}

// ParseToolURI parses a tool URI. A URI without "@version" fails with
// ErrUnpinnedTool; anything else malformed with ErrBadToolURI.
func ParseToolURI(s string) (ToolURI, error) {
	rest, ok := strings.CutPrefix(s, URIPrefix)
	if !ok {
		return ToolURI{}, fmt.Errorf("mcp: %q: %w: want %s<alias>/<tool>@<version>", s, ErrBadToolURI, URIPrefix)
	}
	alias, tool, ok := strings.Cut(rest, "/")
	if !ok || !aliasRe.MatchString(alias) {
		return ToolURI{}, fmt.Errorf("mcp: %q: %w: bad server alias", s, ErrBadToolURI)
	}
	at := strings.LastIndex(tool, "@")
	if at < 0 {
		if !toolNameRe.MatchString(tool) {
			return ToolURI{}, fmt.Errorf("mcp: %q: %w: bad tool name", s, ErrBadToolURI)
		}
		return ToolURI{}, fmt.Errorf("mcp: %q: %w: append @<version>", s, ErrUnpinnedTool)
	}
	u := ToolURI{Alias: alias, Tool: tool[:at], Version: tool[at+1:]}
	switch {
	case !toolNameRe.MatchString(u.Tool):
		return ToolURI{}, fmt.Errorf("mcp: %q: %w: bad tool name", s, ErrBadToolURI)
	case u.Version == "":
		return ToolURI{}, fmt.Errorf("mcp: %q: %w: empty version", s, ErrUnpinnedTool)
	case !semverRe.MatchString(u.Version) && !digestRe.MatchString(u.Version):
		return ToolURI{}, fmt.Errorf("mcp: %q: %w: version must be semver or sha256:<hex>", s, ErrUnpinnedTool)
	}
	return u, nil
}

// URI returns the tool URI of tool on the server with alias.
func (s ServerSpec) URI(tool string) ToolURI {
	return ToolURI{Alias: s.Alias, Tool: tool, Version: s.Version}
}

// Resolve finds the server a URI points at. The tool must be declared and
// the version must be the one the manifest pins.
func (m *Manifest) Resolve(u ToolURI) (ServerSpec, error) {
	for _, s := range m.Servers {
		if s.Alias != u.Alias {
			continue
		}
		if s.Version != u.Version {
			return ServerSpec{}, fmt.Errorf("mcp: %s: %w: the manifest pins %s@%s", u, ErrUnknownTool, s.Alias, s.Version)
		}
		for _, t := range s.Tools {
			if t == u.Tool {
				return s, nil
			}
		}
		return ServerSpec{}, fmt.Errorf("mcp: %s: %w", u, ErrUnknownTool)
	}
	return ServerSpec{}, fmt.Errorf("mcp: %s: %w: no server %q", u, ErrUnknownTool, u.Alias)
}
