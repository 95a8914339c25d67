package tools

import (
	"context"
	"os"
	"testing"

	"github.com/neobot/neobot/core/mcp"
)

// With NEOBOT_TOOLSTEST_SERVE set, the test binary is a Go stdio MCP
// server serving chainTools, for the stdio benchmark; with
// NEOBOT_TOOLSTEST_PLACE set too, it also serves "where", which answers
// that variable.
func TestMain(m *testing.M) {
	if os.Getenv("NEOBOT_TOOLSTEST_SERVE") == "1" {
		tools := chainTools()
		if place, ok := os.LookupEnv("NEOBOT_TOOLSTEST_PLACE"); ok {
			tools = append(tools, mcp.ServerTool{Name: "where", Description: "Say which place the server runs for.",
				Handle: func(context.Context, map[string]any) (mcp.Result, error) { return mcp.TextResult(place), nil }})
		}
		s := mcp.NewServer("chain", "0.3.0", tools...)
		if err := s.ServeStdio(context.Background(), os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
