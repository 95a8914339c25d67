package main

import (
	"github.com/neobot/neobot/adapters/web"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// TestCheckLive: check --live calls the model, Slack and the daemon once;
// it passes when they answer, and fails naming the fix when the model URL
// is dead or Slack refuses the token. Without --live nothing is called.
func TestCheckLive(t *testing.T) {
	model := llmtest.New(t)
	model.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Text("OK") })
	fake := slacktest.New(t)
	healthy := map[string]string{
		"NEO_MODEL": "test-main", "NEO_LLM_BASE_URL": model.BaseURL(), "NEO_MANIFEST": emptyManifest(t),
		"NEO_DB_PATH":     filepath.Join(t.TempDir(), "neobot.db"),
		"SLACK_BOT_TOKEN": "xoxb-live", "SLACK_APP_TOKEN": "xapp-live", "SLACK_API_URL": fake.APIURL(),
	}
	with := func(k, v string) map[string]string {
		kv := maps.Clone(healthy)
		kv[k] = v
		return kv
	}

	out, stderr, err := run(t, healthy, "", "check", "--live")
	if err != nil || !strings.Contains(out, "live: model test-main answered") || !strings.Contains(out, "live: Slack accepts SLACK_BOT_TOKEN (team "+slacktest.TeamID) {
		t.Errorf("check --live with everything up = %v\n%s\n%s", err, out, stderr)
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("model calls = %d, want one", n)
	}
	if _, _, err := run(t, healthy, "", "check"); err != nil || len(model.Requests()) != 1 {
		t.Errorf("check without --live = %v and %d model calls; want it to call nothing", err, len(model.Requests()))
	}

	dead := "http://" + freeAddr(t) + "/v1"
	_, stderr, err = run(t, with("NEO_LLM_BASE_URL", dead), "", "check", "--live")
	if err == nil || !strings.Contains(stderr, "did not answer") || !strings.Contains(stderr, "cannot be reached") {
		t.Errorf("check --live with a dead model URL = %v\n%s", err, stderr)
	}

	fake.Script("auth.test", slacktest.Reply{Error: "invalid_auth"})
	_, stderr, err = run(t, healthy, "", "check", "--live")
	if err == nil || !strings.Contains(stderr, "Slack refused SLACK_BOT_TOKEN (invalid_auth)") || !strings.Contains(stderr, "reinstall the app") {
		t.Errorf("check --live with a revoked Slack token = %v\n%s", err, stderr)
	}
	if strings.Contains(stderr, "xoxb-live") {
		t.Errorf("check leaks the Slack token: %s", stderr)
	}
}

