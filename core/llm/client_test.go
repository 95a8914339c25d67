package llm_test

import (
	"context"
	"errors"
	"flag"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newClient points a Fireworks-flavoured client at srv; edit adjusts the
// config first.
func newClient(t testing.TB, srv *llmtest.Server, edit func(*llm.Config)) *llm.Client {
	t.Helper()
	cfg := llm.Config{
		Model:    "accounts/fireworks/models/qwen3-235b-a22b",
		Provider: "fireworks",
		BaseURL:  srv.BaseURL(),
		APIKey:   "test-key",
		Env:      func(string) string { return "" },
	}
	if edit != nil {
		edit(&cfg)
	}
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatalf("New(%s) = %v", cfg.Model, err)
	}
	return c
}

func ask(text string) llm.ChatRequest {
	return llm.ChatRequest{Messages: []llm.Message{llm.SystemMessage("be brief"), llm.UserMessage(text)}}
}

func TestChatDecodesProviderResponses(t *testing.T) {
	tests := []struct {
		fixture   string
		content   string
		reasoning string
		finish    string
		calls     []llm.ToolCall
		usage     llm.Usage
	}{
		{
			fixture:   "fireworks_reasoning_content.json",
			content:   "PAX is trading around $0.42.",
			reasoning: "The user asks for the PAX price. The tool said 0.42, so I answer with that.",
			finish:    llm.FinishStop,
			usage:     llm.Usage{PromptTokens: 812, CompletionTokens: 49, TotalTokens: 861},
		},
		{
			fixture:   "together_inline_think.json",
			content:   "Hello! How can I help?",
			reasoning: "The user wants a greeting. Keep it short.",
			finish:    llm.FinishStop,
			usage:     llm.Usage{PromptTokens: 9, CompletionTokens: 21, TotalTokens: 30},
		},
		{
			fixture:   "inline_think_blocks.json",
			content:   "Your balance is 12 PAX. Fees are 0.1 PAX.",
			reasoning: "First, check the balance.\n\nAlso mention fees.",
			finish:    llm.FinishStop,
			usage:     llm.Usage{PromptTokens: 40, CompletionTokens: 30, TotalTokens: 70},
		},
		{
			fixture:   "unterminated_think_length.json",
			content:   "Sure.",
			reasoning: "Let me work through the fee schedule step by step. First tier is",
			finish:    llm.FinishLength,
			usage:     llm.Usage{PromptTokens: 120, CompletionTokens: 256, TotalTokens: 376},
		},
		{
			fixture: "openai_parallel_tool_calls.json",
			finish:  llm.FinishToolCalls,
			calls: []llm.ToolCall{
				llmtest.Call("call_Kf3wa9s0PzQ1", "paxeer__price", `{"symbol":"PAX"}`),
				llmtest.Call("call_Lm7tB2c8RyW4", "fs__read_file", `{"path":"/tmp/notes.md"}`),
			},
			usage: llm.Usage{PromptTokens: 82, CompletionTokens: 51, TotalTokens: 133},
		},
		{
			fixture:   "openrouter_reasoning_bad_args.json",
			reasoning: "I should read the file before answering.",
			finish:    llm.FinishToolCalls,
			calls:     []llm.ToolCall{llmtest.Call("functions.fs__read_file:0", "fs__read_file", `{"path": "/tmp/a`)},
			usage:     llm.Usage{PromptTokens: 300, CompletionTokens: 40, TotalTokens: 340},
		},
	}
	srv := llmtest.New(t)
	c := newClient(t, srv, nil)
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			srv.Enqueue(llmtest.Raw(http.StatusOK, fixture(t, tt.fixture)))
			res, err := c.Chat(context.Background(), ask("hi"))
			if err != nil {
				t.Fatalf("Chat() error = %v", err)
			}
			m := res.Message
			if m.Role != llm.RoleAssistant || m.Content != tt.content {
				t.Errorf("Chat().Message.Content = %q (role %q), want %q", m.Content, m.Role, tt.content)
			}
			if m.Reasoning != tt.reasoning {
				t.Errorf("Chat().Message.Reasoning = %q, want %q", m.Reasoning, tt.reasoning)
			}
			if strings.Contains(m.Content, "<think") || (tt.reasoning != "" && strings.Contains(m.Content, tt.reasoning)) {
				t.Errorf("Chat().Message.Content = %q leaks reasoning", m.Content)
			}
			if res.FinishReason != tt.finish {
				t.Errorf("Chat().FinishReason = %q, want %q", res.FinishReason, tt.finish)
			}
			if res.Usage != tt.usage {
				t.Errorf("Chat().Usage = %+v, want %+v", res.Usage, tt.usage)
			}
			if len(m.ToolCalls) != len(tt.calls) {
				t.Fatalf("Chat() tool calls = %+v, want %+v", m.ToolCalls, tt.calls)
			}
			for i := range tt.calls {
				if m.ToolCalls[i] != tt.calls[i] {
					t.Errorf("Chat() tool call %d = %+v, want %+v", i, m.ToolCalls[i], tt.calls[i])
				}
			}
		})
	}
}

