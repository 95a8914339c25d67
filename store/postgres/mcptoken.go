package postgres

import "context"

// MCPToken returns the sealed grant stored under key, or nil.
func (db *DB) MCPToken(ctx context.Context, key string) ([]byte, error) {
	return db.sealed(ctx, "neo_mcp_tokens", key, "mcp token")
}

// PutMCPToken stores a sealed grant under key, replacing any.
func (db *DB) PutMCPToken(ctx context.Context, key string, sealed []byte) error {
	return db.putSealed(ctx, "neo_mcp_tokens", key, sealed, "mcp token")
}

// DeleteMCPToken removes the grant under key; a missing key is fine.
func (db *DB) DeleteMCPToken(ctx context.Context, key string) error {
	return db.deleteSealed(ctx, "neo_mcp_tokens", key, "mcp token")
}
