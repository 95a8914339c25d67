package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
)

// stepModel is an instant in-memory model: steps tool calls, then an
// answer. It timestamps entry and exit so the benchmark measures only
// the harness between model calls.
type stepModel struct {
	steps    int
	n        int
	lastExit time.Time
	gaps     []time.Duration
}

func (m *stepModel) Chat(ctx context.Context, req llm.ChatRequest) (*llm.ChatResult, error) {
	if !m.lastExit.IsZero() {
		m.gaps = append(m.gaps, time.Since(m.lastExit))
	}
	defer func() { m.lastExit = time.Now() }()
	m.n++
	if m.n > m.steps {
		m.n, m.lastExit = 0, time.Time{}
		return &llm.ChatResult{Message: llm.AssistantMessage("done"), FinishReason: llm.FinishStop}, nil
	}
	c := llm.ToolCall{ID: fmt.Sprintf("c%d", m.n), Type: "function", Function: llm.FunctionCall{Name: "fs__read_file", Arguments: fmt.Sprintf(`{"path":"file-%d.txt"}`, m.n)}}
	return &llm.ChatResult{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{c}}, FinishReason: llm.FinishToolCalls,
		Usage: llm.Usage{PromptTokens: 3000, CompletionTokens: 20}}, nil
}

// BenchmarkStep measures harness overhead per agent step, everything but
// the model call: building the window and system block, the budget check,
// dispatching a tool call, persisting the step (in memory). The thread
// already holds 40 entries. Reports p50 and p99 per step.
func BenchmarkStep(b *testing.B) {
	tr := newTranscript()
	m := &stepModel{steps: 8}
	tools := &fakeTools{schemas: schema("fs__read_file", "fs__write_file", "core_execute")}
	tools.fn = func(context.Context, string, map[string]any) (string, bool, error) {
		return strings.Repeat("file contents line\n", 50), false, nil
	}
	a, err := New(Options{Model: m, Tools: tools, Transcript: tr, Memory: &fakeMemory{recall: core.Recall{Memories: []string{"a fact"}}}, ActorDID: "did:neo:bench"})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		th := testThread
		th.ID = fmt.Sprint(i)
		for j := range 20 {
			u, f := llm.UserMessage(fmt.Sprintf("question %d about the deploy", j)), llm.AssistantMessage(strings.Repeat("an answer ", 30))
			tr.seed(th, record{Msg: &u, EventID: fmt.Sprint("old", j)}, record{Msg: &f, EventID: fmt.Sprint("old", j), Final: true})
		}
		in := inbound("E1", "read the files")
		in.Thread = th
		if err := a.Run(ctx, core.Turn{Inbound: in, Reporter: silent{}}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	g := slices.Clone(m.gaps)
	slices.Sort(g)
	if len(g) > 0 {
		b.ReportMetric(float64(g[len(g)/2].Microseconds()), "p50-us/step")
		b.ReportMetric(float64(g[len(g)*99/100].Microseconds()), "p99-us/step")
	}
}