func TestParseArgsReportsInvalidJSON(t *testing.T) {
	srv := llmtest.New(t)
	c := newClient(t, srv, nil)
	srv.Enqueue(llmtest.Raw(http.StatusOK, fixture(t, "openrouter_reasoning_bad_args.json")))
	res, err := c.Chat(context.Background(), ask("read it"))
	if err != nil {
		t.Fatal(err)
	}
	args, err := res.Message.ToolCalls[0].Function.ParseArgs()
	if err == nil {
		t.Fatalf("ParseArgs(truncated JSON) = %v, nil; want an error, never {}", args)
	}
}

func TestChatBuildsRequest(t *testing.T) {
	srv := llmtest.New(t)
	yes := true
	c := newClient(t, srv, func(cfg *llm.Config) {
		cfg.Temperature = 0.4
		cfg.MaxTokens = 4096
		cfg.Seed = 7
		cfg.EchoReasoning = &yes
	})
	price := llm.NewFunctionTool("paxeer__price", "Current price of a token", map[string]any{
		"type":       "object",
		"properties": map[string]any{"symbol": map[string]any{"type": "string"}},
		"required":   []string{"symbol"},
	})
	call := llmtest.Call("call_1", "paxeer__price", `{"symbol":"PAX"}`)
	req := llm.ChatRequest{
		Messages: []llm.Message{
			llm.SystemMessage("be brief"),
			llm.UserMessage("what is the PAX price"),
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}, Reasoning: "need the price tool"},
			llm.ToolResult("call_1", "paxeer__price", `{"pax":"0.42"}`),
			{Role: llm.RoleAssistant, Content: "earlier answer", Reasoning: "never echoed: no tool calls"},
			llm.UserMessage("and now?"),
		},
		Tools: []llm.Tool{price},
	}
	srv.Enqueue(llmtest.Text("PAX is 0.42"))
	if _, err := c.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()[0]
	if got.Header.Get("Authorization") != "Bearer test-key" {
		t.Errorf("Authorization = %q, want Bearer test-key", got.Header.Get("Authorization"))
	}
	if got.Model != "accounts/fireworks/models/qwen3-235b-a22b" || got.ToolChoice != "auto" || len(got.Tools) != 1 {
		t.Errorf("request model/tool_choice/tools = %q %q %d, want model, auto, 1 tool", got.Model, got.ToolChoice, len(got.Tools))
	}
	golden(t, "request_golden.json", indent(t, got.Body))
}

func TestReasoningNotEchoedByDefault(t *testing.T) {
	srv := llmtest.New(t)
	c := newClient(t, srv, nil)
	srv.Enqueue(llmtest.Text("ok"))
	req := ask("x")
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{llmtest.Call("c1", "f", "{}")}, Reasoning: "secret monologue"},
		llm.ToolResult("c1", "f", "done"))
	if _, err := c.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	body := string(srv.Requests()[0].Body)
	if strings.Contains(body, "secret monologue") || strings.Contains(body, "reasoning") {
		t.Errorf("request body = %s, want no reasoning on the wire", body)
	}
	if strings.Contains(body, "tool_choice") || strings.Contains(body, "temperature") || strings.Contains(body, "seed") || strings.Contains(body, "max_tokens") {
		t.Errorf("request body = %s, want unset options omitted", body)
	}
}

