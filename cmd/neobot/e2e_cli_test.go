package main

import (
	"strings"
	"testing"
)

// TestHelpPerCommand: `neobot help CMD` and `neobot CMD --help` print that
// command's usage on stdout, with its flags' defaults, and succeed.
func TestHelpPerCommand(t *testing.T) {
	for _, args := range [][]string{{"help", "chat"}, {"chat", "--help"}, {"help", "check"}, {"help", "memory"}, {"memory", "--help"}, {"help", "spends"}, {"spends", "--help"}, {"help", "web"}, {"help", "mcp"}, {"mcp", "--help"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			stdout, stderr, err := run(t, nil, "", args...)
			if err != nil {
				t.Fatalf("neobot %v: %v\n%s", args, err, stderr)
			}
			cmd := args[0]
			if cmd == "help" {
				cmd = args[1]
			}
			if !strings.HasPrefix(stdout, "usage: neobot "+cmd+" ") || strings.Contains(stdout, cmd+" "+cmd) {
				t.Errorf("stdout = %q, want the usage of neobot %s alone", firstLine(stdout), cmd)
			}
			if !strings.Contains(stdout, "env NEO_MAX_CONCURRENT_TURNS, default 64") {
				t.Errorf("usage does not show the settings' defaults:\n%s", stdout)
			}
		})
	}
}

// TestHelpOverview: neobot help lists every command, and help for one
// that does not exist is an error, as running it would be.
func TestHelpOverview(t *testing.T) {
	stdout, stderr, err := run(t, nil, "", "help")
	if err != nil {
		t.Fatalf("neobot help: %v\n%s", err, stderr)
	}
	for _, cmd := range []string{"chat", "check", "web [--user NAME]", "web token NAME", "memory", "usage", "spends", "threads", "store", "mcp login|logout"} {
		if !strings.Contains(stdout, "neobot "+cmd) {
			t.Errorf("neobot help does not list %q:\n%s", cmd, stdout)
		}
	}
	if _, stderr, err := run(t, nil, "", "help", "nosuch"); err == nil || !strings.Contains(stderr, `no command "nosuch"`) {
		t.Errorf("neobot help nosuch = %v, %q; want an error naming it", err, stderr)
	}
}

// TestVersion: --version and version print the version.
func TestVersion(t *testing.T) {
	for _, arg := range []string{"--version", "version"} {
		stdout, _, err := run(t, nil, "", arg)
		if err != nil || !strings.HasPrefix(stdout, "neobot ") {
			t.Errorf("neobot %s = %q, %v; want the version", arg, stdout, err)
		}
	}
}

// TestChatBanner: the terminal conversation opens with one line naming the
// thread and how to leave.
func TestChatBanner(t *testing.T) {
	_, stderr, err := run(t, map[string]string{"NEO_MANIFEST": emptyManifest(t), "NEO_DB_PATH": t.TempDir() + "/neobot.db", "NEO_MODEL": "test-main",
		"NEO_LLM_BASE_URL": "http://127.0.0.1:1/v1"}, "exit\n", "chat", "--thread", "ops")
	if err != nil {
		t.Fatalf("neobot chat: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, `conversation "ops"`) || !strings.Contains(stderr, "exit") {
		t.Errorf("stderr = %q, want the banner naming the thread and how to leave", stderr)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
