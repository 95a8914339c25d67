package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDaemonOverLoopbackHTTP: plain http to the daemon is fine on this
// machine, in every spelling of it.
func TestDaemonOverLoopbackHTTP(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:8080", "http://localhost:9000/", "http://[::1]:7000", "https://daemon.example.com"} {
		if _, _, err := loadConfig("neobot", nil, envOf(map[string]string{"NEO_DAEMON_URL": u}), &bytes.Buffer{}, nil); err != nil {
			t.Errorf("NEO_DAEMON_URL=%s: %v, want it accepted", u, err)
		}
	}
}

// TestManifestMayNotTakeNeobotSecrets: a tool server can't be handed
// neobot's own credentials through $env:, in env or in a header.
func TestManifestMayNotTakeNeobotSecrets(t *testing.T) {
	tests := []struct {
		name, server, want string
	}{
		{"env", `{"alias":"gh","transport":"stdio","command":"gh-mcp","version":"1.0.0","env":["GITHUB_TOKEN=$env:SLACK_BOT_TOKEN"],"tools":["search"]}`, "$env:SLACK_BOT_TOKEN"},
		{"header", `{"alias":"api","transport":"http","url":"https://tools.example.com/mcp","version":"1.0.0","headers":{"Authorization":"Bearer $env:NEO_DAEMON_TOKEN"},"tools":["search"]}`, "$env:NEO_DAEMON_TOKEN"},
		{"model key", `{"alias":"x","transport":"stdio","command":"x","version":"1.0.0","env":["KEY=$env:OPENAI_API_KEY"],"tools":["t"]}`, "$env:OPENAI_API_KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "manifest.json")
			if err := os.WriteFile(path, []byte(`{"did":"did:web:x","servers":[`+tt.server+`]}`), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := loadManifest(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "neobot's own credential") {
				t.Errorf("loadManifest = %v, want a refusal naming %s", err, tt.want)
			}
		})
	}
	path := filepath.Join(t.TempDir(), "manifest.json")
	own := `{"did":"did:web:x","servers":[{"alias":"gh","transport":"stdio","command":"gh-mcp","version":"1.0.0","env":["GITHUB_TOKEN=$env:GITHUB_TOKEN"],"tools":["search"]}]}`
	if err := os.WriteFile(path, []byte(own), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadManifest(path); err != nil {
		t.Errorf("a server's own credential refused: %v", err)
	}
}

// TestScrubberTokenShapes: credentials of the shapes tool servers use are
// removed from log lines wherever they appear, and ordinary text is kept.
func TestScrubberTokenShapes(t *testing.T) {
	tests := []struct {
		name, line string
		leaked     string // "" when nothing should be redacted
	}{
		{"github classic", "clone failed: https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/x", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"},
		{"github fine-grained", "token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz rejected", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"},
		{"github app", "ghs_16C7e42F292c6912E7710c838347Ae178B4a expired", "ghs_16C7e42F292c6912E7710c838347Ae178B4a"},
		{"aws access key", "aws: AKIAIOSFODNN7EXAMPLE is not authorized", "AKIAIOSFODNN7EXAMPLE"},
		{"aws session key", "ASIAY34FZKBOKMUTVV7A denied", "ASIAY34FZKBOKMUTVV7A"},
		{"discord bot token", "login MTA4NjQ5NjQ2NDc4NjQ5NjQ2NA.GhTz9a.abcdefghijklmnopqrstuvwxyz0123456 failed", "MTA4NjQ5NjQ2NDc4NjQ5NjQ2NA.GhTz9a.abcdefghijklmnopqrstuvwxyz0123456"},
		{"ordinary text", "thread slack/T0/C0/1700000000.000100 answered in 1.2s", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if _, err := newScrubber(&out).Write([]byte(tt.line)); err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.leaked != "" && (strings.Contains(out.String(), tt.leaked) || !strings.Contains(out.String(), redacted)):
				t.Errorf("scrubbed %q, want %q redacted", out.String(), tt.leaked)
			case tt.leaked == "" && out.String() != tt.line:
				t.Errorf("scrubbed %q, want it unchanged", out.String())
			}
		})
	}
}

// TestManifestEnvValuesScrubbed: a value handed to a tool server through
// $env: is removed from the logs from then on, whatever its shape.
func TestManifestEnvValuesScrubbed(t *testing.T) {
	var out bytes.Buffer
	m := &Main{Getenv: func(name string) string {
		if name == "WEATHER_KEY" {
			return "plain-looking-weather-key-42"
		}
		return ""
	}}
	m.scrub = newScrubber(&out)
	if v, ok := m.lookupEnv("WEATHER_KEY"); !ok || v != "plain-looking-weather-key-42" {
		t.Fatalf("lookupEnv = %q, %v", v, ok)
	}
	if _, err := m.scrub.Write([]byte("weather server said: bad key plain-looking-weather-key-42")); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "plain-looking-weather-key-42") {
		t.Errorf("log line %q leaks the $env value", out.String())
	}
}

// TestDefaultManifestBuiltIn: from a directory without manifests/, the
// default manifest is the one built into the binary.
func TestDefaultManifestBuiltIn(t *testing.T) {
	t.Chdir(t.TempDir())
	m, err := loadManifest("manifests/default.json")
	if err != nil {
		t.Fatalf("loadManifest(default) away from the repo = %v", err)
	}
	if m.DID != "did:web:neobot.local:agents:default" || len(m.Servers) != 1 {
		t.Errorf("built-in manifest = %+v", m)
	}
	if _, err := loadManifest("elsewhere.json"); err == nil {
		t.Error("a missing non-default manifest loaded, want an error")
	}
}

// FuzzMayHoldToken: the check that spares most log lines the token
// expression never passes over a line the expression would redact.
func FuzzMayHoldToken(f *testing.F) {
	for _, s := range []string{
		"clone failed: https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/x",
		"token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz rejected",
		"aws: AKIAIOSFODNN7EXAMPLE is not authorized",
		"login MTA4NjQ5NjQ2NDc4NjQ5NjQ2NA.GhTz9a.abcdefghijklmnopqrstuvwxyz0123456 failed",
		"a-MTA4NjQ5NjQ2NDc4NjQ5NjQ2NA.GhTz9a.abcdefghijklmnopqrstuvwxyz0123456",
		"Authorization: BeArEr abc.def",
		"xoxb-123-456 xapp-1-A sk-abcdefghijklmnop1234 fw_abcdefghijklmnop1234",
		`{"level":"info","thread":"slack/T0/C0/1700000000.000100","msg":"agent: turn done"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if tokenShapes.MatchString(line) && !mayHoldToken([]byte(line)) {
			t.Errorf("mayHoldToken(%q) = false, but the token expression matches %q", line, tokenShapes.FindString(line))
		}
	})
}
