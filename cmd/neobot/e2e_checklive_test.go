package main

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neobot/neobot/core/delegate/delegatetest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// TestCheckLiveTellsTheTruth: check --live probes the main model, the
// cheap model and the daemon; each failure names what was called, what
// came back and the fix, and with everything up (an o-series main model on
// a provider that refuses max_tokens for it, as OpenAI does) it exits 0.
func TestCheckLiveTellsTheTruth(t *testing.T) {
	model := llmtest.New(t)
	model.Handle(func(r llmtest.Request) llmtest.Reply {
		if r.Model == "o1-legacy" && r.MaxCompletionTokens > 0 {
			// An older OpenAI-compatible server that knows only max_tokens.
			return llmtest.Reply{Status: 400, Body: `{"error":{"message":"Unrecognized request argument supplied: max_completion_tokens","type":"invalid_request_error"}}`}
		}
		if r.Model == "unknown-cheap" {
			return llmtest.Reply{Status: 404, Body: `{"error":{"message":"model unknown-cheap not found","type":"not_found"}}`}
		}
		return llmtest.Text("OK")
	})
	daemon := delegatetest.New(t)
	daemon.RequireToken("daemon-token")
	notFound := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notFound.Close)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "upstream connect error", http.StatusBadGateway)
	}))
	t.Cleanup(failing.Close)
	dead := "http://" + freeAddr(t) + "/v1"

	healthy := map[string]string{
		"NEO_MODEL": "o3-mini", "NEO_CHEAP_MODEL": cheapModel, "NEO_LLM_BASE_URL": model.BaseURL(),
		"NEO_MANIFEST": emptyManifest(t), "NEO_DB_PATH": filepath.Join(t.TempDir(), "neobot.db"),
		"NEO_DAEMON_URL": daemon.URL(), "NEO_DAEMON_TOKEN": "daemon-token", "SLACK_APPROVERS": "U1", "SLACK_SPEND_USERS": "U1",
	}
	tests := []struct {
		name string
		set  map[string]string
		want []string // in stderr; none: check passes
	}{
		{"all up, an o-series main model", nil, nil},
		{"daemon answering 404", map[string]string{"NEO_DAEMON_URL": notFound.URL},
			[]string{"does not look like the execution daemon", "GET " + notFound.URL + "/messages/async/", "HTTP 404", "fix: set NEO_DAEMON_URL to the daemon's base URL"}},
		{"daemon failing", map[string]string{"NEO_DAEMON_URL": failing.URL},
			[]string{"the execution daemon is failing", "HTTP 502", "upstream connect error", "fix: look at the daemon's logs"}},
		{"daemon refusing the token", map[string]string{"NEO_DAEMON_TOKEN": "wrong"},
			[]string{"refused NEO_DAEMON_TOKEN", "HTTP 401", "fix: set NEO_DAEMON_TOKEN"}},
		{"cheap model down", map[string]string{"NEO_CHEAP_LLM_BASE_URL": dead},
			[]string{"the cheap model test-cheap did not answer (POST " + dead + "/chat/completions with max_tokens=1)", "cannot be reached", "fix: start the model's server, or set NEO_CHEAP_LLM_BASE_URL"}},
		{"cheap model unknown to the endpoint", map[string]string{"NEO_CHEAP_MODEL": "unknown-cheap"},
			[]string{"the cheap model unknown-cheap did not answer", "http 404", "fix: check that NEO_CHEAP_MODEL=unknown-cheap is a model this endpoint serves"}},
		{"o-series name on a server that takes only max_tokens", map[string]string{"NEO_MODEL": "o1-legacy"},
			[]string{"the main model o1-legacy did not answer", "max_completion_tokens=1", "http 400", "Unrecognized request argument", "fix: the endpoint refused the request for NEO_MODEL=o1-legacy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kv := maps.Clone(healthy)
			maps.Copy(kv, tt.set)
			out, stderr, err := run(t, kv, "", "check", "--live")
			if tt.want == nil {
				if err != nil {
					t.Fatalf("check --live = %v, want exit 0\n%s\n%s", err, out, stderr)
				}
				for _, w := range []string{
					"live: model o3-mini answered (main model, POST " + model.BaseURL() + "/chat/completions with max_completion_tokens=1: HTTP 200)",
					"live: model test-cheap answered (cheap model, POST " + model.BaseURL() + "/chat/completions with max_tokens=1: HTTP 200)",
					"live: the execution daemon answers (GET " + daemon.URL() + "/messages/async/neobot-live-check: HTTP 404, the daemon's own answer",
				} {
					if !strings.Contains(out, w) {
						t.Errorf("stdout lacks %q:\n%s", w, out)
					}
				}
				return
			}
			if err == nil {
				t.Fatalf("check --live passed; want it to fail\n%s", out)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "daemon-token") {
				t.Errorf("check leaks the daemon token:\n%s", stderr)
			}
		})
	}
}

// TestModelsEachTheirOwnEndpoint: the main and the cheap model on two
// servers with two keys. Each server gets only its own model's requests,
// with its own key, from check --live and from a conversation (the cheap
// model writes memory back); a cheap server without a key of its own is
// never sent the main key.
func TestModelsEachTheirOwnEndpoint(t *testing.T) {
	tests := []struct {
		name      string
		cheapKey  string
		wantCheap string // the cheap server's Authorization
	}{
		{"two keys", "key-cheap", "Bearer key-cheap"},
		{"a cheap server without a key", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			main, cheap := llmtest.New(t), llmtest.New(t)
			main.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Text("Hello from main.") })
			cheap.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Text(`{"facts":[]}`) })
			kv := map[string]string{
				"NEO_MODEL": "test-main", "NEO_LLM_BASE_URL": main.BaseURL(), "NEO_LLM_API_KEY": "key-main",
				"NEO_CHEAP_MODEL": cheapModel, "NEO_CHEAP_LLM_BASE_URL": cheap.BaseURL(), "NEO_CHEAP_LLM_PROVIDER": "openai-compatible",
				"NEO_MANIFEST": emptyManifest(t), "NEO_DB_PATH": filepath.Join(t.TempDir(), "neobot.db"),
			}
			if tt.cheapKey != "" {
				kv["NEO_CHEAP_LLM_API_KEY"] = tt.cheapKey
			}
			if out, stderr, err := run(t, kv, "", "check", "--live"); err != nil {
				t.Fatalf("check --live = %v\n%s\n%s", err, out, stderr)
			}
			out, stderr, err := run(t, kv, "My name is Ada and I like tea.\n", "chat", "--thread", "two")
			if err != nil || !strings.Contains(out, "Hello from main.") {
				t.Fatalf("chat = %v\n%s\n%s", err, out, stderr)
			}
			for _, key := range []string{"key-main", "key-cheap"} {
				if strings.Contains(stderr, key) {
					t.Errorf("the log shows %s:\n%s", key, stderr)
				}
			}
			for _, s := range []struct {
				name, model, auth string
				srv               *llmtest.Server
				least             int
			}{
				{"main", "test-main", "Bearer key-main", main, 2},
				{"cheap", cheapModel, tt.wantCheap, cheap, 2},
			} {
				reqs := s.srv.Requests()
				if len(reqs) < s.least {
					t.Errorf("%s server: %d requests, want at least %d (the probe and the conversation)", s.name, len(reqs), s.least)
				}
				for i, r := range reqs {
					if r.Model != s.model || r.Header.Get("Authorization") != s.auth {
						t.Errorf("%s server request %d: model %q, Authorization %q; want %q, %q", s.name, i, r.Model, r.Header.Get("Authorization"), s.model, s.auth)
					}
				}
			}
		})
	}
}
