package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neobot/neobot/core/memory"
	"github.com/neobot/neobot/store"
)

// TestCheck: `neobot check` starts the manifest's servers and prints the
// surface; a broken manifest fails with the field to fix.
func TestCheck(t *testing.T) {
	work := t.TempDir()
	stdout, stderr, err := run(t, map[string]string{"NEO_MANIFEST": fsManifest(t, work)}, "", "check")
	if err != nil {
		t.Fatalf("neobot check: %v\n%s", err, stderr)
	}
	for _, want := range []string{"fs (stdio, 2026.8.31): up", "fs__read_text_file", "core_execute", "warnings: 0"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("neobot check output lacks %q:\n%s", want, stdout)
		}
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"did":"did:web:x","servers":[{"alias":"gh","transport":"stdio","command":"gh-mcp","version":"1.0.0","env":["GITHUB_TOKEN=ghp_literal"],"tools":["search"]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, err = run(t, map[string]string{"NEO_MANIFEST": bad}, "", "check")
	if err == nil {
		t.Fatal("neobot check with a literal credential succeeded, want a non-zero exit")
	}
	if !strings.Contains(stderr, "env") || !strings.Contains(stderr, "$env:") || strings.Contains(stderr, "ghp_literal") {
		t.Errorf("check error = %q, want it to name the env field and the $env: fix without echoing the credential", stderr)
	}
}

// TestMemoryCommands: an operator lists, searches and forgets memory by
// workspace with `neobot memory`.
func TestMemoryCommands(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "neobot.db")
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cortex, err := memory.New(ctx, memory.Options{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []memory.Record{
		{Scope: memory.Scope{Platform: "slack", Workspace: "TA", User: "alice"}, Kind: memory.KindPreference, Text: "Alice wants deploy alerts by SMS"},
		{Scope: memory.Scope{Platform: "slack", Workspace: "TA", Channel: "ops"}, Kind: memory.KindFact, Text: "The deploy window is Tuesday"},
		{Scope: memory.Scope{Platform: "slack", Workspace: "TB"}, Kind: memory.KindFact, Text: "TB deploys on Fridays"},
	} {
		if _, err := cortex.Remember(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	kv := map[string]string{"NEO_DB_PATH": path}

	out, stderr, err := run(t, kv, "", "memory", "list", "--workspace", "TA")
	if err != nil {
		t.Fatalf("memory list: %v\n%s", err, stderr)
	}
	if !strings.Contains(out, "Alice wants deploy alerts") || !strings.Contains(out, "Tuesday") || strings.Contains(out, "Fridays") {
		t.Errorf("memory list --workspace TA =\n%s\nwant TA's two records and not TB's", out)
	}
	out, _, err = run(t, kv, "", "memory", "search", "--workspace", "TB", "deploy")
	if err != nil || !strings.Contains(out, "Fridays") || strings.Contains(out, "Tuesday") {
		t.Errorf("memory search --workspace TB deploy = %q, %v; want only TB's record", out, err)
	}
	if _, stderr, err := run(t, kv, "", "memory", "forget", "--all"); err == nil || !strings.Contains(stderr, "--workspace") {
		t.Errorf("memory forget --all without a workspace = %v, %q; want a refusal naming --workspace", err, stderr)
	}
	out, _, err = run(t, kv, "", "memory", "forget", "--all", "--workspace", "TA", "--user", "alice")
	if err != nil || !strings.Contains(out, "forgot 1 record") {
		t.Errorf("memory forget --all --workspace TA --user alice = %q, %v; want one record forgotten", out, err)
	}
	out, _, _ = run(t, kv, "", "memory", "list")
	if strings.Contains(out, "Alice") || !strings.Contains(out, "Tuesday") || !strings.Contains(out, "Fridays") {
		t.Errorf("memory list after forget =\n%s\nwant Alice's record gone and the rest kept", out)
	}
}