// TestStartRefusesWhatCannotWork: a half-configured Slack, or no platform
// token with nobody at a terminal, fails start-up naming the settings
// instead of idling in terminal mode and exiting 0.
func TestStartRefusesWhatCannotWork(t *testing.T) {
	base := map[string]string{"NEO_MODEL": "test-main", "NEO_LLM_BASE_URL": "http://127.0.0.1:1/v1",
		"NEO_MANIFEST": emptyManifest(t), "NEO_DB_PATH": filepath.Join(t.TempDir(), "neobot.db")}
	tests := []struct {
		name string
		add  map[string]string
		want []string
	}{
		{"app token without bot token", map[string]string{"SLACK_APP_TOKEN": "xapp-1"}, []string{"SLACK_BOT_TOKEN", "half configured"}},
		{"no platform and no terminal", nil, []string{"SLACK_BOT_TOKEN", "DISCORD_BOT_TOKEN", "neobot chat"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kv := maps.Clone(base)
			maps.Copy(kv, tt.add)
			_, stderr, err := run(t, kv, "hello\n")
			if err == nil {
				t.Fatalf("neobot started; want it refused\n%s", stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// TestCheckSaysWhichWindow: neobot check and start-up say which context
// window the model gets and where the figure came from; a guess says to
// set NEO_CONTEXT_WINDOW.
func TestCheckSaysWhichWindow(t *testing.T) {
	model := llmtest.New(t)
	model.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Text("OK") })
	tests := []struct {
		name      string
		env       map[string]string
		wantCheck []string
		wantLog   []string
	}{
		{"unknown local model", map[string]string{"NEO_MODEL": "llama3.1"},
			[]string{"context window 128000 tokens, a guess: the model registry does not know llama3.1; set NEO_CONTEXT_WINDOW",
				"pictures: not shown to llama3.1 (the model registry does not know llama3.1, so it is taken not to)", "set NEO_MODEL_VISION=yes"},
			[]string{`"window_source":"guess"`, `"context_window":128000`, `"fix":"set NEO_CONTEXT_WINDOW`}},
		{"NEO_CONTEXT_WINDOW", map[string]string{"NEO_MODEL": "llama3.1", "NEO_CONTEXT_WINDOW": "16000", "NEO_MODEL_VISION": "yes"},
			[]string{"context window 16000 tokens (from NEO_CONTEXT_WINDOW)", "pictures: shown to llama3.1 as image content (NEO_MODEL_VISION)"},
			[]string{`"window_source":"configured"`, `"context_window":16000`}},
		{"known model", map[string]string{"NEO_MODEL": "qwen3-32b"},
			[]string{"context window 131072 tokens (from the model registry)", "pictures: not shown to qwen3-32b (the model registry)"},
			[]string{`"window_source":"registry"`, `"context_window":131072`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kv := map[string]string{"NEO_LLM_BASE_URL": model.BaseURL(), "NEO_MANIFEST": emptyManifest(t),
				"NEO_DB_PATH": filepath.Join(t.TempDir(), "neobot.db"), "NEO_LOG_FORMAT": "json"}
			maps.Copy(kv, tt.env)
			out, stderr, err := run(t, kv, "", "check")
			if err != nil {
				t.Fatalf("check = %v\n%s", err, stderr)
			}
			for _, w := range tt.wantCheck {
				if !strings.Contains(out, w) {
					t.Errorf("check output lacks %q:\n%s", w, out)
				}
			}
			if tt.name != "unknown local model" && strings.Contains(out, "a guess") {
				t.Errorf("check calls a %s window a guess:\n%s", tt.name, out)
			}
			_, stderr, err = run(t, kv, "", "chat")
			if err != nil {
				t.Fatalf("chat = %v\n%s", err, stderr)
			}
			for _, w := range append(tt.wantLog, `"message":"context window in use"`) {
				if !strings.Contains(stderr, w) {
					t.Errorf("start-up log lacks %s:\n%s", w, stderr)
				}
			}
		})
	}
}

// TestCheckMentionsTheWeb: with NEO_WEB_ADDR set, check says where the
// web is served and how many users may sign in, and does not say neobot
// will talk in the terminal.
func TestCheckMentionsTheWeb(t *testing.T) {
	_, hash, err := web.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	kv := map[string]string{"NEO_MANIFEST": emptyManifest(t), "NEO_DB_PATH": filepath.Join(t.TempDir(), "neobot.db"),
		"NEO_WEB_ADDR": "127.0.0.1:8089", "NEO_WEB_USERS": "alice=" + hash}
	out, stderr, err := run(t, kv, "", "check")
	if err != nil {
		t.Fatalf("check = %v\n%s", err, stderr)
	}
	if !strings.Contains(out, "web: API and chat page on http://127.0.0.1:8089, 1 user(s)") || strings.Contains(out, "talk in the terminal") {
		t.Errorf("check output:\n%s\nwant the web named, and no terminal", out)
	}
}

// TestCheckMentionsSlackInstalls: with SLACK_CLIENT_ID, check says where
// workspaces add Neo, and does not say neobot will talk in the terminal.
func TestCheckMentionsSlackInstalls(t *testing.T) {
	kv := map[string]string{"NEO_MANIFEST": emptyManifest(t), "NEO_DB_PATH": filepath.Join(t.TempDir(), "neobot.db"),
		"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "client-secret", "SLACK_SIGNING_SECRET": "signing-secret",
		"SLACK_REDIRECT_URL": "https://neo.example/slack/oauth/callback", "NEO_SECRET_KEY": strings.Repeat("ab", 32)}
	out, stderr, err := run(t, kv, "", "check")
	if err != nil {
		t.Fatalf("check = %v\n%s", err, stderr)
	}
	if !strings.Contains(out, "slack: any workspace may add Neo at /slack/install") || strings.Contains(out, "talk in the terminal") ||
		strings.Contains(out+stderr, "client-secret") {
		t.Errorf("check output:\n%s\nwant the install page named, no terminal, and no secret", out)
	}
}

// TestCheckLiveSlackClient: check --live asks Slack whether it knows the
// app's client ID and secret, and names them when it does not.
func TestCheckLiveSlackClient(t *testing.T) {
	model := llmtest.New(t)
	model.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Text("OK") })
	fake := slacktest.New(t)
	kv := map[string]string{
		"NEO_MODEL": "test-main", "NEO_LLM_BASE_URL": model.BaseURL(), "NEO_MANIFEST": emptyManifest(t),
		"NEO_DB_PATH": filepath.Join(t.TempDir(), "neobot.db"), "SLACK_API_URL": fake.APIURL(),
		"SLACK_CLIENT_ID": slacktest.ClientID, "SLACK_CLIENT_SECRET": slacktest.ClientSecret, "SLACK_SIGNING_SECRET": "s",
		"SLACK_REDIRECT_URL": "https://neo.example/slack/oauth/callback", "NEO_SECRET_KEY": strings.Repeat("ab", 32),
	}
	if out, stderr, err := run(t, kv, "", "check", "--live"); err != nil || !strings.Contains(out, "live: Slack accepts SLACK_CLIENT_ID and SLACK_CLIENT_SECRET") {
		t.Errorf("check --live with the app's credentials = %v\n%s\n%s", err, out, stderr)
	}
	kv["SLACK_CLIENT_SECRET"] = "wrong-secret"
	_, stderr, err := run(t, kv, "", "check", "--live")
	if err == nil || !strings.Contains(stderr, "Slack refused SLACK_CLIENT_ID or SLACK_CLIENT_SECRET (bad_client_secret)") || strings.Contains(stderr, "wrong-secret") {
		t.Errorf("check --live with a wrong client secret = %v\n%s\nwant it named, never shown", err, stderr)
	}
}
