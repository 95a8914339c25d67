// Package manifests holds the agent manifests that ship with neobot. The
// default one is built into the binary, so neobot runs from any directory.
package manifests

import _ "embed"

// DefaultPath is NEO_MANIFEST's default, relative to the working directory.
const DefaultPath = "manifests/default.json"

// Default is the default manifest: a filesystem server per workspace (and
// per web user), each over its own folder under ./workspace.
//
//go:embed default.json
var Default []byte
