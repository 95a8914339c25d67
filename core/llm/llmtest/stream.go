package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/neobot/neobot/core/llm"
)

// streamChunk is one chat.completion.chunk.
type streamChunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []streamDelta `json:"choices"`
	Usage   *llm.Usage    `json:"usage,omitempty"`
}

type streamDelta struct {
	Index        int            `json:"index"`
	Delta        map[string]any `json:"delta"`
	FinishReason *string        `json:"finish_reason"`
}

// stream writes reply as Server-Sent Events.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, reply Reply, model string) {
	if reply.Delay > 0 && !s.sleep(r, reply.Delay) {
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "llmtest: cannot stream", "server_error")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	send := func(choices []streamDelta, usage *llm.Usage) {
		if choices == nil {
			choices = []streamDelta{}
		}
		b, _ := json.Marshal(streamChunk{ID: "chatcmpl-llmtest", Object: "chat.completion.chunk", Created: 1767225600, Model: "llmtest", Choices: choices, Usage: usage})
		fmt.Fprintf(w, "data: %s\n\n", b)
		fl.Flush()
	}
	delta := func(d map[string]any) []streamDelta { return []streamDelta{{Delta: d}} }

	m := reply.Message
	s.mu.Lock()
	s.streams = append(s.streams, Stream{Model: model})
	idx := len(s.streams) - 1
	s.mu.Unlock()
	mark := func(set func(*Stream)) {
		s.mu.Lock()
		set(&s.streams[idx])
		s.mu.Unlock()
	}
	send(delta(map[string]any{"role": llm.RoleAssistant, "content": ""}), nil)
	for _, piece := range pieces(m.Reasoning, reply.Chunk) {
		send(delta(map[string]any{"reasoning_content": piece}), nil)
	}
	for i, piece := range pieces(m.Content, reply.Chunk) {
		if i > 0 && reply.Pace > 0 && !s.sleep(r, reply.Pace) {
			return
		}
		if reply.BreakAfter > 0 && i == reply.BreakAfter {
			panic(http.ErrAbortHandler) // the connection ends mid-stream
		}
		send(delta(map[string]any{"content": piece}), nil)
		if i == 0 {
			now := time.Now()
			mark(func(st *Stream) { st.FirstContent = now })
		}
	}
	for i, tc := range m.ToolCalls {
		half := len(tc.Function.Arguments) / 2
		send(delta(map[string]any{"tool_calls": []map[string]any{{"index": i, "id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Function.Name, "arguments": tc.Function.Arguments[:half]}}}}), nil)
		send(delta(map[string]any{"tool_calls": []map[string]any{{"index": i,
			"function": map[string]any{"arguments": tc.Function.Arguments[half:]}}}}), nil)
	}
	finish := reply.FinishReason
	if finish == "" {
		finish = llm.FinishStop
		if len(m.ToolCalls) > 0 {
			finish = llm.FinishToolCalls
		}
	}
	send([]streamDelta{{Delta: map[string]any{}, FinishReason: &finish}}, nil)
	usage := reply.Usage
	if usage.TotalTokens == 0 {
		usage.TotalTokens = usage.PromptTokens + usage.CompletionTokens
	}
	send(nil, &usage)
	fmt.Fprint(w, "data: [DONE]\n\n")
	fl.Flush()
	now := time.Now()
	mark(func(st *Stream) { st.Done = now })
}

// sleep waits d, or less when the client goes away or the server closes;
// it reports whether the whole wait passed.
func (s *Server) sleep(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-s.closed:
	}
	return false
}

// pieces cuts text into runs of n runes (default 4).
func pieces(text string, n int) []string {
	if n <= 0 {
		n = 4
	}
	var out []string
	rs := []rune(text)
	for len(rs) > 0 {
		k := min(n, len(rs))
		out = append(out, string(rs[:k]))
		rs = rs[k:]
	}
	return out
}