func TestToolChoice(t *testing.T) {
	tool := llm.NewFunctionTool("f", "", nil)
	tests := []struct {
		choice string
		tools  []llm.Tool
		want   string
	}{
		{"", []llm.Tool{tool}, "auto"},
		{"none", []llm.Tool{tool}, "none"},
		{"required", []llm.Tool{tool}, "required"},
		{"f", []llm.Tool{tool}, `{"type":"function","function":{"name":"f"}}`},
		{"", nil, ""},
	}
	srv := llmtest.New(t)
	srv.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Text("ok") })
	c := newClient(t, srv, nil)
	for _, tt := range tests {
		t.Run(tt.choice, func(t *testing.T) {
			req := ask("x")
			req.Tools, req.ToolChoice = tt.tools, tt.choice
			if _, err := c.Chat(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if got := reqs[len(reqs)-1].ToolChoice; got != tt.want {
				t.Errorf("tool_choice for %q = %s, want %s", tt.choice, got, tt.want)
			}
		})
	}
	if _, err := c.Chat(context.Background(), llm.ChatRequest{Messages: ask("x").Messages, ToolChoice: "required"}); err == nil {
		t.Error(`Chat(ToolChoice "required", no tools) = nil error, want one`)
	}
}

func TestGatewayMetering(t *testing.T) {
	srv := llmtest.New(t)
	tests := []struct {
		name     string
		slot     string
		wantSlot string
	}{
		{"default slot", "", "neo"},
		{"named slot", "neo-cheap", "neo-cheap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := llm.New(llm.Config{
				Model:      "accounts/fireworks/models/qwen3-235b-a22b",
				GatewayURL: srv.URL(),
				ActorDID:   "did:matrix:neo",
				IntentID:   "intent-42",
				SlotLabel:  tt.slot,
				Env:        envMap{"MATRIX_GATEWAY_TOKEN": "gw-token"}.get,
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := srv.URL() + "/v1/chat/completions"; c.Endpoint() != want {
				t.Errorf("Endpoint() = %q, want %q", c.Endpoint(), want)
			}
			srv.Enqueue(llmtest.Text("metered"))
			if _, err := c.Chat(context.Background(), ask("hi")); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			h := reqs[len(reqs)-1].Header
			for k, want := range map[string]string{
				"Authorization":      "Bearer gw-token",
				"X-Matrix-Actor-Did": "did:matrix:neo",
				"X-Matrix-Intent-Id": "intent-42",
				"X-Matrix-Slot":      tt.wantSlot,
			} {
				if got := h.Get(k); got != want {
					t.Errorf("header %s = %q, want %q", k, got, want)
				}
			}
		})
	}
}

type envMap map[string]string

func (m envMap) get(k string) string { return m[k] }

