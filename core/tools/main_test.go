package tools

import (
	"context"
	"os"
	"testing"

	"github.com/neobot/neobot/core/mcp"
)

// With NEOBOT_TOOLSTEST_SERVE set, the test binary is a Go stdio MCP
// server serving chainTools, for the stdio benchmark.
func TestMain(m *testing.M) {
	if os.Getenv("NEOBOT_TOOLSTEST_SERVE") == "1" {
		s := mcp.NewServer("chain", "0.3.0", chainTools()...)
		if err := s.ServeStdio(context.Background(), os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
