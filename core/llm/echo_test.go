package llm_test

import (
	"context"
	"testing"

	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

func TestReasoningEcho(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name     string
		provider string
		model    string
		override *bool
		want     bool
	}{
		{"fireworks default", "fireworks", "accounts/fireworks/models/qwen3-235b-a22b", nil, false},
		{"opencode default", "opencode", "opencode/kimi-k2", nil, true},
		{"kimi thinking anywhere", "together", "moonshotai/Kimi-K2-Thinking", nil, true},
		{"deepseek v3.2 anywhere", "openai-compatible", "deepseek-v3.2", nil, true},
		{"override on", "openai-compatible", "llama3.1:8b", &yes, true},
		{"override off", "opencode", "opencode/kimi-k2", &no, false},
	}
	srv := llmtest.New(t)
	srv.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Text("ok") })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, srv, func(cfg *llm.Config) {
				cfg.Provider, cfg.Model, cfg.EchoReasoning = tt.provider, tt.model, tt.override
			})
			req := ask("read it")
			req.Messages = append(req.Messages,
				llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{llmtest.Call("c1", "f", "{}")}, Reasoning: "tool-call monologue"},
				llm.ToolResult("c1", "f", "done"),
				llm.Message{Role: llm.RoleAssistant, Content: "answer", Reasoning: "answer monologue"},
				llm.UserMessage("thanks"),
			)
			if _, err := c.Chat(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			sent := reqs[len(reqs)-1].Messages
			if got := sent[2].Reasoning == "tool-call monologue"; got != tt.want {
				t.Errorf("tool-call turn echoed reasoning = %v (%q), want %v", got, sent[2].Reasoning, tt.want)
			}
			if sent[4].Reasoning != "" {
				t.Errorf("answer turn sent reasoning %q, want none: only tool-call turns echo", sent[4].Reasoning)
			}
		})
	}
}

func TestCompatibleWithoutKeySendsNoAuthorization(t *testing.T) {
	srv := llmtest.New(t)
	c, err := llm.New(llm.Config{Model: "llama3.1:8b", BaseURL: srv.BaseURL(), Env: envMap{"OPENAI_API_KEY": "unrelated"}.get})
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(llmtest.Text("local"))
	res, err := c.Chat(context.Background(), ask("hi"))
	if err != nil || res.Message.Content != "local" {
		t.Fatalf("Chat() = %+v, %v; want local", res, err)
	}
	if h := srv.Requests()[0].Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization = %q, want none for a keyless openai-compatible base", h)
	}
}