func TestChatErrors(t *testing.T) {
	date := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		reply      llmtest.Reply
		wantText   string // substring of err.Error()
		status     int
		typ        string
		transient  bool
		retryAfter time.Duration
		bad        bool // errors.Is(err, llm.ErrBadResponse)
	}{
		{
			name: "429 structured with Retry-After seconds",
			reply: func() llmtest.Reply {
				r := llmtest.Raw(429, fixture(t, "fireworks_429.json"))
				r.Header.Set("Retry-After", "7")
				return r
			}(),
			wantText:   "llm: fireworks http 429: Rate limit exceeded (type=rate_limit)",
			status:     429,
			typ:        "rate_limit",
			transient:  true,
			retryAfter: 7 * time.Second,
		},
		{
			name: "429 with Retry-After HTTP date",
			reply: func() llmtest.Reply {
				r := llmtest.RateLimited(0, "slow down")
				r.Header.Set("Date", date.Format(http.TimeFormat))
				r.Header.Set("Retry-After", date.Add(90*time.Second).Format(http.TimeFormat))
				return r
			}(),
			wantText:   "llm: fireworks http 429: slow down (type=rate_limit)",
			status:     429,
			typ:        "rate_limit",
			transient:  true,
			retryAfter: 90 * time.Second,
		},
		{
			name:      "502 HTML from a proxy",
			reply:     llmtest.HTML(502, fixture(t, "cloudflare_502.html")),
			wantText:  "llm: fireworks http 502: api.together.xyz | 502: Bad gateway (HTML page,",
			status:    502,
			transient: true,
		},
		{
			name:      "500 HTML without a title",
			reply:     llmtest.HTML(500, fixture(t, "nginx_500.html")),
			wantText:  "llm: fireworks http 500: 500 Internal Server Error nginx/1.25.3 (HTML page,",
			status:    500,
			transient: true,
		},
		{
			name:     "400 invalid request is permanent",
			reply:    llmtest.Error(400, "invalid_request_error", "thinking is enabled but reasoning_content is missing in assistant tool call message at index 3"),
			wantText: "llm: fireworks http 400: thinking is enabled but reasoning_content is missing in assistant tool call message at index 3 (type=invalid_request_error)",
			status:   400,
			typ:      "invalid_request_error",
		},
		{
			name:     "401 vLLM style body",
			reply:    llmtest.Raw(401, `{"object":"error","message":"Invalid API key","type":"AuthenticationError","param":null,"code":401}`),
			wantText: "llm: fireworks http 401: Invalid API key (type=AuthenticationError)",
			status:   401,
			typ:      "AuthenticationError",
		},
		{
			name:      "503 empty body",
			reply:     llmtest.Raw(503, ""),
			wantText:  "llm: fireworks http 503: Service Unavailable",
			status:    503,
			transient: true,
		},
		{
			name:      "error object in a 200",
			reply:     llmtest.Raw(200, `{"error":{"message":"Upstream overloaded","code":529}}`),
			wantText:  "llm: fireworks http 529: Upstream overloaded",
			status:    529,
			transient: true,
		},
		{name: "empty choices", reply: llmtest.Raw(200, `{"id":"x","object":"chat.completion","choices":[]}`), wantText: "llm: fireworks: unusable response: no choices", bad: true},
		{name: "non-JSON 200", reply: llmtest.Malformed("upstream connect error or disconnect/reset before headers"), wantText: "llm: fireworks: unusable response: invalid JSON", bad: true},
		{name: "HTML 200", reply: llmtest.Malformed("<html><title>Just a moment...</title></html>"), wantText: "llm: fireworks: unusable response: HTML instead of JSON: Just a moment...", bad: true},
		{name: "truncated JSON", reply: llmtest.Malformed(`{"choices":[{"message":{"role":"assistant","content":"hel`), wantText: "llm: fireworks: unusable response: truncated JSON", bad: true},
		{name: "connection cut mid-body", reply: llmtest.Truncated(fixture(t, "fireworks_reasoning_content.json")), wantText: "llm: fireworks: read response", transient: true},
		{name: "dropped connection", reply: llmtest.Dropped(), wantText: "llm: fireworks: request failed", transient: true},
	}
	srv := llmtest.New(t)
	c := newClient(t, srv, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.Enqueue(tt.reply)
			res, err := c.Chat(context.Background(), ask("hi"))
			if err == nil {
				t.Fatalf("Chat() = %+v, nil; want an error", res)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("Chat() error = %q, want it to contain %q", err, tt.wantText)
			}
			if len(err.Error()) > 400 {
				t.Errorf("Chat() error is %d bytes long, want a brief summary: %q", len(err.Error()), err)
			}
			if got := llm.IsTransient(err); got != tt.transient {
				t.Errorf("IsTransient(%v) = %v, want %v", err, got, tt.transient)
			}
			wait, ok := llm.RetryAfter(err)
			if wait != tt.retryAfter || ok != (tt.retryAfter > 0) {
				t.Errorf("RetryAfter(%v) = %v, %v; want %v", err, wait, ok, tt.retryAfter)
			}
			if got := errors.Is(err, llm.ErrBadResponse); got != tt.bad {
				t.Errorf("errors.Is(%v, ErrBadResponse) = %v, want %v", err, got, tt.bad)
			}
			var e *llm.Error
			if errors.As(err, &e) != (tt.status != 0) {
				t.Fatalf("errors.As(%v, *Error) = %v, want %v", err, !(tt.status != 0), tt.status != 0)
			}
			if e != nil && (e.Status != tt.status || e.Type != tt.typ || e.Provider != "fireworks") {
				t.Errorf("*Error = %+v, want status %d type %q provider fireworks", e, tt.status, tt.typ)
			}
		})
	}
}

