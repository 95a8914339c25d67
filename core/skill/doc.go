// Package skill is Neo's capability gate as configured: named profiles of
// instructions, allowed tools and side-effect rules, bound to the places
// Neo talks in.
//
// A skill lists the tools it may use as pinned tool URIs with globs
// (matrix://tool/mcp/fs/read_*@2026.8.31), says for each side-effect class
// whether calls are allowed, asked (a person approves each call) or
// denied, and whether it may spend through core_execute. Skills are bound
// to places: a platform, a workspace or guild, a channel (its threads
// inherit), or a platform's direct messages. A place with no binding gets
// the default skill, which allows everything the manifest does, except
// that it asks before each call of a tool whose class the manifest does
// not declare.
//
// The gate itself runs in core/tools, before any side effect: this
// package only answers what a skill allows.
package skill
