package llmtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

func post(t *testing.T, ctx context.Context, url, body string) (*http.Response, []byte, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Test", "yes")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

const chatBody = `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}],"reasoning_content":"hmm"},{"role":"tool","tool_call_id":"c1","content":"ok"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"auto"}`

func TestQueueThenHandlerThenEmpty(t *testing.T) {
	s := llmtest.New(t)
	url := s.BaseURL() + "/chat/completions"
	s.Enqueue(llmtest.Text("first"), llmtest.Calls(llmtest.Call("c1", "f", `{"a":1}`)))

	_, b, err := post(t, context.Background(), url, chatBody)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Choices []struct {
			Message struct {
				Content   *string        `json:"content"`
				ToolCalls []llm.ToolCall `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(b, &got); err != nil || len(got.Choices) != 1 || got.Choices[0].Message.Content == nil || *got.Choices[0].Message.Content != "first" {
		t.Fatalf("first reply = %s (%v), want content first", b, err)
	}
	_, b, _ = post(t, context.Background(), url, chatBody)
	got.Choices = nil
	_ = json.Unmarshal(b, &got)
	if len(got.Choices) != 1 || got.Choices[0].FinishReason != "tool_calls" || got.Choices[0].Message.Content != nil || len(got.Choices[0].Message.ToolCalls) != 1 {
		t.Fatalf("second reply = %s, want one tool call, null content", b)
	}

	resp, b, _ := post(t, context.Background(), url, chatBody)
	if resp.StatusCode != 500 || !strings.Contains(string(b), "llmtest: no scripted reply") {
		t.Fatalf("empty queue = %d %s, want 500 no scripted reply", resp.StatusCode, b)
	}

	s.Handle(func(r llmtest.Request) llmtest.Reply { return llmtest.Text("echo " + r.Model) })
	_, b, _ = post(t, context.Background(), url, chatBody)
	if !strings.Contains(string(b), `"echo m"`) {
		t.Fatalf("handler reply = %s, want echo m", b)
	}

	reqs := s.Requests()
	if len(reqs) != 4 {
		t.Fatalf("Requests() = %d, want 4", len(reqs))
	}
	r := reqs[0]
	if r.Model != "m" || r.ToolChoice != "auto" || len(r.Tools) != 1 || len(r.Messages) != 3 || r.Header.Get("X-Test") != "yes" {
		t.Fatalf("Requests()[0] = %+v, want decoded model, tools, messages, headers", r)
	}
	if m := r.Messages[1]; m.Reasoning != "hmm" || m.Content != "" || m.ToolCalls[0].ID != "c1" {
		t.Fatalf("Requests()[0].Messages[1] = %+v, want reasoning hmm, tool call c1", m)
	}
}

func TestMisbehaviour(t *testing.T) {
	s := llmtest.New(t)
	url := s.BaseURL() + "/chat/completions"

	t.Run("rate limited", func(t *testing.T) {
		s.Enqueue(llmtest.RateLimited(7*time.Second, "slow down"))
		resp, b, err := post(t, context.Background(), url, chatBody)
		if err != nil || resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" || !strings.Contains(string(b), "slow down") {
			t.Fatalf("RateLimited = %v %v %s, want 429 Retry-After 7", resp, err, b)
		}
	})
	t.Run("dropped", func(t *testing.T) {
		s.Enqueue(llmtest.Dropped())
		_, _, err := post(t, context.Background(), url, chatBody)
		if err == nil {
			t.Fatal("Dropped: err = nil, want a transport error")
		}
	})
	t.Run("truncated", func(t *testing.T) {
		s.Enqueue(llmtest.Truncated(`{"choices":[{"message":{"role":"assistant","content":"hello"}}]}`))
		_, _, err := post(t, context.Background(), url, chatBody)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("Truncated: err = %v, want unexpected EOF", err)
		}
	})
	t.Run("delay ends with the client", func(t *testing.T) {
		s.Enqueue(llmtest.Text("late").After(time.Hour))
		ctx, cancel := context.WithCancel(context.Background())
		s.Handle(nil)
		done := make(chan error, 1)
		go func() { _, _, err := post(t, ctx, url, chatBody); done <- err }()
		for s.Pending() != 0 { // wait until the server has taken the delayed reply
			runtime.Gosched()
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("delayed reply after cancel: err = %v, want context.Canceled", err)
		}
	})
	t.Run("wrong path", func(t *testing.T) {
		resp, _, err := post(t, context.Background(), s.URL()+"/v1/messages", chatBody)
		if err != nil || resp.StatusCode != 404 {
			t.Fatalf("POST /v1/messages = %v %v, want 404", resp, err)
		}
	})
}

// TestStreamsRecordTimes: a streamed answer's first content and its end
// are recorded, in that order, with the request's model.
func TestStreamsRecordTimes(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.Text("Hello there, streamed.").Streamed(4, time.Millisecond))
	before := time.Now()
	resp, _, err := post(t, context.Background(), srv.BaseURL()+"/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("stream = %v, %v", resp, err)
	}
	got := srv.Streams()
	if len(got) != 1 {
		t.Fatalf("Streams() = %+v, want one", got)
	}
	s := got[0]
	if s.Model != "m" || s.FirstContent.Before(before) || !s.FirstContent.Before(s.Done) {
		t.Errorf("Streams()[0] = %+v, want model m, first content after the request and before the end", s)
	}
}
