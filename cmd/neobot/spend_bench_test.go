package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/execute"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/tools"
	"github.com/neobot/neobot/store"
)

// instantPlanner plans one transfer of 5 USDC at once.
type instantPlanner struct{}

func (instantPlanner) Chat(context.Context, llm.ChatRequest) (*llm.ChatResult, error) {
	return &llm.ChatResult{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "p1", Type: "function",
		Function: llm.FunctionCall{Name: "wallet__transfer", Arguments: `{"amount":5,"currency":"USDC","recipient":"alice"}`}}}}}, nil
}

// benchUI hands each posted approval to the benchmark.
type benchUI chan core.Gate

func (u benchUI) PostGate(_ context.Context, g core.Gate) (string, error) { u <- g; return "ref", nil }
func (benchUI) ShowGate(context.Context, core.Gate)                       {}

// BenchmarkSpendClickToCall is the executor's hot path after a person
// clicks: the decision recorded, the call checked against the day's
// limit, recorded "calling" (fsync'd bbolt), and made on an in-process
// wallet. It reports the click-to-call median and p99 (docs/budgets.md's budget:
// 20 ms p50); ns/op is the whole request, planning and outcome included.
func BenchmarkSpendClickToCall(b *testing.B) {
	db, err := store.Open(filepath.Join(b.TempDir(), "neobot.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	called := make(chan time.Time, 1)
	wallet := mcp.NewServer("wallet", "1.0.0", mcp.ServerTool{Name: "transfer", Description: "Send money.",
		Handle: func(context.Context, map[string]any) (mcp.Result, error) {
			called <- time.Now()
			return mcp.TextResult("sent"), nil
		}})
	m := &mcp.Manifest{DID: "did:key:z", Servers: []mcp.ServerSpec{{Alias: "wallet", Transport: mcp.TransportInProcess, Version: "1.0.0", Tools: []string{"transfer"}}}}
	var exec *execute.Executor
	surface, err := tools.Spawn(context.Background(), tools.Options{Manifest: m, InProcess: map[string]*mcp.Server{"wallet": wallet}, Calls: db,
		Execute: tools.FromContext(func(ctx context.Context, intent string) (string, error) { return exec.Run(ctx, intent) })})
	if err != nil {
		b.Fatal(err)
	}
	defer surface.Close()
	if exec, err = execute.New(execute.Options{Model: instantPlanner{}, Tools: surface, Ledger: db}); err != nil {
		b.Fatal(err)
	}
	gates := core.NewGates(core.GatesOptions{Store: db})
	ui := make(benchUI, 1)
	th := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1.0"}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		tr := &core.Turn{Inbound: core.Inbound{Thread: th, User: "UALICE", EventID: fmt.Sprint("E", i)},
			Approver: gates.Approver(th, "UALICE", []string{"UBOB"}, ui)}
		ctx := core.WithToolCall(core.WithTurn(context.Background(), tr), "c1")
		done := make(chan error, 1)
		go func() {
			_, isErr, err := surface.Dispatch(ctx, coretest.ToolCall(ctx, core.CoreExecute, map[string]any{"intent": "send 5 USDC to alice"}))
			if err == nil && isErr {
				err = fmt.Errorf("core_execute failed in-band")
			}
			done <- err
		}()
		g := <-ui
		clicked := time.Now()
		if _, err := gates.Decide(context.Background(), g.Token, "UBOB", nil, execute.Approve); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, (<-called).Sub(clicked))
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "click-to-call-p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "click-to-call-p99-ms")
}
