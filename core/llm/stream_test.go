package llm_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// pieces collects what ChatStream shows.
type pieces struct {
	mu  sync.Mutex
	got []string
}

func (p *pieces) add(s string) { p.mu.Lock(); p.got = append(p.got, s); p.mu.Unlock() }

func (p *pieces) text() string { p.mu.Lock(); defer p.mu.Unlock(); return strings.Join(p.got, "") }

func (p *pieces) n() int { p.mu.Lock(); defer p.mu.Unlock(); return len(p.got) }

// warm teaches c that its model does not open reasoning in the prompt, the
// way a first answer does.
func warm(t *testing.T, c *llm.Client, srv *llmtest.Server) {
	t.Helper()
	srv.Enqueue(llmtest.Text("Warm.").Streamed(2, 0))
	if _, err := c.ChatStream(context.Background(), ask("hi"), func(string) {}); err != nil {
		t.Fatal(err)
	}
	if got := c.Posture(); got != llm.PostureTagged {
		t.Fatalf("after a plain answer Posture() = %q, want %q", got, llm.PostureTagged)
	}
}

func TestChatStream(t *testing.T) {
	tests := []struct {
		name     string
		reply    llmtest.Reply
		shown    string // what onText received, joined
		content  string // the result's content
		pieces   int    // at least this many pieces
		noSecret bool
	}{
		{name: "plain text in pieces", reply: llmtest.Text("Hello, world! This is streamed.").Streamed(3, 0),
			shown: "Hello, world! This is streamed.", content: "Hello, world! This is streamed.", pieces: 5},
		{name: "reasoning field never shown", reply: llmtest.Thinking("secret plan", "The answer is 42.").Streamed(3, 0),
			shown: "The answer is 42.", content: "The answer is 42.", noSecret: true},
		{name: "think tag split over chunks", reply: llmtest.Text("<think>secret plan</think>The answer is 42.").Streamed(3, 0),
			shown: "The answer is 42.", content: "The answer is 42.", noSecret: true},
		{name: "thinking tag mid-answer", reply: llmtest.Text("First. <THINKING>secret</thinking>Second.").Streamed(2, 0),
			shown: "First. Second.", content: "First. Second.", noSecret: true},
		{name: "unterminated tag", reply: llmtest.Text("Sure. <think>secret never closed").Streamed(4, 0),
			shown: "Sure.", content: "Sure.", noSecret: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t)
			c := newClient(t, srv, nil)
			warm(t, c, srv)
			srv.Enqueue(tt.reply)
			var p pieces
			res, err := c.ChatStream(context.Background(), ask("hi"), p.add)
			if err != nil {
				t.Fatalf("ChatStream = %v", err)
			}
			if got := p.text(); got != tt.shown {
				t.Errorf("shown %q, want %q (pieces %q)", got, tt.shown, p.got)
			}
			if res.Message.Content != tt.content {
				t.Errorf("content = %q, want %q", res.Message.Content, tt.content)
			}
			if p.n() < tt.pieces {
				t.Errorf("shown in %d pieces, want at least %d", p.n(), tt.pieces)
			}
			if tt.noSecret && (strings.Contains(p.text(), "secret") || strings.Contains(p.text(), "<")) {
				t.Errorf("reasoning reached the user: %q", p.got)
			}
			if last := srv.Requests()[len(srv.Requests())-1]; !last.Stream {
				t.Errorf("the request did not ask for a stream")
			}
		})
	}
}

// TestChatStreamCloserFirstModel: a model whose chat template opens the
// reasoning block shows nothing before its first closing tag, from its
// very first answer on, when it is declared or its family is known.
func TestChatStreamCloserFirstModel(t *testing.T) {
	for _, tc := range []struct {
		name  string
		model string
		set   llm.Posture
	}{
		{"declared", "accounts/fireworks/models/qwen3-235b-a22b", llm.PostureOpened},
		{"known family", "accounts/fireworks/models/deepseek-r1-0528", llm.PostureAuto},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t)
			c := newClient(t, srv, func(cfg *llm.Config) { cfg.Model, cfg.Posture = tc.model, tc.set })
			srv.Enqueue(llmtest.Text("the prompt opened my reasoning</think>First answer.").Streamed(4, 0),
				llmtest.Text("more secret reasoning here</think>Second answer.").Streamed(4, 0))
			for i, want := range []string{"First answer.", "Second answer."} {
				var p pieces
				res, err := c.ChatStream(context.Background(), ask("hi"), p.add)
				if err != nil {
					t.Fatal(err)
				}
				if p.text() != want || strings.Contains(p.text(), "reasoning") {
					t.Errorf("answer %d showed %q, want %q", i+1, p.text(), want)
				}
				if strings.Contains(res.Message.Content, "reasoning") {
					t.Errorf("answer %d content = %q, reasoning kept", i+1, res.Message.Content)
				}
			}
		})
	}
}

