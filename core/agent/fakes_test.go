package agent

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// memTranscript is an in-memory Transcript with an archive.
type memTranscript struct {
	mu       sync.Mutex
	seq      map[string]uint64
	live     map[string][]core.Entry
	archive  map[string][]core.Entry
	summary  map[string]core.Summary
	compacts []core.Summary
}

func newTranscript() *memTranscript {
	return &memTranscript{seq: map[string]uint64{}, live: map[string][]core.Entry{}, archive: map[string][]core.Entry{}, summary: map[string]core.Summary{}}
}

func (m *memTranscript) AppendEntries(ctx context.Context, t core.Thread, data ...[]byte) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := t.Key()
	for _, d := range data {
		m.seq[k]++
		m.live[k] = append(m.live[k], core.Entry{Seq: m.seq[k], Data: slices.Clone(d)})
	}
	return m.seq[k], nil
}

func (m *memTranscript) LoadTranscript(ctx context.Context, t core.Thread) (core.Summary, []core.Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.summary[t.Key()], slices.Clone(m.live[t.Key()]), nil
}

func (m *memTranscript) Compact(ctx context.Context, t core.Thread, s core.Summary) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := t.Key()
	var keep []core.Entry
	for _, e := range m.live[k] {
		if e.Seq <= s.UpTo {
			m.archive[k] = append(m.archive[k], e)
		} else {
			keep = append(keep, e)
		}
	}
	m.live[k], m.summary[k] = keep, s
	m.compacts = append(m.compacts, s)
	return nil
}

// Archived returns the thread's archived entries, oldest first.
func (m *memTranscript) Archived(ctx context.Context, t core.Thread) ([]core.Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.archive[t.Key()]), nil
}

// records decodes a thread's live entries.
func (m *memTranscript) records(t core.Thread) []record {
	_, es, _ := m.LoadTranscript(context.Background(), t)
	out := make([]record, len(es))
	for i, e := range es {
		if err := json.Unmarshal(e.Data, &out[i]); err != nil {
			panic(err)
		}
	}
	return out
}

// seed appends messages as stored records.
func (m *memTranscript) seed(t core.Thread, recs ...record) {
	for _, r := range recs {
		r.V = recordVersion
		b, _ := json.Marshal(r)
		m.AppendEntries(context.Background(), t, b)
	}
}

// toolCall is one recorded dispatch.
type toolCall struct {
	Name    string
	Args    map[string]any
	CallID  string
	HasTurn bool
}

// fakeTools is a Toolbox whose behaviour a test scripts per call.
type fakeTools struct {
	schemas []llm.Tool
	fn      func(ctx context.Context, name string, args map[string]any) (string, bool, error)
	mu      sync.Mutex
	calls   []toolCall
}

func (f *fakeTools) Schemas(context.Context) []llm.Tool { return f.schemas }

func (f *fakeTools) Dispatch(ctx context.Context, call core.ToolCall) (string, bool, error) {
	name, args := call.Name(), call.Args()
	f.mu.Lock()
	f.calls = append(f.calls, toolCall{Name: name, Args: args, CallID: call.ID(), HasTurn: call.Turn() != nil})
	f.mu.Unlock()
	if f.fn == nil {
		return "ok:" + name, false, nil
	}
	// As the surface does for its synthetic tools: the call's turn and ID
	// ride in the context of the implementation.
	return f.fn(core.WithToolCall(core.WithTurn(ctx, call.Turn()), call.ID()), name, args)
}

func (f *fakeTools) recorded() []toolCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func schema(names ...string) []llm.Tool {
	var out []llm.Tool
	for _, n := range names {
		out = append(out, llm.NewFunctionTool(n, "does "+n, map[string]any{"type": "object"}))
	}
	return out
}

// fakeMemory records faults and write-backs.
type fakeMemory struct {
	// hold, when set, blocks each WriteBack until it is closed.
	hold    chan struct{}
	quick   bool // what QuickWriteBack says
	mu      sync.Mutex
	recall  core.Recall
	queries []string
	written [][]llm.Message
}

func (f *fakeMemory) Fault(ctx context.Context, in core.Inbound, query string) (core.Recall, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, query)
	return f.recall, nil
}

// QuickWriteBack is what the fake was told (quick): by default every
// write-back runs off the turn.
func (f *fakeMemory) QuickWriteBack(core.Inbound) bool { return f.quick }

func (f *fakeMemory) WriteBack(ctx context.Context, in core.Inbound, turn []llm.Message) error {
	if f.hold != nil {
		<-f.hold
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.written = append(f.written, turn)
	return nil
}

// sleeps records the injected waits; nothing really sleeps.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.d)
}

var testThread = core.Thread{Platform: "slack", Workspace: "T01", Channel: "C0123456789", ID: "1712345678.000100"}

var fixedNow = time.Date(2026, 11, 3, 14, 5, 0, 0, time.UTC)

// harness is one agent wired to fakes and an llmtest server.
type harness struct {
	srv   *llmtest.Server
	tr    *memTranscript
	tools *fakeTools
	mem   *fakeMemory
	sl    *sleeps
	rec   *coretest.Recorder
	agent *Agent
}

func newClient(t testing.TB, srv *llmtest.Server) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{Provider: "openai-compatible", BaseURL: srv.BaseURL(), Model: "test-model", Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("llm.New: %v", err)
	}
	return c
}

func newHarness(t testing.TB, tune func(*Options)) *harness {
	t.Helper()
	h := &harness{srv: llmtest.New(t), tr: newTranscript(), tools: &fakeTools{schemas: schema("fs__read_file", "fs__write_file", "core_execute")},
		mem: &fakeMemory{}, sl: &sleeps{}, rec: coretest.NewRecorder()}
	opts := Options{
		Model: newClient(t, h.srv), Tools: h.tools, Transcript: h.tr, Memory: h.mem,
		ActorDID: "did:neo:test", Now: func() time.Time { return fixedNow }, Sleep: h.sl.sleep, Rand: func() float64 { return 0.5 },
	}
	if tune != nil {
		tune(&opts)
	}
	a, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.agent = a
	return h
}

func inbound(eventID, text string) core.Inbound {
	return core.Inbound{Thread: testThread, User: "U0AAA1111", UserName: "ada", Text: text, EventID: eventID, At: fixedNow}
}

func (h *harness) run(t testing.TB, in core.Inbound) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return h.agent.Run(ctx, core.Turn{Inbound: in, Reporter: h.rec})
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (run with -update)", name, err)
	}
	if got != string(want) {
		t.Errorf("%s mismatch (run with -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// toolMessages returns the tool messages of a request, in order.
func toolMessages(r llmtest.Request) []llm.Message {
	var out []llm.Message
	for _, m := range r.Messages {
		if m.Role == llm.RoleTool {
			out = append(out, m)
		}
	}
	return out
}

func call(id, name, args string) llm.ToolCall { return llmtest.Call(id, name, args) }

var _ = fmt.Sprint

func compactSummary() core.Summary {
	return core.Summary{Text: "GOAL: ship the v2 vault.\nNEXT: confirm the deploy.", UpTo: 0, At: fixedNow}
}
