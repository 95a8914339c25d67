package llm_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/neobot/neobot/core/llm"
)

func TestDetectProvider(t *testing.T) {
	tests := []struct {
		model, want string
	}{
		{"accounts/fireworks/models/qwen3-235b-a22b", "fireworks"},
		{"accounts/fireworks/models/deepseek-r1-0528", "fireworks"},
		{"accounts/my-team/deployedModels/llama-ft", "fireworks"},
		{"Qwen/Qwen3.7-Max", "together"},
		{"meta-llama/Llama-3.3-70B-Instruct-Turbo", "together"},
		{"deepseek-ai/DeepSeek-R1", "together"},
		{"opencode/kimi-k2", "opencode"},
		{"OpenCode/qwen3-coder", "opencode"},
		{"gpt-4o", "openai"},
		{"gpt-5-mini", "openai"},
		{"chatgpt-4o-latest", "openai"},
		{"o1", "openai"},
		{"o3-mini", "openai"},
		{"o4-mini-high", "openai"},
		{"omni-model", ""},
		{"o", ""},
		{"llama3.1:8b", ""},
		{"qwen3", ""},
		{"a/b/c", ""},
		{"/model", ""},
		{"claude-sonnet-4", ""},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			if got := llm.DetectProvider(tt.model); got != tt.want {
				t.Errorf("DetectProvider(%q) = %q, want %q", tt.model, got, tt.want)
			}
		})
	}
}

