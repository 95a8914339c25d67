// Package tasktest is an MCP server for tests, on loopback, whose one
// tool answers every call with a task (the tasks extension,
// io.modelcontextprotocol/tasks) that the test completes when it wants.
// It speaks streamable HTTP with plain JSON responses.
package tasktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Server is the task server. Its methods are safe for concurrent use.
type Server struct {
	// URL is the MCP endpoint.
	URL  string
	tool string
	hs   *httptest.Server

	mu      sync.Mutex
	calls   int
	gets    int
	tasks   map[string]*task
	created chan string
	polled  chan string
	cancels chan string
	answers chan map[string]any

	// hold is where tools/call waits (HoldCalls); held is told when a
	// call waits; stop ends every wait when the test ends.
	hold Hold
	held chan struct{}
	stop chan struct{}
}

// Hold is where a tools/call waits for the client to go away.
type Hold int

// Where a call may be held.
const (
	// HoldNone answers every call at once.
	HoldNone Hold = iota
	// HoldBefore holds a call before the server does anything with it: a
	// call whose client goes away meanwhile starts no task.
	HoldBefore
	// HoldAfter holds a call after its task is created, before the
	// answer naming the task is sent: the client never learns the ID.
	HoldAfter
)

type task struct {
	status, message, result string
	isError                 bool
	// asks are the questions the task waits on, by key.
	asks map[string]any
}

// New starts a server whose tool named tool answers with a task; it stops
// when the test ends.
func New(t testing.TB, tool string) *Server {
	s := &Server{tool: tool, tasks: map[string]*task{},
		created: make(chan string, 16), polled: make(chan string, 1024), cancels: make(chan string, 16),
		answers: make(chan map[string]any, 16), held: make(chan struct{}, 16), stop: make(chan struct{})}
	hs := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(s.stop) }) // runs first: no held call keeps Close waiting
	s.hs, s.URL = hs, hs.URL+"/mcp"
	return s
}

// Calls returns how many tools/call requests the server received: each
// started a task.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Created delivers the ID of each task as it is created.
func (s *Server) Created() <-chan string { return s.created }

// Polled delivers a task's ID each time tasks/get asks for it (dropped
// when nobody reads them).
func (s *Server) Polled() <-chan string { return s.polled }

// Cancels delivers the ID of each task tasks/cancel cancelled.
func (s *Server) Cancels() <-chan string { return s.cancels }

// Say sets the status message the task with id reports while it works.
func (s *Server) Say(id, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if tk := s.tasks[id]; tk != nil {
		tk.message = message
	}
}

// Complete ends the task with id with a text result.
func (s *Server) Complete(id, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if tk := s.tasks[id]; tk != nil && tk.status == "working" {
		tk.status, tk.result = "completed", text
	}
}

// Ask makes the task with id wait on a yes-or-no question (a form with
// one boolean field "ok") under key, until tasks/update answers it.
func (s *Server) Ask(id, key, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if tk := s.tasks[id]; tk != nil {
		tk.status = "input_required"
		tk.asks = map[string]any{key: map[string]any{"method": "elicitation/create", "params": map[string]any{
			"message": message, "requestedSchema": map[string]any{"type": "object",
				"properties": map[string]any{"ok": map[string]any{"type": "boolean"}}, "required": []string{"ok"}}}}}
	}
}

// Answers delivers the inputResponses of each tasks/update.
func (s *Server) Answers() <-chan map[string]any { return s.answers }

// Down stops the server: every later request finds nobody listening.
func (s *Server) Down() {
	s.hs.CloseClientConnections()
	s.hs.Listener.Close()
}

// Begin starts a task as a call of the tool would, without counting a
// call, and returns its ID: the task an earlier process's call started.
func (s *Server) Begin() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := fmt.Sprintf("task-begun-%d", len(s.tasks)+1)
	s.tasks[id] = &task{status: "working"}
	return id
}

// HoldCalls makes every later tools/call wait at h until its client
// goes away (or the test ends); the call is then never answered.
func (s *Server) HoldCalls(h Hold) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold = h
}

