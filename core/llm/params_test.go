package llm_test

import (
	"context"
	"testing"

	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// TestTokenLimitParam: OpenAI's reasoning models, by any path, take
// max_completion_tokens; every other model max_tokens.
func TestTokenLimitParam(t *testing.T) {
	tests := []struct{ model, want string }{
		{"o1", llm.ParamMaxCompletionTokens},
		{"o1-mini", llm.ParamMaxCompletionTokens},
		{"o3", llm.ParamMaxCompletionTokens},
		{"o3-mini-2025-01-31", llm.ParamMaxCompletionTokens},
		{"o4-mini", llm.ParamMaxCompletionTokens},
		{"O4-Mini-High", llm.ParamMaxCompletionTokens},
		{"gpt-5", llm.ParamMaxCompletionTokens},
		{"gpt-5-mini", llm.ParamMaxCompletionTokens},
		{"gpt-5.1", llm.ParamMaxCompletionTokens},
		{"openai/gpt-5-nano", llm.ParamMaxCompletionTokens},
		{"gpt-4.1", llm.ParamMaxTokens},
		{"gpt-4o-mini", llm.ParamMaxTokens},
		{"gpt-oss-120b", llm.ParamMaxTokens},
		{"o1x", llm.ParamMaxTokens},
		{"ollama", llm.ParamMaxTokens},
		{"accounts/fireworks/models/qwen3-235b-a22b", llm.ParamMaxTokens},
	}
	for _, tt := range tests {
		if got := llm.TokenLimitParam(tt.model); got != tt.want {
			t.Errorf("TokenLimitParam(%q) = %s, want %s", tt.model, got, tt.want)
		}
	}
}

// TestClientSendsTheModelsCap: every request, streamed or not, carries the
// cap under the name the model takes, never both; a strict provider
// (llmtest refuses max_tokens for the o-series) answers.
func TestClientSendsTheModelsCap(t *testing.T) {
	tests := []struct {
		model            string
		wantMax, wantMCT int
	}{
		{"o3-mini", 0, 64},
		{"gpt-5", 0, 64},
		{"gpt-4.1", 64, 0},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Text("OK") })
			c, err := llm.New(llm.Config{Model: tt.model, Provider: llm.ProviderCompatible, BaseURL: srv.BaseURL(), MaxTokens: 64})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Chat(context.Background(), llm.ChatRequest{Messages: []llm.Message{llm.UserMessage("hi")}}); err != nil {
				t.Fatalf("Chat = %v", err)
			}
			if _, err := c.ChatStream(context.Background(), llm.ChatRequest{Messages: []llm.Message{llm.UserMessage("hi")}}, nil); err != nil {
				t.Fatalf("ChatStream = %v", err)
			}
			for i, r := range srv.Requests() {
				if r.MaxTokens != tt.wantMax || r.MaxCompletionTokens != tt.wantMCT {
					t.Errorf("request %d: max_tokens %d, max_completion_tokens %d; want %d, %d", i, r.MaxTokens, r.MaxCompletionTokens, tt.wantMax, tt.wantMCT)
				}
			}
		})
	}
}
