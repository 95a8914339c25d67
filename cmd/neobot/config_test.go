package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func envOf(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestLoadConfigPrecedence(t *testing.T) {
	env := envOf(map[string]string{"NEO_MODEL": "gpt-4.1", "NEO_DB_PATH": "/env.db", "SLACK_APPROVERS": "U1, U2"})
	c, rest, err := loadConfig("neobot", []string{"--db", "/flag.db", "extra"}, env, &bytes.Buffer{}, nil)
	if err != nil {
		t.Fatalf("loadConfig: %v", err)
	}
	if c.Model != "gpt-4.1" {
		t.Errorf("Model = %q, want gpt-4.1 from the environment", c.Model)
	}
	if c.DBPath != "/flag.db" {
		t.Errorf("DBPath = %q, want /flag.db: a flag overrides the environment", c.DBPath)
	}
	if c.StepBudget != 24 || c.MaxConcurrentTurns != 64 || c.SlackMode != "socket" {
		t.Errorf("defaults = step %d, turns %d, mode %q; want 24, 64, socket", c.StepBudget, c.MaxConcurrentTurns, c.SlackMode)
	}
	if c.CompactSoft != 0.80 || c.CompactHard != 0.92 || c.ToolTimeout != time.Minute || c.DaemonWait != 30*time.Minute {
		t.Errorf("defaults = soft %v, hard %v, tool timeout %v, daemon wait %v; want 0.80, 0.92, 1m, 30m (the seed's)", c.CompactSoft, c.CompactHard, c.ToolTimeout, c.DaemonWait)
	}
	if got := strings.Join(c.SlackApprovers, ","); got != "U1,U2" {
		t.Errorf("SlackApprovers = %q, want U1,U2", got)
	}
	if len(rest) != 1 || rest[0] != "extra" {
		t.Errorf("rest = %q, want [extra]", rest)
	}
}

func TestLoadConfigErrorsNameTheVariable(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{"bad number", map[string]string{"NEO_STEP_BUDGET": "many"}, nil, []string{"NEO_STEP_BUDGET", "whole number"}},
		{"bad flag number", nil, []string{"--max-concurrent-turns", "-3"}, []string{"--max-concurrent-turns"}},
		{"zero turns", map[string]string{"NEO_MAX_CONCURRENT_TURNS": "0"}, nil, []string{"NEO_MAX_CONCURRENT_TURNS", "at least 1"}},
		{"bad url", map[string]string{"NEO_LLM_BASE_URL": "localhost:11434"}, nil, []string{"NEO_LLM_BASE_URL", "http(s) URL"}},
		{"gateway without token", map[string]string{"MATRIX_GATEWAY_URL": "https://gw.example"}, nil, []string{"MATRIX_GATEWAY_TOKEN"}},
		{"user token as bot token", map[string]string{"SLACK_BOT_TOKEN": "xoxp-1-2", "SLACK_APP_TOKEN": "xapp-1"}, nil, []string{"SLACK_BOT_TOKEN", "xoxb-"}},
		{"socket mode without app token", map[string]string{"SLACK_BOT_TOKEN": "xoxb-1-2"}, nil, []string{"SLACK_APP_TOKEN", "xapp-"}},
		{"http mode without secret", map[string]string{"SLACK_BOT_TOKEN": "xoxb-1-2", "SLACK_MODE": "http"}, nil, []string{"SLACK_SIGNING_SECRET"}},
		{"unknown mode", map[string]string{"SLACK_MODE": "rtm"}, nil, []string{"SLACK_MODE", "socket or http"}},
		{"client id without its secret", map[string]string{"SLACK_CLIENT_ID": "1.2"}, nil, []string{"SLACK_CLIENT_SECRET", "App Credentials", "set both or neither"}},
		{"distribution with a bot token", map[string]string{"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "s", "SLACK_REDIRECT_URL": "https://neo.example/slack/oauth/callback", "SLACK_BOT_TOKEN": "xoxb-1-2", "SLACK_APP_TOKEN": "xapp-1"}, nil, []string{"SLACK_BOT_TOKEN", "unset one of them"}},
		{"distribution without the client id", map[string]string{"SLACK_REDIRECT_URL": "https://neo.example/slack/oauth/callback", "SLACK_SIGNING_SECRET": "s"}, nil, []string{"SLACK_CLIENT_ID", "is required with SLACK_REDIRECT_URL"}},
		{"install without a key", map[string]string{"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "s", "SLACK_SIGNING_SECRET": "s", "SLACK_REDIRECT_URL": "https://neo.example/slack/oauth/callback"}, nil, []string{"NEO_SECRET_KEY", "seals"}},
		{"install without a redirect", map[string]string{"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "s", "SLACK_SIGNING_SECRET": "s"}, nil, []string{"SLACK_REDIRECT_URL", "/slack/oauth/callback"}},
		{"client secret alone", map[string]string{"SLACK_CLIENT_SECRET": "s"}, nil, []string{"SLACK_CLIENT_ID"}},
		{"client document over http", map[string]string{"NEO_CLIENT_METADATA_URL": "http://neo.example/client.json"}, nil, []string{"NEO_CLIENT_METADATA_URL", "https URL with a path"}},
		{"client document without a path", map[string]string{"NEO_CLIENT_METADATA_URL": "https://neo.example/"}, nil, []string{"NEO_CLIENT_METADATA_URL", "https URL with a path"}},
		{"daemon over plain http", map[string]string{"NEO_DAEMON_URL": "http://10.0.0.5:8080"}, nil, []string{"NEO_DAEMON_URL", "https", "loopback"}},
		{"short admin token", map[string]string{"NEO_ADMIN_TOKEN": "admin-e2e-token"}, nil, []string{"NEO_ADMIN_TOKEN", "15 characters", "at least 32", "openssl rand -hex 32"}},
		{"admin token one short", map[string]string{"NEO_ADMIN_TOKEN": strings.Repeat("a", 31)}, nil, []string{"NEO_ADMIN_TOKEN", "at least 32"}},
		{"soft above hard", map[string]string{"NEO_COMPACT_SOFT": "0.95"}, nil, []string{"NEO_COMPACT_SOFT", "0.95 must be below NEO_COMPACT_HARD (0.92)"}},
		{"soft equals hard", map[string]string{"NEO_COMPACT_SOFT": "0.7", "NEO_COMPACT_HARD": "0.7"}, nil, []string{"NEO_COMPACT_SOFT", "below NEO_COMPACT_HARD"}},
		{"vision not a choice", map[string]string{"NEO_MODEL_VISION": "maybe"}, nil, []string{"NEO_MODEL_VISION", `"maybe" is not auto, yes or no`}},
		{"hard of the whole window", map[string]string{"NEO_COMPACT_HARD": "1"}, nil, []string{"NEO_COMPACT_HARD", "between 0 and 1"}},
		{"soft as a percentage", nil, []string{"--compact-soft", "80%"}, []string{"--compact-soft", "between 0 and 1"}},
		{"zero tool timeout", map[string]string{"NEO_TOOL_TIMEOUT": "0s"}, nil, []string{"NEO_TOOL_TIMEOUT", "positive duration"}},
		{"unknown reasoning posture", map[string]string{"NEO_MODEL_OPENS_IN_REASONING": "sometimes"}, nil, []string{"NEO_MODEL_OPENS_IN_REASONING", "auto", "yes", "no"}},
		{"negative daemon wait", nil, []string{"--daemon-max-wait", "-5m"}, []string{"--daemon-max-wait", "positive duration"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := loadConfig("neobot", tt.args, envOf(tt.env), &bytes.Buffer{}, nil)
			if err == nil {
				t.Fatalf("loadConfig(%v, %v) = nil error, want one naming %v", tt.env, tt.args, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("loadConfig error = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

// An admin token of 32 characters or more, or none (the admin API off),
// starts.
func TestAdminTokenAccepted(t *testing.T) {
	for _, token := range []string{"", strings.Repeat("a", 32), "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"} {
		if _, _, err := loadConfig("neobot", nil, envOf(map[string]string{"NEO_ADMIN_TOKEN": token}), &bytes.Buffer{}, nil); err != nil {
			t.Errorf("loadConfig(NEO_ADMIN_TOKEN of %d characters) = %v, want it accepted", len(token), err)
		}
	}
}

func TestRequireModel(t *testing.T) {
	c, _, err := loadConfig("neobot", nil, envOf(nil), &bytes.Buffer{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.requireModel(); err == nil || !strings.Contains(err.Error(), "NEO_MODEL") {
		t.Errorf("requireModel() = %v, want an error naming NEO_MODEL", err)
	}
}

func TestSecretsNeverPrint(t *testing.T) {
	c := &Config{SlackBotToken: "xoxb-111-222-abc", DaemonToken: "daemon-secret-value"}
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), string(js)} {
		for _, s := range []string{"xoxb-111", "daemon-secret-value"} {
			if strings.Contains(out, s) {
				t.Errorf("formatted config leaks %q: %s", s, out)
			}
		}
	}
	if got := c.DaemonToken.Reveal(); got != "daemon-secret-value" {
		t.Errorf("Reveal() = %q, want the value", got)
	}
}

func TestLogScrubsTokens(t *testing.T) {
	var buf bytes.Buffer
	log, err := newLogger(&buf, "debug", "json", Secret("hunter2-custom-secret"))
	if err != nil {
		t.Fatal(err)
	}
	log.Info().Str("token", "xoxb-123-456-abcdef").Msg("connecting")
	log.Error().Err(fmt.Errorf("dial: Authorization: Bearer abc.def-ghi failed")).Msg("boom")
	log.Warn().Str("app", "xapp-1-A0-123-zz").Str("cfg", "hunter2-custom-secret").Msg("x")
	out := buf.String()
	for _, leak := range []string{"xoxb-123", "abc.def-ghi", "xapp-1", "hunter2-custom-secret"} {
		if strings.Contains(out, leak) {
			t.Errorf("log output leaks %q:\n%s", leak, out)
		}
	}
	if got := strings.Count(out, "[REDACTED]"); got != 4 {
		t.Errorf("log output has %d [REDACTED] markers, want 4:\n%s", got, out)
	}
}

func TestLoggerRejectsBadSettings(t *testing.T) {
	if _, err := newLogger(&bytes.Buffer{}, "loud", "json"); err == nil || !strings.Contains(err.Error(), "NEO_LOG_LEVEL") {
		t.Errorf("newLogger(level loud) = %v, want an error naming NEO_LOG_LEVEL", err)
	}
	if _, err := newLogger(&bytes.Buffer{}, "info", "xml"); err == nil || !strings.Contains(err.Error(), "NEO_LOG_FORMAT") {
		t.Errorf("newLogger(format xml) = %v, want an error naming NEO_LOG_FORMAT", err)
	}
}

var update = flag.Bool("update", false, "rewrite golden files and the README's settings table")

// TestReadmeSettings keeps the README's configuration table identical to
// the settings neobot reads; -update rewrites it.
func TestReadmeSettings(t *testing.T) {
	const path = "../../README.md"
	const startMark, endMark = "<!-- settings:start", "<!-- settings:end -->"
	readme, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read README: %v", err)
	}
	s := string(readme)
	i, j := strings.Index(s, startMark), strings.Index(s, endMark)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the %q ... %q markers around the settings table", startMark, endMark)
	}
	i += strings.Index(s[i:], "\n") + 1
	var table bytes.Buffer
	printSettings(&table, true)
	if *update {
		s = s[:i] + table.String() + s[j:]
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := s[i:j]; got != table.String() {
		t.Errorf("README.md settings table is stale; run go test ./cmd/neobot -run Readme -update\ngot:\n%s\nwant:\n%s", got, table.String())
	}
}

func TestSettingsFile(t *testing.T) {
	write := func(t *testing.T, body string) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "neobot.json")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	t.Run("lists, numbers, and who wins", func(t *testing.T) {
		path := write(t, `{"SLACK_APPROVERS": ["U1", "U2"], "NEO_STEP_BUDGET": 12, "NEO_DB_PATH": "/file.db", "NEO_MODEL": "from-file"}`)
		env := envOf(map[string]string{"NEO_CONFIG": path, "NEO_DB_PATH": "/env.db"})
		c, _, err := loadConfig("neobot", []string{"--model", "from-flag"}, env, &bytes.Buffer{}, nil)
		if err != nil {
			t.Fatalf("loadConfig: %v", err)
		}
		if got := strings.Join(c.SlackApprovers, ","); got != "U1,U2" {
			t.Errorf("SlackApprovers = %q, want U1,U2 from the file", got)
		}
		if c.StepBudget != 12 {
			t.Errorf("StepBudget = %d, want 12 from the file", c.StepBudget)
		}
		if c.DBPath != "/env.db" {
			t.Errorf("DBPath = %q, want /env.db: the environment overrides the file", c.DBPath)
		}
		if c.Model != "from-flag" {
			t.Errorf("Model = %q, want from-flag: a flag overrides the file", c.Model)
		}
	})
	t.Run("skills", func(t *testing.T) {
		path := write(t, `{"SLACK_APPROVERS": ["U1"], "skills": {"reader": {"side_effects": {"read": "allow"}, "places": ["slack:T1/C1"]}}}`)
		c, _, err := loadConfig("neobot", nil, envOf(map[string]string{"NEO_CONFIG": path}), &bytes.Buffer{}, nil)
		if err != nil {
			t.Fatalf("loadConfig: %v", err)
		}
		if sp, ok := c.Skills["reader"]; !ok || sp.SideEffects["read"] != "allow" || len(sp.Places) != 1 {
			t.Errorf("Skills = %+v, want the file's reader skill", c.Skills)
		}
		bad := write(t, `{"skills": {"reader": {"tool": []}}}`)
		if _, _, err := loadConfig("neobot", nil, envOf(map[string]string{"NEO_CONFIG": bad}), &bytes.Buffer{}, nil); err == nil ||
			!strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), `unknown field "tool"`) {
			t.Errorf("a misspelt skill field: %v, want an error naming the file and the field", err)
		}
	})
	t.Run("--config beats NEO_CONFIG", func(t *testing.T) {
		a, b := write(t, `{"NEO_MODEL": "a"}`), write(t, `{"NEO_MODEL": "b"}`)
		c, _, err := loadConfig("neobot", []string{"--config", b}, envOf(map[string]string{"NEO_CONFIG": a}), &bytes.Buffer{}, nil)
		if err != nil || c.Model != "b" {
			t.Errorf("loadConfig(--config b) = %+v, %v; want model b", c, err)
		}
	})
	refusals := []struct {
		name, body string
		want       []string
	}{
		{"secret", `{"SLACK_BOT_TOKEN": "xoxb-1-2"}`, []string{"SLACK_BOT_TOKEN", "secret", "environment"}},
		{"unknown", `{"SLACK_APPROVER": ["U1"]}`, []string{"SLACK_APPROVER", "not a setting"}},
		{"not an object", `["U1"]`, []string{"NEO_CONFIG", "JSON object"}},
		{"wrong type", `{"SLACK_APPROVERS": {"a": 1}}`, []string{"SLACK_APPROVERS", "list of strings"}},
		{"bad value", `{"NEO_STEP_BUDGET": "lots"}`, []string{"NEO_STEP_BUDGET", "whole number"}},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			path := write(t, tt.body)
			_, _, err := loadConfig("neobot", nil, envOf(map[string]string{"NEO_CONFIG": path}), &bytes.Buffer{}, nil)
			if err == nil {
				t.Fatalf("loadConfig(%s) = nil error, want a refusal", tt.body)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("loadConfig(%s) error = %q, want it to contain %q", tt.body, err, w)
				}
			}
			if strings.Contains(err.Error(), "xoxb-1-2") {
				t.Errorf("error echoes the secret: %q", err)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		_, _, err := loadConfig("neobot", nil, envOf(map[string]string{"NEO_CONFIG": "/nonexistent/neobot.json"}), &bytes.Buffer{}, nil)
		if err == nil || !strings.Contains(err.Error(), "NEO_CONFIG=/nonexistent/neobot.json") {
			t.Errorf("loadConfig(missing file) = %v, want an error naming NEO_CONFIG and the path", err)
		}
	})
}

// TestFlagKinds: a flag's usage shows what it takes, and a bool setting's
// flag may be given alone.
func TestFlagKinds(t *testing.T) {
	var usage strings.Builder
	cfg, _, err := loadConfig("neobot", []string{"--self-approve", "--step-budget", "7", "--daemon-poll=2s"}, func(string) string { return "" }, &usage, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.SelfApprove || cfg.StepBudget != 7 || cfg.DaemonPoll != 2*time.Second {
		t.Errorf("flags parsed to self-approve %v, step budget %d, daemon poll %s", cfg.SelfApprove, cfg.StepBudget, cfg.DaemonPoll)
	}
	_, _, _ = loadConfig("neobot", []string{"-h"}, func(string) string { return "" }, &usage, nil)
	for _, want := range []string{"-daemon-poll duration\n", "-step-budget int\n", "-web-users list\n", "-model string\n", "-self-approve\n"} {
		if !strings.Contains(usage.String(), want) {
			t.Errorf("usage lacks %q", want)
		}
	}
	if strings.Contains(usage.String(), "-self-approve string") || strings.Contains(usage.String(), "-step-budget string") {
		t.Error("usage still shows every flag as a string")
	}
}

// TestCheapEndpoint: the cheap model shares the main model's endpoint,
// provider and key until NEO_CHEAP_LLM_BASE_URL names its own; then the
// main provider override and key stay with the main model.
func TestCheapEndpoint(t *testing.T) {
	main := map[string]string{"NEO_MODEL": "m", "NEO_CHEAP_MODEL": "c", "NEO_LLM_BASE_URL": "https://main.example/v1",
		"NEO_LLM_PROVIDER": "openai-compatible", "NEO_LLM_API_KEY": "key-main"}
	tests := []struct {
		name                string
		add                 map[string]string
		base, provider, key string
		baseVar             string
	}{
		{"shared", nil, "https://main.example/v1", "openai-compatible", "key-main", "NEO_LLM_BASE_URL"},
		{"shared endpoint, own key", map[string]string{"NEO_CHEAP_LLM_API_KEY": "key-cheap"}, "https://main.example/v1", "openai-compatible", "key-cheap", "NEO_LLM_BASE_URL"},
		{"own endpoint", map[string]string{"NEO_CHEAP_LLM_BASE_URL": "http://127.0.0.1:11434/v1"}, "http://127.0.0.1:11434/v1", "", "", "NEO_CHEAP_LLM_BASE_URL"},
		{"own endpoint, provider and key", map[string]string{"NEO_CHEAP_LLM_BASE_URL": "https://cheap.example/v1", "NEO_CHEAP_LLM_PROVIDER": "together", "NEO_CHEAP_LLM_API_KEY": "key-cheap"},
			"https://cheap.example/v1", "together", "key-cheap", "NEO_CHEAP_LLM_BASE_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kv := maps.Clone(main)
			maps.Copy(kv, tt.add)
			cfg, _, err := loadConfig("neobot", nil, envOf(kv), &bytes.Buffer{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			ep := cfg.cheapEndpoint()
			if ep.model != "c" || ep.baseURL != tt.base || ep.provider != tt.provider || ep.key.Reveal() != tt.key || ep.baseVar != tt.baseVar {
				t.Errorf("cheapEndpoint() = %+v, want base %q provider %q key %q from %s", ep, tt.base, tt.provider, tt.key, tt.baseVar)
			}
			if !slices.Contains(cfg.secrets(), Secret("key-cheap")) && tt.add["NEO_CHEAP_LLM_API_KEY"] != "" {
				t.Errorf("secrets() lacks NEO_CHEAP_LLM_API_KEY: it would be logged unredacted")
			}
		})
	}
	_, _, err := loadConfig("neobot", nil, envOf(map[string]string{"NEO_CHEAP_LLM_BASE_URL": "http://127.0.0.1:1/v1"}), &bytes.Buffer{}, nil)
	if err == nil || !strings.Contains(err.Error(), "NEO_CHEAP_MODEL") {
		t.Errorf("a cheap endpoint without NEO_CHEAP_MODEL = %v, want it refused naming NEO_CHEAP_MODEL", err)
	}
}
