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
// way a first answer does; until then nothing streams.
func warm(t *testing.T, c *llm.Client, srv *llmtest.Server) {
	t.Helper()
	srv.Enqueue(llmtest.Text("Warm.").Streamed(2, 0))
	var p pieces
	if _, err := c.ChatStream(context.Background(), ask("hi"), p.add); err != nil {
		t.Fatal(err)
	}
	if p.n() != 0 {
		t.Fatalf("the first answer streamed %q before the client knew the model", p.got)
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

func TestChatStreamCloserFirstModel(t *testing.T) {
	srv := llmtest.New(t)
	c := newClient(t, srv, nil)
	srv.Enqueue(llmtest.Text("the prompt opened my reasoning</think>First answer.").Streamed(4, 0),
		llmtest.Text("more secret reasoning here</think>Second answer.").Streamed(4, 0))
	for i, want := range []string{"", "Second answer."} {
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