func TestNewResolvesProvider(t *testing.T) {
	env := envMap{
		"FIREWORKS_API_KEY": "fw", "TOGETHER_API_KEY": "tg", "OPENCODE_API_KEY": "oc", "OPENAI_API_KEY": "oa",
		"MATRIX_GATEWAY_TOKEN": "gw",
	}
	tests := []struct {
		name          string
		cfg           llm.Config
		provider      string
		endpoint      string
		contextWindow int
	}{
		{"fireworks", llm.Config{Model: "accounts/fireworks/models/qwen3-235b-a22b"}, "fireworks", "https://api.fireworks.ai/inference/v1/chat/completions", 131_072},
		{"together", llm.Config{Model: "Qwen/Qwen3.7-Max"}, "together", "https://api.together.xyz/v1/chat/completions", 131_072},
		{"opencode", llm.Config{Model: "opencode/kimi-k2"}, "opencode", "https://opencode.ai/zen/v1/chat/completions", 131_072},
		{"openai", llm.Config{Model: "gpt-4o"}, "openai", "https://api.openai.com/v1/chat/completions", 128_000},
		{"ollama base URL", llm.Config{Model: "llama3.1:8b", BaseURL: "http://127.0.0.1:11434/v1/"}, "openai-compatible", "http://127.0.0.1:11434/v1/chat/completions", 128_000},
		{"base URL wins over model", llm.Config{Model: "accounts/fireworks/models/x", BaseURL: "http://vllm:8000/v1"}, "openai-compatible", "http://vllm:8000/v1/chat/completions", 128_000},
		{"full endpoint as base", llm.Config{Model: "m", BaseURL: "http://h/v1/chat/completions"}, "openai-compatible", "http://h/v1/chat/completions", 128_000},
		{"hosted base URL keeps its provider", llm.Config{Model: "some-model", BaseURL: "https://api.fireworks.ai/inference/v1"}, "fireworks", "https://api.fireworks.ai/inference/v1/chat/completions", 128_000},
		{"provider override", llm.Config{Model: "my-org/custom", Provider: "Fireworks"}, "fireworks", "https://api.fireworks.ai/inference/v1/chat/completions", 128_000},
		{"gateway", llm.Config{Model: "Qwen/Qwen3.7-Max", GatewayURL: "https://gw.example/v1"}, "together", "https://gw.example/v1/chat/completions", 131_072},
		{"gateway with unknown model", llm.Config{Model: "house-model", GatewayURL: "https://gw.example"}, "openai-compatible", "https://gw.example/v1/chat/completions", 128_000},
		{"context window override", llm.Config{Model: "gpt-4o", ContextWindow: 32_000}, "openai", "https://api.openai.com/v1/chat/completions", 32_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Env = env.get
			c, err := llm.New(tt.cfg)
			if err != nil {
				t.Fatalf("New(%s) = %v", tt.name, err)
			}
			if c.Provider() != tt.provider || c.Endpoint() != tt.endpoint {
				t.Errorf("New(%s) provider, endpoint = %q, %q; want %q, %q", tt.name, c.Provider(), c.Endpoint(), tt.provider, tt.endpoint)
			}
			if got := c.ContextWindow(); got != tt.contextWindow {
				t.Errorf("ContextWindow() = %d, want %d", got, tt.contextWindow)
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	none := envMap{}
	tests := []struct {
		name  string
		cfg   llm.Config
		want  []string // substrings of the error
		shape bool     // errors.Is(err, ErrUnsupportedShape)
	}{
		{"no model", llm.Config{}, []string{"NEO_MODEL"}, false},
		{"unknown provider without base URL", llm.Config{Model: "llama3.1:8b"}, []string{"NEO_MODEL", "NEO_LLM_BASE_URL", "llama3.1:8b"}, false},
		{"missing fireworks key", llm.Config{Model: "accounts/fireworks/models/x"}, []string{"FIREWORKS_API_KEY"}, false},
		{"missing together key", llm.Config{Model: "Qwen/Qwen3.7-Max"}, []string{"TOGETHER_API_KEY"}, false},
		{"missing opencode key", llm.Config{Model: "opencode/kimi-k2"}, []string{"OPENCODE_API_KEY"}, false},
		{"missing openai key", llm.Config{Model: "gpt-4o"}, []string{"OPENAI_API_KEY"}, false},
		{"anthropic provider", llm.Config{Model: "claude-sonnet-4", Provider: "anthropic"}, []string{"anthropic", "NEO_LLM_BASE_URL"}, true},
		{"claude model", llm.Config{Model: "claude-sonnet-4"}, []string{"Anthropic Messages"}, true},
		{"messages endpoint", llm.Config{Model: "m", BaseURL: "https://api.anthropic.com/v1/messages"}, []string{"NEO_LLM_BASE_URL", "Anthropic Messages"}, true},
		{"responses endpoint", llm.Config{Model: "gpt-4o", BaseURL: "https://api.openai.com/v1/responses", APIKey: "k"}, []string{"NEO_LLM_BASE_URL", "OpenAI Responses"}, true},
		{"bad base URL", llm.Config{Model: "m", BaseURL: "localhost:11434"}, []string{"NEO_LLM_BASE_URL", "not an http(s) URL"}, false},
		{"bad gateway URL", llm.Config{Model: "m", GatewayURL: "ftp://gw"}, []string{"MATRIX_GATEWAY_URL"}, false},
		{"gateway without token", llm.Config{Model: "gpt-4o", GatewayURL: "https://gw"}, []string{"MATRIX_GATEWAY_TOKEN"}, false},
		{"unknown provider name", llm.Config{Model: "m", Provider: "bedrock"}, []string{`"bedrock"`, "openai-compatible"}, false},
		{"temperature", llm.Config{Model: "m", BaseURL: "http://h/v1", Temperature: 3}, []string{"temperature"}, false},
		{"max tokens", llm.Config{Model: "m", BaseURL: "http://h/v1", MaxTokens: -1}, []string{"max tokens"}, false},
		{"timeout", llm.Config{Model: "m", BaseURL: "http://h/v1", Timeout: -1}, []string{"timeout"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Env = none.get
			c, err := llm.New(tt.cfg)
			if err == nil {
				t.Fatalf("New(%s) = %v, nil; want an error", tt.name, c)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("New(%s) error = %q, want it to mention %q", tt.name, err, w)
				}
			}
			if got := errors.Is(err, llm.ErrUnsupportedShape); got != tt.shape {
				t.Errorf("errors.Is(%v, ErrUnsupportedShape) = %v, want %v", err, got, tt.shape)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("New() error = %q leaks a key", err)
			}
		})
	}
}

func TestAPIKeyFromConfigBeatsEnv(t *testing.T) {
	c, err := llm.New(llm.Config{Model: "gpt-4o", APIKey: "from-config", Env: envMap{}.get})
	if err != nil || c.Provider() != "openai" {
		t.Fatalf("New(gpt-4o, APIKey set, no env) = %v, %v; want an openai client", c, err)
	}
}

func TestContextWindow(t *testing.T) {
	tests := []struct {
		model string
		want  int
	}{
		{"gpt-4o", 128_000},
		{"gpt-4o-mini", 128_000},
		{"gpt-4", 8_192},
		{"gpt-4.1-mini", 1_047_576},
		{"o1-mini", 128_000},
		{"o3", 200_000},
		{"accounts/fireworks/models/deepseek-v3-0324", 163_840},
		{"accounts/fireworks/models/llama-v3p1-70b-instruct", 131_072},
		{"moonshotai/Kimi-K2-Instruct-0905", 262_144},
		{"Qwen/Qwen3-Coder-480B-A35B-Instruct", 262_144},
		{"opencode/kimi-k2", 131_072},
		{"mystery-model", llm.DefaultContextWindow},
		{"", llm.DefaultContextWindow},
	}
	for _, tt := range tests {
		if got := llm.ContextWindow(tt.model); got != tt.want {
			t.Errorf("ContextWindow(%q) = %d, want %d", tt.model, got, tt.want)
		}
	}
}

func TestContextWindowSource(t *testing.T) {
	tests := []struct {
		model      string
		configured int
		want       int
		wantSource llm.WindowSource
	}{
		{"gpt-4o", 0, 128_000, llm.WindowRegistry},
		{"llama3.1", 0, llm.DefaultContextWindow, llm.WindowGuessed},
		{"mystery-model", 16_000, 16_000, llm.WindowConfigured},
		{"gpt-4o", 16_000, 16_000, llm.WindowConfigured},
	}
	for _, tt := range tests {
		c, err := llm.New(llm.Config{Model: tt.model, Provider: "openai-compatible", BaseURL: "http://127.0.0.1:1/v1", ContextWindow: tt.configured})
		if err != nil {
			t.Fatal(err)
		}
		if got, src := c.ContextWindowSource(); got != tt.want || src != tt.wantSource {
			t.Errorf("%s (configured %d): ContextWindowSource() = %d, %s; want %d, %s", tt.model, tt.configured, got, src, tt.want, tt.wantSource)
		}
	}
}
