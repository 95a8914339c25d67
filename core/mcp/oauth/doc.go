// Package oauth is neobot's OAuth 2.1 client for streamable-HTTP MCP
// servers, as the MCP authorization specification (2025-11-25, with the
// 2025-03-26 fallbacks) describes it.
//
// A server that wants a token answers 401 with a WWW-Authenticate
// challenge. [Flow] follows it: the protected resource metadata the
// challenge names (or the well-known locations), then the authorization
// server's metadata (RFC 8414, then OpenID discovery, then the 2025-03-26
// default endpoints at the server's origin), a client identity (a
// pre-registered client, a client ID metadata document, or dynamic
// registration per RFC 7591), and the authorization code grant with PKCE
// S256 and the resource parameter (RFC 8707). [Transport] is the
// http.RoundTripper that puts the bearer on every request, refreshes it
// before it expires, and reacts to 401 and to 403 insufficient_scope
// (step-up) a bounded number of times.
//
// The package imports only the standard library: where tokens are kept
// ([GrantStore]) and how a person approves an authorization ([Flow]'s
// Authorize) are the caller's.
package oauth
