package store

import "context"

// MCP servers' OAuth grants live in mcp_tokens/<key>, sealed by core/mcp
// before they get here: the file never holds a token in clear. (*DB)
// satisfies mcp.TokenStore (checked in cmd/neobot/wiring.go).

// MCPToken returns the sealed grant stored under key, or nil.
func (db *DB) MCPToken(ctx context.Context, key string) ([]byte, error) {
	return db.sealed(ctx, bucketMCPTokens, key, "mcp token")
}

// PutMCPToken stores a sealed grant under key, replacing any.
func (db *DB) PutMCPToken(ctx context.Context, key string, sealed []byte) error {
	return db.putSealed(ctx, bucketMCPTokens, key, sealed, "mcp token")
}

// DeleteMCPToken removes the grant under key; a missing key is fine.
func (db *DB) DeleteMCPToken(ctx context.Context, key string) error {
	return db.deleteSealed(ctx, bucketMCPTokens, key, "mcp token")
}
