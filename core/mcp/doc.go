// Package mcp runs the agent's MCP tool servers: it loads the DID-bound
// agent manifest, starts every declared server (stdio subprocess or
// streamable HTTP) in parallel, checks that each server advertises exactly
// the tools the manifest declares (the bijection), keeps the servers alive,
// and calls their tools.
//
// It is the only package that imports mark3labs/mcp-go; everything it
// exports speaks plain Go types ([Tool], [Result], [Content]), so the rest of
// neobot never sees the SDK.
//
// The manifest format is documented in docs/manifest.md.
package mcp
