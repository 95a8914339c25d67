package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/neobot/neobot/core/delegate/delegatetest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// TestDaemonMaxWaitSetting: NEO_DAEMON_MAX_WAIT bounds how long a turn
// follows a delegated task; past it the model is told the task may still
// finish at the daemon, and Neo answers instead of waiting 30 minutes.
func TestDaemonMaxWaitSetting(t *testing.T) {
	model := llmtest.New(t)
	scriptModel(t, model,
		llmtest.Calls(llmtest.Call("c1", "core_execute", `{"intent":"rebalance the vault"}`)),
		llmtest.Text("The rebalance is still running at the daemon; I'll not resubmit it."),
	)
	daemon := delegatetest.New(t)
	daemon.Script(delegatetest.Intent{Never: true})
	kv := map[string]string{
		"NEO_MODEL": "test-main", "NEO_CHEAP_MODEL": cheapModel, "NEO_LLM_BASE_URL": model.BaseURL(), "NEO_MANIFEST": emptyManifest(t),
		"NEO_DB_PATH":    filepath.Join(t.TempDir(), "neobot.db"),
		"NEO_DAEMON_URL": daemon.URL(), "NEO_DAEMON_POLL": "20ms", "NEO_DAEMON_MAX_WAIT": "300ms",
	}
	stdout, stderr, err := run(t, kv, "rebalance the vault\n", "chat")
	if err != nil {
		t.Fatalf("neobot chat: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "still running at the daemon") {
		t.Errorf("stdout = %q, want the answer after the wait ran out", stdout)
	}
	calls := mainRequests(model)
	if len(calls) != 2 {
		t.Fatalf("model calls = %d, want 2", len(calls))
	}
	last := calls[1].Messages[len(calls[1].Messages)-1]
	if last.ToolCallID != "c1" || !strings.Contains(last.Content, "still running after 300ms") {
		t.Errorf("core_execute result = %q, want the task still running after NEO_DAEMON_MAX_WAIT (300ms)", last.Content)
	}
}

// TestToolTimeoutSetting: NEO_TOOL_TIMEOUT bounds one MCP tool call; the
// model is told the call timed out, and Neo answers.
func TestToolTimeoutSetting(t *testing.T) {
	w := newWallet(t)
	if err := os.WriteFile(w.hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(w.hold) }) // lets the held call, and the wallet, end
	model := llmtest.New(t)
	scriptModel(t, model,
		llmtest.Calls(llmtest.Call("c1", "wallet__write_note", `{"text":"remember the vault"}`)),
		llmtest.Text("Writing the note timed out; it may still have been written."),
	)
	kv := map[string]string{
		"NEO_MODEL": "test-main", "NEO_CHEAP_MODEL": cheapModel, "NEO_LLM_BASE_URL": model.BaseURL(), "NEO_MANIFEST": w.manifest(t),
		"NEO_DB_PATH": filepath.Join(t.TempDir(), "neobot.db"), "NEO_TOOL_TIMEOUT": "300ms",
	}
	w.setEnv(kv)
	stdout, stderr, err := run(t, kv, "note: remember the vault\n", "chat")
	if err != nil {
		t.Fatalf("neobot chat: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "Writing the note timed out") {
		t.Errorf("stdout = %q, want the answer after the timeout", stdout)
	}
	calls := mainRequests(model)
	if len(calls) != 2 {
		t.Fatalf("model calls = %d, want 2", len(calls))
	}
	last := calls[1].Messages[len(calls[1].Messages)-1]
	if last.ToolCallID != "c1" || !strings.Contains(last.Content, "timed out after 300ms") {
		t.Errorf("write_note result = %q, want it timed out after NEO_TOOL_TIMEOUT (300ms)", last.Content)
	}
}

// TestCompactThresholdSettings: NEO_COMPACT_SOFT and NEO_COMPACT_HARD set
// where a conversation is compacted: a thread at about 40% of its window
// is left whole by the defaults (80%, 92%) and compacted at 30%.
func TestCompactThresholdSettings(t *testing.T) {
	for _, tc := range []struct {
		name        string
		soft, hard  string
		wantCompact bool
	}{
		{"defaults", "", "", false},
		{"lower thresholds", "0.30", "0.50", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := llmtest.New(t)
			var mu sync.Mutex
			summaries := 0
			model.Handle(func(r llmtest.Request) llmtest.Reply {
				if len(r.Messages) > 0 && strings.HasPrefix(r.Messages[0].Content, "You compact") {
					mu.Lock()
					summaries++
					mu.Unlock()
					return llmtest.Text("GOAL: review the plan.\nDECISIONS: none.\nARTIFACTS: none.\nOPEN: none.\nLAST_RESULTS: reviewed.\nNEXT: answer.")
				}
				if r.Model == cheapModel {
					return llmtest.Text(`{"facts":[]}`)
				}
				return llmtest.Text("Noted.")
			})
			kv := map[string]string{
				"NEO_MODEL": "test-main", "NEO_CHEAP_MODEL": cheapModel, "NEO_LLM_BASE_URL": model.BaseURL(), "NEO_MANIFEST": emptyManifest(t),
				"NEO_DB_PATH": filepath.Join(t.TempDir(), "neobot.db"), "NEO_CONTEXT_WINDOW": "10000",
			}
			if tc.soft != "" {
				kv["NEO_COMPACT_SOFT"], kv["NEO_COMPACT_HARD"] = tc.soft, tc.hard
			}
			plan := "please keep this plan in mind: " + strings.Repeat("step and detail ", 450) + "\n"
			for _, msg := range []string{plan, "and now?\n"} {
				if _, stderr, err := run(t, kv, msg, "chat", "--thread", "plan"); err != nil {
					t.Fatalf("neobot chat: %v\n%s", err, stderr)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if got := summaries > 0; got != tc.wantCompact {
				t.Errorf("compacted = %v (%d summaries), want %v", got, summaries, tc.wantCompact)
			}
			calls := mainRequests(model)
			last := calls[len(calls)-1].Messages[0].Content
			if got := strings.Contains(last, "## Conversation summary"); got != tc.wantCompact {
				t.Errorf("second turn's request carries a summary = %v, want %v", got, tc.wantCompact)
			}
		})
	}
}
