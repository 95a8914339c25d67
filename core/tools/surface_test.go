package tools

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/core"

	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/mcp"
)

var update = flag.Bool("update", false, "rewrite golden files")

func obj(props map[string]any) map[string]any {
	return map[string]any{"type": "object", "properties": props}
}

// chainTools is a wallet-ish server: reads are natural, spends escalate.
func chainTools() []mcp.ServerTool {
	text := func(s string) mcp.ToolHandler {
		return func(context.Context, map[string]any) (mcp.Result, error) { return mcp.TextResult(s), nil }
	}
	return []mcp.ServerTool{
		{Name: "get_balance", Description: "Balance of an address.", InputSchema: obj(map[string]any{"address": map[string]any{"type": "string"}}),
			Handle: func(_ context.Context, args map[string]any) (mcp.Result, error) {
				return mcp.TextResult("balance of " + args["address"].(string) + ": 12 PAX"), nil
			}},
		{Name: "transfer_tokens", Description: "Send tokens.", Handle: text("sent!")},
		{Name: "simulate_swap", Description: "Dry-run a swap.", Handle: text("would get 3 PAX")},
		{Name: "broken", Description: "Fails in-band.", Handle: func(context.Context, map[string]any) (mcp.Result, error) {
			return mcp.ErrorResult("rpc node unreachable"), nil
		}},
		{Name: "slow", Description: "Waits for its deadline.", Handle: func(ctx context.Context, _ map[string]any) (mcp.Result, error) {
			<-ctx.Done()
			return mcp.Result{}, ctx.Err()
		}},
		{Name: "weird.name/v2", Description: "A name to coerce.", Handle: text("ok")},
	}
}

var chainToolNames = []string{"broken", "get_balance", "simulate_swap", "slow", "transfer_tokens", "weird.name/v2"}

func chainManifest() *mcp.Manifest {
	return &mcp.Manifest{DID: "did:key:z6MkNeo", Servers: []mcp.ServerSpec{
		{Alias: "chain", Transport: mcp.TransportInProcess, Version: "0.3.0", Tools: chainToolNames, SideEffects: "external"},
	}}
}