// Held is told each time a call starts waiting where HoldCalls said.
func (s *Server) Held() <-chan struct{} { return s.held }

// Forget drops the task with id, as a server whose TTL passed.
func (s *Server) Forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tasks, id)
}

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name           string         `json:"name"`
		TaskID         string         `json:"taskId"`
		InputResponses map[string]any `json:"inputResponses"`
	} `json:"params"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if req.ID == nil { // a notification
		w.WriteHeader(http.StatusAccepted)
		return
	}
	s.mu.Lock()
	hold := s.hold
	s.mu.Unlock()
	if req.Method == "tools/call" && hold == HoldBefore {
		s.wait(r)
		return // the client went away: the call does nothing
	}
	result, rpcErr := s.answer(req)
	if req.Method == "tools/call" && hold == HoldAfter {
		s.wait(r)
		return // the task runs, and nobody learns its ID
	}
	out := map[string]any{"jsonrpc": "2.0", "id": req.ID}
	if rpcErr != nil {
		out["error"] = rpcErr
	} else {
		out["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// wait tells Held that r waits, and returns when its client goes away or
// the test ends.
func (s *Server) wait(r *http.Request) {
	s.held <- struct{}{}
	select {
	case <-r.Context().Done():
	case <-s.stop:
	}
}

func (s *Server) answer(req request) (any, map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch req.Method {
	case "initialize":
		return map[string]any{
			"protocolVersion": "2025-11-25", "serverInfo": map[string]any{"name": "tasktest", "version": "1.0.0"},
			"capabilities": map[string]any{"tools": map[string]any{}, "extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
		}, nil
	case "tools/list":
		return map[string]any{"tools": []any{map[string]any{
			"name": s.tool, "description": "Runs for a while, as a task.",
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{}},
		}}}, nil
	case "tools/call":
		if req.Params.Name != s.tool {
			return nil, map[string]any{"code": -32602, "message": "unknown tool " + req.Params.Name}
		}
		s.calls++
		id := fmt.Sprintf("task-%d", s.calls)
		s.tasks[id] = &task{status: "working"}
		s.created <- id
		return s.wire(id, "task"), nil
	case "tasks/get":
		if s.tasks[req.Params.TaskID] == nil {
			return nil, map[string]any{"code": -32602, "message": "unknown task " + req.Params.TaskID}
		}
		select {
		case s.polled <- req.Params.TaskID:
		default:
		}
		return s.wire(req.Params.TaskID, "complete"), nil
	case "tasks/update":
		tk := s.tasks[req.Params.TaskID]
		if tk == nil {
			return nil, map[string]any{"code": -32602, "message": "unknown task " + req.Params.TaskID}
		}
		for k := range req.Params.InputResponses {
			delete(tk.asks, k)
		}
		if tk.status == "input_required" && len(tk.asks) == 0 {
			tk.status = "working"
		}
		s.answers <- req.Params.InputResponses
		return map[string]any{"resultType": "complete"}, nil
	case "tasks/cancel":
		tk := s.tasks[req.Params.TaskID]
		if tk == nil {
			return nil, map[string]any{"code": -32602, "message": "unknown task " + req.Params.TaskID}
		}
		if tk.status == "working" {
			tk.status = "cancelled"
			s.cancels <- req.Params.TaskID
		}
		return map[string]any{"resultType": "complete"}, nil
	}
	return nil, map[string]any{"code": -32601, "message": "method not found: " + req.Method}
}

// wire is the task with id as the extension sends it, with resultType rt.
func (s *Server) wire(id, rt string) map[string]any {
	tk := s.tasks[id]
	out := map[string]any{"resultType": rt, "taskId": id, "status": tk.status, "ttlMs": 3600000, "pollIntervalMs": 25,
		"createdAt": "2026-11-28T12:00:00Z", "lastUpdatedAt": "2026-11-28T12:00:00Z"}
	if tk.message != "" {
		out["statusMessage"] = tk.message
	}
	if tk.status == "input_required" {
		out["inputRequests"] = tk.asks
	}
	if tk.status == "completed" {
		out["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": tk.result}}, "isError": tk.isError}
	}
	return out
}
