package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/agent"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/store"
)

// gapModel answers at once — steps tool calls, then "done" — and records
// the time between leaving one call and entering the next: the harness's
// cost per step.
type gapModel struct {
	steps, n int
	left     time.Time
	gaps     []time.Duration
}

func (m *gapModel) Chat(context.Context, llm.ChatRequest) (*llm.ChatResult, error) {
	if !m.left.IsZero() {
		m.gaps = append(m.gaps, time.Since(m.left))
	}
	defer func() { m.left = time.Now() }()
	if m.n++; m.n > m.steps {
		m.n, m.left = 0, time.Time{}
		return &llm.ChatResult{Message: llm.AssistantMessage("done"), FinishReason: llm.FinishStop}, nil
	}
	call := llm.ToolCall{ID: fmt.Sprint("c", m.n), Type: "function", Function: llm.FunctionCall{Name: "fs__read_file", Arguments: `{"path":"a.txt"}`}}
	return &llm.ChatResult{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}}, FinishReason: llm.FinishToolCalls,
		Usage: llm.Usage{PromptTokens: 3000}}, nil
}

type readTool struct{}

func (readTool) Schemas(context.Context) []llm.Tool {
	return []llm.Tool{llm.NewFunctionTool("fs__read_file", "read a file", map[string]any{"type": "object"})}
}

func (readTool) Dispatch(context.Context, core.ToolCall) (string, bool, error) {
	return strings.Repeat("file contents line\n", 50), false, nil
}

type quiet struct{}

func (quiet) Say(context.Context, string) error    { return nil }
func (quiet) Status(context.Context, string) error { return nil }
func (quiet) Notice(context.Context, string) error { return nil }

// BenchmarkStepPersisted measures the agent's overhead per step including
// the persisted step: everything but the model call, with every tool call
// and result fsynced to bbolt before the next model call (budget p50 <=
// 2 ms). Reports p50 and p99 per step.
func BenchmarkStepPersisted(b *testing.B) {
	db, err := store.Open(filepath.Join(b.TempDir(), "step.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	m := &gapModel{steps: 8}
	a, err := agent.New(agent.Options{Model: m, Tools: readTool{}, Transcript: db, ActorDID: "did:neo:bench"})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		th := core.Thread{Platform: "bench", Workspace: "W", Channel: "C", ID: fmt.Sprint(i)}
		in := core.Inbound{Thread: th, User: "U", Text: "read the files", EventID: fmt.Sprint("e", i), At: time.Now()}
		if err := a.Run(ctx, core.Turn{Inbound: in, Reporter: quiet{}}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	slices.Sort(m.gaps)
	if len(m.gaps) > 0 {
		b.ReportMetric(float64(m.gaps[len(m.gaps)/2].Microseconds()), "p50-us/step")
		b.ReportMetric(float64(m.gaps[len(m.gaps)*99/100].Microseconds()), "p99-us/step")
	}
}