func spawn(t *testing.T, opts Options) *Surface {
	t.Helper()
	if opts.Manifest == nil {
		opts.Manifest = chainManifest()
	}
	if opts.InProcess == nil {
		opts.InProcess = map[string]*mcp.Server{"chain": mcp.NewServer("chain", "0.3.0", chainTools()...)}
	}
	s, err := Spawn(context.Background(), opts)
	if err != nil {
		t.Fatalf("Spawn() error = %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func names(s *Surface) []string {
	var out []string
	for _, t := range s.Schemas(context.Background()) {
		out = append(out, t.Function.Name)
	}
	return out
}

func TestSchemas(t *testing.T) {
	recall := func(context.Context, core.ToolCall, string) (string, error) { return "", nil }
	daemon := func(context.Context, core.ToolCall, string) (string, error) { return "", nil }
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		// simulate_swap contains "swap": the substring heuristic is
		// conservative and escalates it. Without a daemon or an executor
		// nothing can spend, and core_execute is not offered.
		{name: "defaults", want: []string{"chain__broken", "chain__get_balance", "chain__slow", "chain__weird_name_v2"}},
		{name: "with a daemon", opts: Options{Delegate: daemon}, want: []string{"chain__broken", "chain__get_balance", "chain__slow", "chain__weird_name_v2", core.CoreExecute}},
		{name: "with the executor", opts: Options{Execute: daemon}, want: []string{"chain__broken", "chain__get_balance", "chain__slow", "chain__weird_name_v2", core.CoreExecute}},
		{name: "with recall", opts: Options{Delegate: daemon, Recall: recall}, want: []string{"chain__broken", "chain__get_balance", "chain__slow", "chain__weird_name_v2", core.CoreExecute, MemoryRecall}},
		{name: "with recall and forget", opts: Options{Recall: recall, Forget: recall}, want: []string{"chain__broken", "chain__get_balance", "chain__slow", "chain__weird_name_v2", MemoryRecall, MemoryForget}},
		{name: "own patterns", opts: Options{Delegate: daemon, EscalatePatterns: []string{"balance"}}, want: []string{"chain__broken", "chain__simulate_swap", "chain__slow", "chain__transfer_tokens", "chain__weird_name_v2", core.CoreExecute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := spawn(t, tt.opts)
			if got := names(s); !slices.Equal(got, tt.want) {
				t.Errorf("Schemas() names = %v, want %v", got, tt.want)
			}
			for _, tool := range s.Schemas(context.Background()) {
				if tool.Type != "function" || tool.Function.Parameters["type"] != "object" {
					t.Errorf("Schemas(): %s = %+v, want a function with an object schema", tool.Function.Name, tool)
				}
			}
		})
	}
}

// TestSchemasNoManifest: with a daemon core_execute is offered; with only
// the executor and no spend tool to run, the model is not told of it.
func TestSchemasNoManifest(t *testing.T) {
	run := func(context.Context, core.ToolCall, string) (string, error) { return "", nil }
	for _, tc := range []struct {
		name string
		opts Options
		want []string
	}{
		{"daemon", Options{Delegate: run}, []string{core.CoreExecute}},
		{"executor", Options{Execute: run}, nil},
		{"neither", Options{}, nil},
	} {
		s, err := Spawn(context.Background(), tc.opts)
		if err != nil {
			t.Fatalf("Spawn(no manifest) error = %v", err)
		}
		if got := names(s); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Schemas() = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestDispatch(t *testing.T) {
	var intents []string
	s := spawn(t, Options{
		CallTimeout: 50 * time.Millisecond,
		Delegate: func(_ context.Context, _ core.ToolCall, intent string) (string, error) {
			intents = append(intents, intent)
			if strings.Contains(intent, "fail") {
				return "", errors.New("daemon said no")
			}
			return "done: " + intent, nil
		},
		Recall: func(_ context.Context, _ core.ToolCall, q string) (string, error) { return "you like " + q, nil },
		Forget: func(_ context.Context, _ core.ToolCall, q string) (string, error) {
			if q == "" {
				return "", nil
			}
			return "forgot " + q, nil
		},
	})
	tests := []struct {
		name      string
		fn        string
		args      map[string]any
		want      string
		wantIsErr bool
	}{
		{"natural tool", "chain__get_balance", map[string]any{"address": "0xabc"}, "balance of 0xabc: 12 PAX", false},
		{"coerced name", "chain__weird_name_v2", nil, "ok", false},
		{"in-band tool error", "chain__broken", nil, "rpc node unreachable", true},
		{"escalate called directly", "chain__transfer_tokens", nil, `"chain__transfer_tokens" moves funds or needs a wallet signature, so it cannot be called directly — use core_execute`, true},
		{"unknown", "chain__nope", nil, `unknown tool "chain__nope" — it is not available`, true},
		{"core_execute", core.CoreExecute, map[string]any{"intent": "send 1 PAX to bob"}, "done: send 1 PAX to bob", false},
		{"core_execute error stays in-band", core.CoreExecute, map[string]any{"intent": "fail please"}, "core_execute did not complete: daemon said no", true},
		{"core_execute without intent", core.CoreExecute, nil, `core_execute needs "intent"`, true},
		{"memory_recall", MemoryRecall, map[string]any{"query": "tea"}, "you like tea", false},
		{"memory_forget", MemoryForget, map[string]any{"query": " tea "}, "forgot tea", false},
		{"memory_forget found nothing", MemoryForget, nil, "nothing was remembered about that", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, isErr, err := dispatch(context.Background(), s, tt.fn, tt.args)
			if err != nil || isErr != tt.wantIsErr || !strings.HasPrefix(got, tt.want) {
				t.Errorf("Dispatch(%s) = %q, %v, %v; want %q, %v, nil", tt.fn, got, isErr, err, tt.want, tt.wantIsErr)
			}
		})
	}
	t.Run("a call that may have taken effect is not retried after a timeout", func(t *testing.T) {
		got, isErr, err := dispatch(context.Background(), s, "chain__slow", nil)
		if err != nil || !isErr || !strings.HasPrefix(got, "chain__slow timed out after 50ms: its outcome is unknown") {
			t.Errorf("Dispatch(chain__slow, external) = %q, %v, %v; want in-band: its outcome is unknown", got, isErr, err)
		}
	})
	t.Run("a read's timeout is retryable", func(t *testing.T) {
		m := chainManifest()
		m.Servers[0].ToolSideEffects = map[string]string{"slow": "read"}
		r := spawn(t, Options{Manifest: m, CallTimeout: 50 * time.Millisecond})
		_, _, err := dispatch(context.Background(), r, "chain__slow", nil)
		if re, ok := errors.AsType[*RetryableError](err); !ok || !strings.HasPrefix(re.InBand(), "chain__slow timed out after 50ms") {
			t.Errorf("Dispatch(chain__slow, read) = %v, want a RetryableError saying it timed out after 50ms", err)
		}
	})
	if !slices.Equal(intents, []string{"send 1 PAX to bob", "fail please"}) {
		t.Errorf("Delegate got intents %q, want each once", intents)
	}
}

func TestDispatchWithoutDelegateOrRecall(t *testing.T) {
	s := spawn(t, Options{})
	got, isErr, err := dispatch(context.Background(), s, core.CoreExecute, map[string]any{"intent": "pay rent"})
	if err != nil || !isErr || !strings.Contains(got, "spending is not set up") {
		t.Errorf("Dispatch(core_execute) = %q, %v, %v; want in-band 'spending is not set up'", got, isErr, err)
	}
	got, isErr, err = dispatch(context.Background(), s, MemoryRecall, nil)
	if err != nil || !isErr || !strings.Contains(got, "unknown tool") {
		t.Errorf("Dispatch(memory_recall) without Recall = %q, %v, %v; want in-band unknown tool", got, isErr, err)
	}
	got, isErr, err = dispatch(context.Background(), s, MemoryForget, nil)
	if err != nil || !isErr || !strings.Contains(got, "unknown tool") {
		t.Errorf("Dispatch(memory_forget) without Forget = %q, %v, %v; want in-band unknown tool", got, isErr, err)
	}
}

func TestDispatchCancelled(t *testing.T) {
	s := spawn(t, Options{CallTimeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := dispatch(ctx, s, "chain__slow", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Dispatch(cancelled ctx) error = %v, want context.Canceled", err)
	}
}

// TestDescribe prints the surface as `neobot check` shows it, against
// testdata/describe.golden (rewrite with -update).
func TestDescribe(t *testing.T) {
	m := chainManifest()
	m.Servers = append(m.Servers,
		mcp.ServerSpec{Alias: "drift", Transport: mcp.TransportInProcess, Version: "1.0.0", Tools: []string{"get_balance", "gone"}},
		mcp.ServerSpec{Alias: "remote", Transport: mcp.TransportHTTP, URL: "https://example.com/mcp", Version: "2.0.0", Tools: []string{"search"},
			Headers: map[string]string{"Authorization": "Bearer $env:REMOTE_TOKEN"}},
	)
	s := spawn(t, Options{
		Manifest: m,
		InProcess: map[string]*mcp.Server{
			"chain": mcp.NewServer("chain", "0.3.0", chainTools()...),
			"drift": mcp.NewServer("drift", "1.0.0", chainTools()[:1]...),
		},
		LookupEnv: func(string) (string, bool) { return "", false },
	})
	var b strings.Builder
	if err := s.Describe(&b); err != nil {
		t.Fatalf("Describe() error = %v", err)
	}
	checkGolden(t, "describe.golden", b.String())
}

// checkGolden compares got with testdata/name (rewrite with -update).
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden (run with -update to create it): %v", err)
	}
	if got != string(want) {
		t.Errorf("%s: got\n%s\nwant\n%s", name, got, want)
	}
}

// dispatch dispatches the model's call of name with args as the agent
// would: in ctx's turn (core.WithTurn) under ctx's call ID
// (core.WithToolCall), or else in a turn of its own in a Slack channel.
func dispatch(ctx context.Context, s *Surface, name string, args map[string]any) (string, bool, error) {
	if _, ok := core.TurnFrom(ctx); !ok {
		tr := &core.Turn{Inbound: core.Inbound{Thread: core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1.1"}, User: "UALICE", EventID: "E1"}}
		return s.Dispatch(ctx, tr.Call("call_1", name, args))
	}
	return s.Dispatch(ctx, coretest.ToolCall(ctx, name, args))
}

// TestNewExecute: the executor is made from the surface it plans over,
// once that surface exists, and core_execute runs it; an executor that
// cannot be made fails Spawn, naming core_execute.
func TestNewExecute(t *testing.T) {
	var made *Surface
	s := spawn(t, Options{NewExecute: func(s *Surface) (Synthetic, error) {
		made = s
		if len(s.Schemas(context.Background())) == 0 {
			return nil, errors.New("the surface had no tools when the executor was made")
		}
		return func(_ context.Context, _ core.ToolCall, intent string) (string, error) {
			return "planned: " + intent, nil
		}, nil
	}})
	if made != s {
		t.Fatalf("NewExecute got surface %p, Spawn returned %p", made, s)
	}
	if got := names(s); !slices.Contains(got, core.CoreExecute) {
		t.Fatalf("Schemas() = %v, want core_execute offered", got)
	}
	out, isErr, err := dispatch(context.Background(), s, core.CoreExecute, map[string]any{"intent": "pay bob 5 USDC"})
	if err != nil || isErr || out != "planned: pay bob 5 USDC" {
		t.Fatalf("core_execute = %q, %v, %v; want the executor's answer", out, isErr, err)
	}

	_, err = Spawn(context.Background(), Options{Manifest: chainManifest(),
		InProcess:  map[string]*mcp.Server{"chain": mcp.NewServer("chain", "0.3.0", chainTools()...)},
		NewExecute: func(*Surface) (Synthetic, error) { return nil, errors.New("no ledger") }})
	if err == nil || !strings.Contains(err.Error(), "core_execute: no ledger") {
		t.Fatalf("Spawn with a failing NewExecute: err = %v, want it to name core_execute and the cause", err)
	}
}
