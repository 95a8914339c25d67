package llmtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/neobot/neobot/core/llm"
)

// Reply scripts one response.
//
// With Body set, Status (default 200), Header and Body are sent verbatim.
// Otherwise a 2xx reply gets a chat-completions JSON body built from
// Message, FinishReason and Usage (Message.Reasoning travels as
// "reasoning_content", the way reasoning providers send it), and any other
// status an empty body.
//
// Delay holds the response back (the wait ends early when the client goes
// away or the server closes). Drop closes the connection instead of
// answering; with Body also set, the headers promise the whole body but only
// half of it is written before the connection is closed, a truncated read.
type Reply struct {
	Status       int
	Header       http.Header
	Body         string
	Message      llm.Message
	FinishReason string
	Usage        llm.Usage
	Delay        time.Duration
	Drop         bool

	// A streamed request (stream: true) gets the reply as Server-Sent
	// Events: the reasoning, then the content in pieces of Chunk runes
	// (default 4), Pace apart, then the tool calls, the finish reason and
	// the usage. With BreakAfter > 0 the connection is cut after that many
	// content pieces, a stream broken midway.
	Chunk      int
	Pace       time.Duration
	BreakAfter int
}

// Text is an assistant answer with finish reason "stop".
func Text(content string) Reply {
	return Reply{Message: llm.AssistantMessage(content), FinishReason: llm.FinishStop}
}

// Thinking is an answer that carries its reasoning in "reasoning_content".
func Thinking(reasoning, content string) Reply {
	r := Text(content)
	r.Message.Reasoning = reasoning
	return r
}

// Calls is an assistant turn requesting calls, finish reason "tool_calls".
func Calls(calls ...llm.ToolCall) Reply {
	return Reply{
		Message:      llm.Message{Role: llm.RoleAssistant, ToolCalls: calls},
		FinishReason: llm.FinishToolCalls,
	}
}

// Call is a function tool call with JSON-encoded arguments.
func Call(id, name, argsJSON string) llm.ToolCall {
	return llm.ToolCall{ID: id, Type: "function", Function: llm.FunctionCall{Name: name, Arguments: argsJSON}}
}

// Raw sends body verbatim with the given status, as application/json.
func Raw(status int, body string) Reply {
	return Reply{Status: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: body}
}

// Error is an HTTP error with an OpenAI-style structured body
// {"error":{"message":...,"type":...}}.
func Error(status int, errType, message string) Reply {
	body, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": message, "type": errType, "param": nil, "code": nil,
	}})
	return Raw(status, string(body))
}

// RateLimited is a 429 with a structured body and Retry-After in seconds.
func RateLimited(retryAfter time.Duration, message string) Reply {
	r := Error(http.StatusTooManyRequests, "rate_limit", message)
	r.Header.Set("Retry-After", strconv.Itoa(int(retryAfter/time.Second)))
	return r
}

// HTML sends an HTML page with status, the way a proxy in front of a
// provider fails.
func HTML(status int, page string) Reply {
	return Reply{Status: status, Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}}, Body: page}
}

// Malformed sends a 200 whose body is not valid JSON.
func Malformed(body string) Reply { return Raw(http.StatusOK, body) }

// Dropped closes the connection without answering.
func Dropped() Reply { return Reply{Drop: true} }

// Truncated promises body in full but closes the connection halfway through
// it.
func Truncated(body string) Reply {
	r := Raw(http.StatusOK, body)
	r.Drop = true
	return r
}

// Streamed returns r sent in pieces of chunk runes, pace apart, when the
// request asks for a stream.
func (r Reply) Streamed(chunk int, pace time.Duration) Reply {
	r.Chunk, r.Pace = chunk, pace
	return r
}

// After returns r delayed by d.
func (r Reply) After(d time.Duration) Reply {
	r.Delay = d
	return r
}

func (s *Server) write(w http.ResponseWriter, r *http.Request, reply Reply) {
	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		case <-s.closed:
			return
		}
	}
	if reply.Drop {
		drop(w, reply)
		return
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	body := []byte(reply.Body)
	if reply.Body == "" && status < 300 {
		body = completion(reply)
	}
	h := w.Header()
	for k, vs := range reply.Header {
		h[k] = append([]string(nil), vs...)
	}
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// drop hijacks the connection and closes it, after writing half of a body
// that the headers promised in full when there is one.
func drop(w http.ResponseWriter, reply Reply) {
	hj, ok := w.(http.Hijacker)
	if !ok { // httptest servers always can; answer loudly rather than hang
		writeError(w, http.StatusInternalServerError, "llmtest: connection cannot be dropped", "server_error")
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	if reply.Body == "" {
		return
	}
	writeTruncated(buf.Writer, reply)
	_ = buf.Flush()
}

func writeTruncated(bw *bufio.Writer, reply Reply) {
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	fmt.Fprintf(bw, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	h := reply.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	h.Set("Content-Length", strconv.Itoa(len(reply.Body)))
	_ = h.Write(bw)
	_, _ = io.WriteString(bw, "\r\n")
	_, _ = io.WriteString(bw, reply.Body[:len(reply.Body)/2])
}

func writeError(w http.ResponseWriter, status int, message, errType string) {
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": errType}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeParamError answers 400 the way OpenAI refuses a parameter.
func writeParamError(w http.ResponseWriter, message, param string) {
	body, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": message, "type": "invalid_request_error", "param": param, "code": "unsupported_parameter"}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(body)
}