// TestChatStreamFirstAnswer: a client that knows nothing of its model
// yet streams its first answer as soon as the first words show whether
// it opens with a reasoning tag, never showing the tag's block.
func TestChatStreamFirstAnswer(t *testing.T) {
	for _, tc := range []struct {
		name, reply, shown string
		pieces             int
		learned            llm.Posture
	}{
		{"plain", "  Hello, world! This answer is streamed from its first words.", "Hello, world! This answer is streamed from its first words.", 4, llm.PostureTagged},
		{"opens with a tag", "<think>secret plan, never shown</think>The answer is 42, shown while written.", "The answer is 42, shown while written.", 2, llm.PostureTagged},
		{"template opened an empty block", "</think>The answer is 42, shown while written.", "The answer is 42, shown while written.", 2, llm.PostureOpened},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t)
			c := newClient(t, srv, nil)
			srv.Enqueue(llmtest.Text(tc.reply).Streamed(2, 0))
			var p pieces
			res, err := c.ChatStream(context.Background(), ask("hi"), func(s string) {
				// Shown while the stream is still being read: the answer
				// is not yet whole.
				p.add(s)
			})
			if err != nil {
				t.Fatal(err)
			}
			if p.text() != tc.shown || strings.Contains(p.text(), "secret") {
				t.Errorf("first answer showed %q, want %q", p.text(), tc.shown)
			}
			if p.n() < tc.pieces {
				t.Errorf("first answer shown in %d pieces (%q), want at least %d: it waited for the end", p.n(), p.got, tc.pieces)
			}
			if strings.TrimSpace(res.Message.Content) != tc.shown {
				t.Errorf("content = %q, want %q", res.Message.Content, tc.shown)
			}
			if got := c.Posture(); got != tc.learned {
				t.Errorf("Posture() = %q, want %q", got, tc.learned)
			}
		})
	}
}

func TestChatStreamToolCallsAndUsage(t *testing.T) {
	srv := llmtest.New(t)
	c := newClient(t, srv, nil)
	r := llmtest.Calls(llmtest.Call("c1", "fs__read_file", `{"path":"notes/a.md"}`), llmtest.Call("c2", "fs__list", `{}`))
	r.Usage = llm.Usage{PromptTokens: 90, CompletionTokens: 12}
	srv.Enqueue(r)
	res, err := c.ChatStream(context.Background(), ask("hi"), func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	calls := res.Message.ToolCalls
	if len(calls) != 2 || calls[0].ID != "c1" || calls[0].Function.Name != "fs__read_file" || calls[0].Function.Arguments != `{"path":"notes/a.md"}` ||
		calls[1].Function.Name != "fs__list" || res.FinishReason != llm.FinishToolCalls {
		t.Errorf("assembled %+v (%s), want both calls whole", calls, res.FinishReason)
	}
	if res.Usage.PromptTokens != 90 || res.Usage.CompletionTokens != 12 {
		t.Errorf("usage = %+v, want the last chunk's", res.Usage)
	}
}

func TestChatStreamBrokenIsTransient(t *testing.T) {
	srv := llmtest.New(t)
	c := newClient(t, srv, nil)
	r := llmtest.Text("This answer will never finish, sadly.").Streamed(3, 0)
	r.BreakAfter = 3
	srv.Enqueue(r)
	_, err := c.ChatStream(context.Background(), ask("hi"), func(string) {})
	if err == nil || !llm.IsTransient(err) {
		t.Fatalf("a broken stream = %v, want a transient error for the ladder", err)
	}
}

func TestChatStreamRefusedFallsBack(t *testing.T) {
	srv := llmtest.New(t)
	srv.RefuseStreaming()
	c := newClient(t, srv, nil)
	srv.Enqueue(llmtest.Text("Whole."), llmtest.Text("Whole again."))
	for _, want := range []string{"Whole.", "Whole again."} {
		res, err := c.ChatStream(context.Background(), ask("hi"), func(string) {})
		if err != nil || res.Message.Content != want {
			t.Fatalf("ChatStream on a provider without streams = %v, %v; want %q", res, err, want)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || !reqs[0].Stream || reqs[1].Stream || reqs[2].Stream {
		t.Errorf("requests streamed %v, want one refused stream, then plain requests only", []bool{reqs[0].Stream, reqs[1].Stream, reqs[len(reqs)-1].Stream})
	}
}
