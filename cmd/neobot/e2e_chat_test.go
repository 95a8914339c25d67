package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neobot/neobot/core/delegate/delegatetest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// TestChatEndToEnd pipes a conversation into `neobot chat` backed by a
// scripted model, the real filesystem MCP server and a fake execution
// daemon: Neo lists the workspace with a real tool call, asks for an
// approval the user denies with "n", and answers.
func TestChatEndToEnd(t *testing.T) {
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "hello.txt"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	model := llmtest.New(t)
	scriptModel(t, model,
		llmtest.Calls(llmtest.Call("c1", "fs__list_directory", `{"path":"`+work+`"}`)),
		llmtest.Calls(llmtest.Call("c2", "core_execute", `{"intent":"send 5 PAX to 0xabc"}`)),
		llmtest.Text("Your workspace has hello.txt. The 5 PAX payment was not approved, so nothing was sent."),
	)
	daemon := delegatetest.New(t)
	daemon.RequireToken("daemon-token")
	daemon.Script(delegatetest.Intent{
		Gates:  []delegatetest.Gate{{NodeID: "n1", Question: "Approve spend of 5 PAX?"}},
		Answer: "settled",
	})
	db := filepath.Join(t.TempDir(), "neobot.db")
	kv := map[string]string{
		"NEO_MODEL": "test-main", "NEO_CHEAP_MODEL": cheapModel, "NEO_LLM_BASE_URL": model.BaseURL(),
		"NEO_DB_PATH": db, "NEO_MANIFEST": fsManifest(t, work),
		"NEO_DAEMON_URL": daemon.URL(), "NEO_DAEMON_TOKEN": "daemon-token", "NEO_DAEMON_POLL": "20ms",
	}

	stdout, stderr, err := run(t, kv, "what is in my workspace? then send 5 PAX to 0xabc\nn\n", "chat", "--thread", "e2e")
	if err != nil {
		t.Fatalf("neobot chat: %v\nstderr:\n%s", err, stderr)
	}
	if want := "Your workspace has hello.txt."; !strings.Contains(stdout, want) {
		t.Errorf("stdout = %q, want the answer %q", stdout, want)
	}
	for _, want := range []string{"approval needed — Approve spend of 5 PAX?", "options: yes | no", "approve? [y/N]"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks the approval prompt line %q:\n%s", want, stderr)
		}
	}
	answers := daemon.Answers()
	if len(answers) != 1 || answers[0].Approved {
		t.Errorf("daemon answers = %+v, want one denial", answers)
	}
	calls := mainRequests(model)
	if len(calls) != 3 {
		t.Fatalf("model calls = %d, want 3", len(calls))
	}
	listing := calls[1].Messages[len(calls[1].Messages)-1]
	if listing.Role != "tool" || listing.ToolCallID != "c1" || !strings.Contains(listing.Content, "hello.txt") {
		t.Errorf("tool result after fs__list_directory = %+v, want the real listing with hello.txt", listing)
	}
	for _, leak := range []string{"daemon-token"} {
		if strings.Contains(stderr, leak) {
			t.Errorf("stderr leaks the secret %q", leak)
		}
	}

	// The same thread continues from the stored transcript.
	scriptModel(t, model, llmtest.Text("You asked about your workspace and a payment."))
	stdout, stderr, err = run(t, kv, "what did I ask before?\n", "chat", "--thread", "e2e")
	if err != nil {
		t.Fatalf("neobot chat (second run): %v\nstderr:\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "You asked about your workspace") {
		t.Errorf("second run stdout = %q, want the scripted answer", stdout)
	}
	calls = mainRequests(model)
	last := calls[len(calls)-1]
	var sawFirst bool
	for _, m := range last.Messages {
		if m.Role == "user" && strings.Contains(m.Content, "send 5 PAX to 0xabc") {
			sawFirst = true
		}
	}
	if !sawFirst {
		t.Errorf("second run's model call lacks the first run's message: the stored conversation was not continued")
	}
}

// TestChatDryRun prints the system block and tool schemas with no model.
// core_execute is offered, and spends described, only where something can
// spend: here the wallet's transfer, run by neobot's own executor.
func TestChatDryRun(t *testing.T) {
	wal := newWallet(t)
	for _, tc := range []struct {
		name     string
		manifest string
		spends   bool
	}{
		{"no spend tool", emptyManifest(t), false},
		{"a wallet", wal.manifest(t), true},
	} {
		kv := map[string]string{"NEO_DB_PATH": filepath.Join(t.TempDir(), "neobot.db"), "NEO_MANIFEST": tc.manifest}
		wal.setEnv(kv)
		stdout, stderr, err := run(t, kv, "", "chat", "--dry-run")
		if err != nil {
			t.Fatalf("%s: neobot chat --dry-run: %v\nstderr:\n%s", tc.name, err, stderr)
		}
		for _, want := range []string{"=== system ===", "did:web:neobot.test:agents:e2e", "=== tools ==="} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%s: dry run output lacks %q:\n%s", tc.name, want, stdout)
			}
		}
		if got := strings.Contains(stdout, `"core_execute"`); got != tc.spends {
			t.Errorf("%s: core_execute offered = %v, want %v:\n%s", tc.name, got, tc.spends, stdout)
		}
		if got := strings.Contains(stdout, "goes through the core_execute tool"); got != tc.spends {
			t.Errorf("%s: spends described = %v, want %v", tc.name, got, tc.spends)
		}
	}
}

// TestStartupErrorsNameTheSetting checks a user who forgot the model, or
// mistyped a number, is told which variable to fix.
func TestStartupErrorsNameTheSetting(t *testing.T) {
	tests := []struct {
		name string
		kv   map[string]string
		want string
	}{
		{"no model", map[string]string{"NEO_DB_PATH": filepath.Join(t.TempDir(), "a.db"), "NEO_MANIFEST": emptyManifest(t)}, "NEO_MODEL"},
		{"bad number", map[string]string{"NEO_STEP_BUDGET": "lots"}, "NEO_STEP_BUDGET"},
		{"missing manifest", map[string]string{"NEO_MODEL": "m", "NEO_LLM_BASE_URL": "http://127.0.0.1:1/v1", "NEO_MANIFEST": "/nonexistent.json", "NEO_DB_PATH": filepath.Join(t.TempDir(), "b.db")}, "NEO_MANIFEST"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, err := run(t, tt.kv, "", "chat")
			if err == nil {
				t.Fatalf("neobot chat succeeded, want a start-up error naming %s", tt.want)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr = %q, want it to name %s", stderr, tt.want)
			}
		})
	}
}
