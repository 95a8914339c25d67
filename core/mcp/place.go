package mcp

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"time"
)

// Place placeholders a stdio server's args, env values and create_dirs
// may use. A server that uses one runs one process per value (see
// docs/manifest.md).
const (
	// PlaceholderWorkspace stands for the workspace of the call: the Slack
	// workspace or Discord guild, or the person alone in a personal place
	// (a direct message, a web user).
	PlaceholderWorkspace = "{workspace}"
	// PlaceholderUser stands for the person who made the call, within
	// their workspace.
	PlaceholderUser = "{user}"
)

// Defaults for a server that uses a place placeholder.
const (
	// DefaultIdleTimeout is how long a place's process stays up after its
	// last call when the manifest gives no idle_timeout.
	DefaultIdleTimeout = 10 * time.Minute
	// DefaultMaxProcesses bounds a server's live place processes when the
	// manifest gives no max_processes.
	DefaultMaxProcesses = 8
)

// templateValue returns what the placeholders stand for in the one
// process started at boot to learn a server's tools: "_template-" and
// random hex, so that instances booting side by side on a shared volume
// never use, nor remove, one another's. No place encodes to it: an
// encoded value's '_' is followed by two upper-case hex digits, "h" or
// nothing.
func templateValue() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return "_template-" + hex.EncodeToString(b[:])
}

// Place is where a tool call is made: the conversation's platform and
// workspace, and who asked. A server that uses a place placeholder gets a
// process of its own for each value the placeholders take.
type Place struct {
	// Platform is the adapter the conversation is on ("slack", "web").
	Platform string
	// Workspace is the platform's workspace (Slack team, Discord guild).
	Workspace string
	// User is the person's platform user ID.
	User string
	// Personal marks a place that belongs to one person rather than to a
	// team (a direct message, a web user): there {workspace} is the
	// person's own, the same value as {user}.
	Personal bool
}

// IsZero reports whether p names no place: a call outside a conversation.
func (p Place) IsZero() bool { return p.Platform == "" }

// WorkspaceValue returns what {workspace} stands for in p:
// "<platform>.<workspace>", or p's UserValue in a personal place. Each part
// is encoded by [EscapePart], so the value is one safe path element.
func (p Place) WorkspaceValue() string {
	if p.Personal {
		return p.UserValue()
	}
	return EscapePart(p.Platform) + "." + EscapePart(p.Workspace)
}

// UserValue returns what {user} stands for in p:
// "<platform>.<workspace>.<user>", each part encoded by [EscapePart].
func (p Place) UserValue() string {
	return EscapePart(p.Platform) + "." + EscapePart(p.Workspace) + "." + EscapePart(p.User)
}

// maxPart is the longest encoded part kept as it is; a longer one is
// replaced by a hash, so a value always fits in a file name.
const maxPart = 64

// EscapePart encodes one part of a placeholder value so that it is safe as
// a path element, a command-line argument and an environment value:
// ASCII letters and digits stay, '-' stays except first, and every other
// byte becomes "_" and two upper-case hex digits ("/" is "_2F", "." is
// "_2E"). The empty string is "_"; an encoding longer than 64 bytes is
// "_h" and 32 hex digits of its SHA-256. The result never contains '/' or
// '.', never starts with '-' or '.', and two parts differ exactly when
// their encodings do (but for hash collisions).
func EscapePart(s string) string {
	if s == "" {
		return "_"
	}
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-' && i > 0:
			b.WriteByte(c)
		default:
			b.WriteByte('_')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		}
		if b.Len() > maxPart {
			sum := sha256.Sum256([]byte(s))
			return "_h" + hex.EncodeToString(sum[:16])
		}
	}
	return b.String()
}

// placeholderRe finds anything written like a placeholder, known or not.
var placeholderRe = regexp.MustCompile(`\{[a-z][a-z_]*\}`)

// usedPlaceholders reports which place placeholders spec uses.
func usedPlaceholders(spec ServerSpec) (workspace, user bool) {
	check := func(s string) {
		workspace = workspace || strings.Contains(s, PlaceholderWorkspace)
		user = user || strings.Contains(s, PlaceholderUser)
	}
	for _, a := range spec.Args {
		check(a)
	}
	for _, e := range spec.Env {
		check(e)
	}
	for _, d := range spec.CreateDirs {
		check(d)
	}
	return workspace, user
}

// UsesPlace reports whether the server runs one process per place: its
// args, env or create_dirs use {workspace} or {user}.
func (s ServerSpec) UsesPlace() bool {
	w, u := usedPlaceholders(s)
	return w || u
}

// placeValues are what the placeholders stand for in one process.
type placeValues struct {
	workspace, user string
}

// key names the process these values start.
func (v placeValues) key() string {
	switch {
	case v.user == "":
		return v.workspace
	case v.workspace == "":
		return v.user
	}
	return v.workspace + " " + v.user
}

// expand replaces the placeholders in s.
func (v placeValues) expand(s string) string {
	if !strings.Contains(s, "{") {
		return s
	}
	s = strings.ReplaceAll(s, PlaceholderWorkspace, v.workspace)
	return strings.ReplaceAll(s, PlaceholderUser, v.user)
}

// expandSpec returns spec with the placeholders of its args and
// create_dirs replaced. Env values are expanded by serverEnv, which tells
// a placeholder value from a $env: reference.
func (v placeValues) expandSpec(spec ServerSpec) ServerSpec {
	out := spec
	out.Args = make([]string, len(spec.Args))
	for i, a := range spec.Args {
		out.Args[i] = v.expand(a)
	}
	out.CreateDirs = make([]string, len(spec.CreateDirs))
	for i, d := range spec.CreateDirs {
		out.CreateDirs[i] = v.expand(d)
	}
	return out
}

// templateRoots returns, for each of spec's create_dirs that uses a
// placeholder, the path up to the first element that does, with the
// template's values: what the boot-time template process created and the
// manager removes once it has learnt the tools.
func templateRoots(spec ServerSpec, v placeValues) []string {
	var out []string
	for _, d := range spec.CreateDirs {
		i := strings.Index(d, PlaceholderWorkspace)
		if j := strings.Index(d, PlaceholderUser); j >= 0 && (i < 0 || j < i) {
			i = j
		}
		if i < 0 {
			continue
		}
		end := strings.IndexAny(d[i:], `/\`)
		root := d
		if end >= 0 {
			root = d[:i+end]
		}
		out = append(out, v.expand(root))
	}
	return out
}
