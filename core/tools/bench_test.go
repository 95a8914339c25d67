package tools

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/mcp"
)

// BenchmarkDispatch measures a Natural tool's round trip through Dispatch
// (budget over stdio to a Go server: p50 <= 500 µs).
func BenchmarkDispatch(b *testing.B) {
	b.Run("inprocess", func(b *testing.B) {
		s, err := Spawn(context.Background(), Options{
			Manifest:  chainManifest(),
			InProcess: map[string]*mcp.Server{"chain": mcp.NewServer("chain", "0.3.0", chainTools()...)},
		})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		benchDispatch(b, s)
	})
	// With questions on (as neobot runs), every call carries a pausable
	// deadline and is tracked for its server's questions.
	b.Run("inprocess-questions", func(b *testing.B) {
		s, err := Spawn(context.Background(), Options{
			Manifest: chainManifest(), Questions: true,
			InProcess: map[string]*mcp.Server{"chain": mcp.NewServer("chain", "0.3.0", chainTools()...)},
		})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		benchDispatch(b, s)
	})
	b.Run("stdio-go", func(b *testing.B) {
		m := &mcp.Manifest{DID: "did:key:z6MkNeo", Servers: []mcp.ServerSpec{{
			Alias: "chain", Transport: mcp.TransportStdio, Command: os.Args[0], Version: "0.3.0",
			Env: []string{"NEOBOT_TOOLSTEST_SERVE=$env:SERVE"}, Tools: chainToolNames, SideEffects: "external",
		}}}
		s, err := Spawn(context.Background(), Options{Manifest: m, LookupEnv: func(string) (string, bool) { return "1", true }})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		if w := s.Warnings(); len(w) > 0 {
			b.Fatal(w)
		}
		benchDispatch(b, s)
	})
}

func benchDispatch(b *testing.B, s *Surface) {
	ctx := context.Background()
	args := map[string]any{"address": "0xabc"}
	tr := &core.Turn{Inbound: core.Inbound{Thread: core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1.1"}, User: "UALICE", EventID: "E1"}}
	ids := make([]string, b.N) // a call ID dispatched twice is refused as a repeat
	for i := range ids {
		ids[i] = "call_" + strconv.Itoa(i)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		t := time.Now()
		if out, isErr, err := s.Dispatch(ctx, tr.Call(ids[i], "chain__get_balance", args)); err != nil || isErr {
			b.Fatal(out, err, isErr)
		}
		lat = append(lat, time.Since(t))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
}

// BenchmarkSchemas measures the per-step cost of asking for the schemas
// (cached until a server changes).
func BenchmarkSchemas(b *testing.B) {
	s, err := Spawn(context.Background(), Options{
		Manifest:  chainManifest(),
		InProcess: map[string]*mcp.Server{"chain": mcp.NewServer("chain", "0.3.0", chainTools()...)},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for b.Loop() {
		_ = s.Schemas(context.Background())
	}
}

// BenchmarkCallContext measures what a call's deadline costs with
// questions on (pausable, tracked for its server's questions) against a
// plain context.WithTimeout.
func BenchmarkCallContext(b *testing.B) {
	ctx := context.Background()
	for _, questions := range []bool{false, true} {
		s := &Surface{callTimeout: time.Minute, questions: questions}
		name := "plain"
		if questions {
			name = "questions"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				cctx, cancel := s.callContext(ctx, core.ToolCall{}, binding{})
				_ = cctx.Err()
				cancel()
			}
		})
	}
}
