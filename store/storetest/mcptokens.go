package storetest

import (
	"bytes"
	"context"
	"testing"
)

// MCPTokens keeps MCP servers' sealed OAuth grants, with the method set of
// mcp.TokenStore.
type MCPTokens interface {
	MCPToken(ctx context.Context, key string) ([]byte, error)
	PutMCPToken(ctx context.Context, key string, sealed []byte) error
	DeleteMCPToken(ctx context.Context, key string) error
}

// RunMCPTokens runs the token part of the suite against stores from open.
func RunMCPTokens(t *testing.T, open func(t *testing.T) MCPTokens) {
	t.Run("MCPTokens", func(t *testing.T) { testMCPTokens(t, open(t)) })
}

func testMCPTokens(t *testing.T, s MCPTokens) {
	ctx := context.Background()
	if v, err := s.MCPToken(ctx, "op/linear"); err != nil || v != nil {
		t.Fatalf("MCPToken(absent) = %q, %v; want nil, nil", v, err)
	}
	if err := s.PutMCPToken(ctx, "op/linear", []byte{1, 0, 2}); err != nil {
		t.Fatalf("PutMCPToken = %v", err)
	}
	if err := s.PutMCPToken(ctx, "user/linear/U1", []byte("u1")); err != nil {
		t.Fatalf("PutMCPToken(user) = %v", err)
	}
	if err := s.PutMCPToken(ctx, "op/linear", []byte{3, 0, 4}); err != nil {
		t.Fatalf("PutMCPToken(again) = %v", err)
	}
	if v, err := s.MCPToken(ctx, "op/linear"); err != nil || !bytes.Equal(v, []byte{3, 0, 4}) {
		t.Fatalf("MCPToken = %v, %v; want the second value [3 0 4]", v, err)
	}
	if err := s.PutMCPToken(ctx, "op/x", nil); err == nil {
		t.Errorf("PutMCPToken(empty value) = nil, want an error")
	}
	if err := s.DeleteMCPToken(ctx, "op/linear"); err != nil {
		t.Fatalf("DeleteMCPToken = %v", err)
	}
	if err := s.DeleteMCPToken(ctx, "op/linear"); err != nil {
		t.Fatalf("DeleteMCPToken(again) = %v, want nil", err)
	}
	if v, err := s.MCPToken(ctx, "op/linear"); err != nil || v != nil {
		t.Fatalf("MCPToken(deleted) = %q, %v; want nil, nil", v, err)
	}
	if v, err := s.MCPToken(ctx, "user/linear/U1"); err != nil || string(v) != "u1" {
		t.Fatalf("MCPToken(user) = %q, %v; want the user's grant kept", v, err)
	}
}