func TestChatTimeout(t *testing.T) {
	srv := llmtest.New(t)
	c := newClient(t, srv, func(cfg *llm.Config) { cfg.Timeout = time.Millisecond })
	srv.Enqueue(llmtest.Text("too late").After(time.Hour))
	_, err := c.Chat(context.Background(), ask("hi"))
	if !errors.Is(err, context.DeadlineExceeded) || !llm.IsTransient(err) {
		t.Fatalf("Chat() past its timeout = %v, want a transient deadline error", err)
	}
}

func TestChatCancelledIsNotTransient(t *testing.T) {
	srv := llmtest.New(t)
	c := newClient(t, srv, nil)
	ctx, cancel := context.WithCancel(context.Background())
	srv.Handle(func(llmtest.Request) llmtest.Reply {
		cancel()
		return llmtest.Text("ignored").After(time.Hour)
	})
	_, err := c.Chat(ctx, ask("hi"))
	if !errors.Is(err, context.Canceled) || llm.IsTransient(err) {
		t.Fatalf("Chat(cancelled) = %v, want context.Canceled and not transient", err)
	}
}

func TestOpenCodeModelPrefixStripped(t *testing.T) {
	srv := llmtest.New(t)
	c := newClient(t, srv, func(cfg *llm.Config) { cfg.Model, cfg.Provider = "opencode/kimi-k2", "opencode" })
	srv.Enqueue(llmtest.Text("ok"))
	if _, err := c.Chat(context.Background(), ask("hi")); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].Model; got != "kimi-k2" {
		t.Errorf("wire model for opencode/kimi-k2 = %q, want kimi-k2", got)
	}
	if c.Model() != "opencode/kimi-k2" {
		t.Errorf("Model() = %q, want opencode/kimi-k2", c.Model())
	}
}

// TestUnreachableSaysDNS: a base URL whose host does not resolve is
// reported as such, naming the endpoint actually called and the setting
// to fix; a refused connection is not called a DNS failure.
func TestUnreachableSaysDNS(t *testing.T) {
	for _, tc := range []struct {
		name string
		dial error
		want string
	}{
		{"dns", &net.DNSError{Err: "no such host", Name: "llm.nowhere.example", IsNotFound: true}, `its host name "llm.nowhere.example" does not resolve (DNS)`},
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, "is its server running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hc := &http.Client{Transport: &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) { return nil, tc.dial }}}
			c, err := llm.New(llm.Config{Provider: "openai-compatible", BaseURL: "http://llm.nowhere.example:11434/v1", Model: "m", HTTPClient: hc, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Chat(context.Background(), llm.ChatRequest{Messages: []llm.Message{llm.UserMessage("hi")}})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "http://llm.nowhere.example:11434/v1") || !strings.Contains(err.Error(), "NEO_LLM_BASE_URL") {
				t.Errorf("Chat = %v, want %q, the endpoint and NEO_LLM_BASE_URL", err, tc.want)
			}
			if tc.name == "refused" && strings.Contains(err.Error(), "DNS") {
				t.Errorf("a refused connection called a DNS failure: %v", err)
			}
		})
	}
}
