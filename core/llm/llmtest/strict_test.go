package llmtest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// TestRefusesWhatProvidersRefuse: conversations OpenAI-compatible servers
// answer 400 to, sent through neobot's own client.
func TestRefusesWhatProvidersRefuse(t *testing.T) {
	call := llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{llmtest.Call("c1", "fs__read", `{}`)}}
	tests := []struct {
		name string
		msgs []llm.Message
		want string // "" accepted
	}{
		{"a tool call answered", []llm.Message{llm.UserMessage("hi"), call, llm.ToolResult("c1", "fs__read", "ok")}, ""},
		{"a tool message answering nothing", []llm.Message{llm.UserMessage("hi"), llm.ToolResult("c9", "fs__read", "ok")}, "answers none"},
		{"a tool call left unanswered", []llm.Message{llm.UserMessage("hi"), call, llm.UserMessage("and?")}, "has no tool message"},
		{"a request ending on an unanswered call", []llm.Message{llm.UserMessage("hi"), call}, "has no tool message"},
		{"an unknown role", []llm.Message{{Role: "narrator", Content: "once upon"}}, "unknown role"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Text("fine") })
			c, err := llm.New(llm.Config{Model: "m", Provider: "openai-compatible", BaseURL: srv.BaseURL()})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Chat(context.Background(), llm.ChatRequest{Messages: tt.msgs})
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Chat = %v, want it accepted", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Chat = %v, want a 400 saying %q", err, tt.want)
			}
		})
	}
}
