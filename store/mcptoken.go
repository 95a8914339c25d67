package store

import (
	"context"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// MCP servers' OAuth grants live in mcp_tokens/<key>, sealed by core/mcp
// before they get here: the file never holds a token in clear. (*DB)
// satisfies mcp.TokenStore (checked in cmd/neobot/wiring.go).

// MCPToken returns the sealed grant stored under key, or nil.
func (db *DB) MCPToken(ctx context.Context, key string) ([]byte, error) {
	var out []byte
	err := db.read(ctx, func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketMCPTokens).Get([]byte(key)); v != nil {
			out = append([]byte(nil), v...)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: mcp token: %w", err)
	}
	return out, nil
}

// PutMCPToken stores a sealed grant under key, replacing any.
func (db *DB) PutMCPToken(ctx context.Context, key string, sealed []byte) error {
	if key == "" || len(sealed) == 0 {
		return errors.New("store: put mcp token: empty key or value")
	}
	err := db.write(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMCPTokens).Put([]byte(key), sealed)
	})
	if err != nil {
		return fmt.Errorf("store: put mcp token: %w", err)
	}
	return nil
}

// DeleteMCPToken removes the grant under key; a missing key is fine.
func (db *DB) DeleteMCPToken(ctx context.Context, key string) error {
	err := db.write(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMCPTokens).Delete([]byte(key))
	})
	if err != nil {
		return fmt.Errorf("store: delete mcp token: %w", err)
	}
	return nil
}
