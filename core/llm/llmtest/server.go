// Package llmtest is a scripted OpenAI-compatible chat-completions server on
// loopback. Tests queue replies (or install a handler), point an llm.Client
// at BaseURL, and assert on the recorded requests. It can also misbehave on
// purpose: HTTP errors with bodies and Retry-After, malformed or truncated
// JSON, dropped connections and latency.
package llmtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/core/llm"
)

// Server is a scripted chat-completions endpoint. It is safe for concurrent
// use; replies are served in the order they were enqueued.
type Server struct {
	srv    *httptest.Server
	closed chan struct{}
	once   sync.Once

	mu       sync.Mutex
	noStream bool // RefuseStreaming
	queue    []Reply
	handler  func(Request) Reply
	requests []Request
	unkept   bool // Unrecorded: requests are not kept
	tools    toolMemo
	streams  []Stream
}

// Stream is when a streamed answer's content was sent: the times the
// fakes of the chats record for their calls are compared with these to
// tell how soon an answer showed.
type Stream struct {
	// Model is the request's model.
	Model string
	// FirstContent is when the answer's first piece of content was
	// flushed; zero for an answer with none (tool calls alone).
	FirstContent time.Time
	// Done is when the last chunk was flushed; zero while the answer is
	// still being sent, or when it never ended.
	Done time.Time
}

// Streams returns a record of each streamed answer, in the order they
// began.
func (s *Server) Streams() []Stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Stream(nil), s.streams...)
}

// New starts a Server on 127.0.0.1 and closes it when tb's test ends.
func New(tb testing.TB) *Server {
	tb.Helper()
	s := NewServer()
	tb.Cleanup(s.Close)
	return s
}

// NewServer starts a Server on 127.0.0.1; the caller must Close it.
func NewServer() *Server {
	s := &Server{closed: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	return s
}

// Close stops the server. Replies still waiting out their Delay end at once.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.closed)
		s.srv.Close()
	})
}

// BaseURL is the OpenAI-style base, "http://127.0.0.1:PORT/v1".
func (s *Server) BaseURL() string { return s.srv.URL + "/v1" }

// URL is the server root, "http://127.0.0.1:PORT", for callers that add their
// own path, such as a metering gateway's "/v1/chat/completions".
func (s *Server) URL() string { return s.srv.URL }

// Enqueue appends replies to the queue. Queued replies are served first, one
// per request, before the handler is consulted.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Handle installs fn to answer requests when the queue is empty. A nil fn
// removes the handler.
func (s *Server) Handle(fn func(Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = fn
}

// Pending reports how many queued replies have not been served yet.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Unrecorded stops keeping requests: Requests returns only those received
// before. For long benchmarks, whose tens of thousands of requests would
// otherwise all stay in memory.
func (s *Server) Unrecorded() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unkept = true
}

// record keeps req for Requests, unless Unrecorded said not to. s.mu is
// held.
func (s *Server) record(req Request) {
	if !s.unkept {
		s.requests = append(s.requests, req)
	}
}

// Requests returns a copy of every chat-completions request received so far,
// in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Request is one recorded chat-completions call. Body is the raw JSON; the
// other fields are decoded from it for convenience. ToolChoice is the string
// form ("auto", "none", "required") or, for the object form, its raw JSON.
type Request struct {
	Header     http.Header
	Body       []byte
	Model      string
	Messages   []llm.Message
	Tools      []llm.Tool
	ToolChoice string
	// Stream reports a request for a streamed (Server-Sent Events) answer.
	Stream bool
	// MaxTokens and MaxCompletionTokens are the completion caps the
	// request carried, 0 when absent.
	MaxTokens           int
	MaxCompletionTokens int

	sentMaxTokens bool
}

// Decode unmarshals the raw request body into v, for fields Request does not
// surface (temperature, seed, reasoning echoes...).
func (r Request) Decode(v any) error { return json.Unmarshal(r.Body, v) }

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		writeError(w, http.StatusNotFound, "llmtest: no such endpoint "+r.URL.Path, "not_found")
		return
	}
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "llmtest: chat completions takes POST", "invalid_request_error")
		return
	}
	req, err := s.tools.readRequest(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "llmtest: "+err.Error(), "invalid_request_error")
		return
	}
	if req.sentMaxTokens && reasoningModel(req.Model) {
		// What OpenAI answers its o-series and gpt-5 models.
		s.mu.Lock()
		s.record(req)
		s.mu.Unlock()
		writeParamError(w, "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", "max_tokens")
		return
	}
	if err := checkConversation(req.Messages); err != nil {
		// What OpenAI-compatible servers answer 400 to: the request is
		// recorded, so a test can see what was sent.
		s.mu.Lock()
		s.record(req)
		s.mu.Unlock()
		writeError(w, http.StatusBadRequest, "llmtest: "+err.Error(), "invalid_request_error")
		return
	}

	s.mu.Lock()
	if req.Stream && s.noStream {
		s.record(req)
		s.mu.Unlock()
		writeError(w, http.StatusBadRequest, "stream is not supported by this model", "invalid_request_error")
		return
	}
	s.record(req)
	var reply Reply
	var ok bool
	if len(s.queue) > 0 {
		reply, ok = s.queue[0], true
		s.queue[0] = Reply{}
		s.queue = s.queue[1:]
	} else if s.handler != nil {
		h := s.handler
		s.mu.Unlock()
		reply, ok = h(req), true
		s.mu.Lock()
	}
	s.mu.Unlock()

	if !ok {
		writeError(w, http.StatusInternalServerError, "llmtest: no scripted reply", "server_error")
		return
	}
	reply = withUsage(reply, req)
	if req.Stream && reply.Body == "" && !reply.Drop && (reply.Status == 0 || reply.Status < 300) {
		s.stream(w, r, reply, req.Model)
		return
	}
	s.write(w, r, reply)
}

// RefuseStreaming makes the server answer every streamed request with
// 400, as providers without streaming do; requests without it are served.
func (s *Server) RefuseStreaming() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noStream = true
}

// withUsage fills in token usage the way every OpenAI-compatible server
// reports it, when the reply does not script its own: prompt tokens from
// the request's size, completion tokens from the answer's (about four
// bytes a token, at least one).
func withUsage(reply Reply, req Request) Reply {
	if reply.Usage != (llm.Usage{}) {
		return reply
	}
	out := len(reply.Message.Content) + len(reply.Message.Reasoning)
	for _, tc := range reply.Message.ToolCalls {
		out += len(tc.Function.Name) + len(tc.Function.Arguments)
	}
	reply.Usage = llm.Usage{PromptTokens: max(1, len(req.Body)/4), CompletionTokens: max(1, out/4)}
	reply.Usage.TotalTokens = reply.Usage.PromptTokens + reply.Usage.CompletionTokens
	return reply
}
