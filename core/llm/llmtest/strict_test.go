package llmtest_test

import (
	"context"
	"io"
	"net/http"
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

// TestReportsUsageByDefault: like every OpenAI-compatible server, the fake
// reports token usage even when a reply does not script it, streamed or
// not; a scripted usage wins.
func TestReportsUsageByDefault(t *testing.T) {
	srv := llmtest.New(t)
	c, err := llm.New(llm.Config{Model: "m", Provider: "openai-compatible", BaseURL: srv.BaseURL()})
	if err != nil {
		t.Fatal(err)
	}
	req := llm.ChatRequest{Messages: []llm.Message{llm.UserMessage("how long is a piece of string?")}}
	srv.Enqueue(llmtest.Text("twice half its length"))
	res, err := c.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if u := res.Usage; u.PromptTokens == 0 || u.CompletionTokens == 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage = %+v, want prompt and completion tokens reported", u)
	}
	srv.Enqueue(llmtest.Text("streamed").Streamed(3, 0))
	res, err = c.ChatStream(context.Background(), req, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage.TotalTokens == 0 {
		t.Errorf("streamed usage = %+v, want it reported in the last chunk", res.Usage)
	}
	scripted := llmtest.Text("x")
	scripted.Usage = llm.Usage{PromptTokens: 812, CompletionTokens: 49}
	srv.Enqueue(scripted)
	if res, err := c.Chat(context.Background(), req); err != nil || res.Usage.PromptTokens != 812 {
		t.Errorf("scripted usage = %+v, %v; want 812 prompt tokens", res.Usage, err)
	}
}

// TestRefusesMaxTokensForReasoningModels: the fake answers the o-series and
// gpt-5 as OpenAI does, 400 to max_tokens, and records the caps it got.
func TestRefusesMaxTokensForReasoningModels(t *testing.T) {
	tests := []struct {
		model, body string
		want        int
	}{
		{"o3-mini", `"max_tokens":1`, 400},
		{"gpt-5", `"max_tokens":1`, 400},
		{"openai/o4-mini", `"max_tokens":1`, 400},
		{"o3-mini", `"max_completion_tokens":1`, 200},
		{"gpt-4.1", `"max_tokens":1`, 200},
		{"llama3.1", `"max_tokens":1`, 200},
	}
	for _, tt := range tests {
		t.Run(tt.model+" "+tt.body, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Text("OK") })
			body := `{"model":"` + tt.model + `","messages":[{"role":"user","content":"hi"}],` + tt.body + `}`
			resp, err := http.Post(srv.BaseURL()+"/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("POST %s = %d %s, want %d", body, resp.StatusCode, raw, tt.want)
			}
			if tt.want == 400 && !strings.Contains(string(raw), "max_completion_tokens") {
				t.Errorf("refusal %s does not name max_completion_tokens", raw)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || reqs[0].MaxTokens+reqs[0].MaxCompletionTokens != 1 {
				t.Errorf("recorded %+v, want one request with its cap", reqs)
			}
		})
	}
}
