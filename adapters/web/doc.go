// Package web is neobot's third platform: a versioned JSON API over HTTP
// with live Server-Sent Events, and a small chat page served from the
// binary.
//
// A conversation is a core.Thread on platform "web" (workspace "web", the
// owner's name as channel, a random ID), so it has the same journal,
// exactly-once turns, memory scope and skills as a Slack or Discord
// thread. Messages go through the shared intake; approvals are the shared
// core.Gates, answered over HTTP with the same rules as chat buttons.
//
// Every /v1 endpoint but the login exchange needs a bearer token. Tokens
// map to user names and are kept only as SHA-256 hashes; a one-time login
// code (neobot web prints a link with one) is exchanged for a session
// token held in memory. Each conversation belongs to its creator.
package web
