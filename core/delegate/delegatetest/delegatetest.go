// Package delegatetest is a fake execution daemon on loopback speaking the
// async HTTP contract core/delegate uses. Tests script what each submitted
// intent does (gates, clarify, fail, cancel, slow, never finishing) and
// read back every request and every gate answer.
//
//	d := delegatetest.New(t)
//	d.RequireToken("secret")
//	d.Script(delegatetest.Intent{
//		Gates:  []delegatetest.Gate{{NodeID: "n1", Question: "Approve spend of 5 PAX?"}},
//		Answer: "settled",
//	})
//	c, _ := delegate.New(delegate.Options{BaseURL: d.URL(), Token: "secret", ...})
//
// A scripted intent presents its gates one at a time, in order. An approval
// moves on to the next gate; a denial ends the intent (status "failed" with
// an error naming the gate, or DeniedStatus). Once every gate is approved
// the intent stays "running" for Polls status polls, then reports its
// outcome: Clarify, Fail, Cancel, Never (running forever) or completed with
// Answer.
//
// Gate answers are deduplicated by Idempotency-Key: a replay is
// acknowledged and not applied again, so [Server.Answers] holds what the
// daemon applied while [Server.Requests] holds everything that arrived.
package delegatetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Gate is a scripted approval gate.
type Gate struct {
	NodeID   string
	Question string
	// Options default to ["yes", "no"].
	Options []string
}

// Intent scripts what the daemon does with one submission.
type Intent struct {
	// Match selects this script for a submission whose prose contains it
	// (case-insensitive); "" matches any prose.
	Match string
	// ID, when set, is the intent ID handed out instead of the next
	// i<N>: a daemon restarted on an empty database reuses IDs. The
	// newest intent with an ID answers for it.
	ID string
	// Gates are presented one at a time, in order.
	Gates []Gate
	// Answer is result.answer on completion ("" reports no answer).
	Answer string
	// Fail makes the intent fail with this pipeline error message.
	Fail string
	// Cancel makes the daemon report the intent cancelled.
	Cancel bool
	// Clarify makes the daemon ask this question instead of finishing.
	Clarify string
	// Never keeps the intent running forever once its gates are passed.
	Never bool
	// Polls is how many status polls report "running" after the gates
	// before the outcome (a slow intent).
	Polls int
	// DeniedStatus is the status after a gate is denied or withdrawn:
	// "failed" (the default) or "cancelled".
	DeniedStatus string
	// DropAnswers drops the connection, unanswered, after applying each of
	// the first DropAnswers gate answers, as a network failure would after
	// the daemon acted: the client must resend, and the replay must not
	// apply twice.
	DropAnswers int
}

// Request is one HTTP request the daemon received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// Answer is one gate answer the daemon applied.
type Answer struct {
	IntentID string
	NodeID   string
	Approved bool
	Answer   string
	// Key is the request's Idempotency-Key, "" when it had none.
	Key string
}

// Submission is the record of one intent.
type Submission struct {
	ID           string
	Prose        string
	Skill        string
	CallerDID    string
	CallerWallet string
	// Key is the submit request's Idempotency-Key, "" when it had none.
	Key string
	// Status is what the daemon reports now.
	Status string
}

// Server is the fake daemon. Its methods are safe for concurrent use.
type Server struct {
	srv *httptest.Server

	mu       sync.Mutex
	token    string
	scripts  []Intent
	fallback *Intent
	intents  []*intent
	byKey    map[string]*intent // submit Idempotency-Key -> intent
	answered map[string]bool    // intent + "\x00" + answer Idempotency-Key
	answers  []Answer
	received []Answer // every well-formed answer, accepted or refused
	requests []Request
	changed  chan struct{} // closed and replaced on every recorded change
}

type intent struct {
	Submission
	script    Intent
	gate      int    // index of the pending gate
	denied    string // why the intent ended at a gate, "" while none did
	polls     int    // status polls after the gates
	cancelled bool   // cancelled from the test with Server.Cancel
	dropped   int
}

// New starts a Server on 127.0.0.1, closed by tb.Cleanup.
func New(tb testing.TB) *Server {
	tb.Helper()
	s := NewServer()
	tb.Cleanup(s.Close)
	return s
}

// NewServer starts a Server on 127.0.0.1; the caller closes it.
func NewServer() *Server {
	s := &Server{byKey: map[string]*intent{}, answered: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /messages/async", s.handleSubmit)
	mux.HandleFunc("GET /messages/async/{id}", s.handleStatus)
	mux.HandleFunc("GET /intents/{id}/gates", s.handleGates)
	mux.HandleFunc("POST /intents/{id}/gates/{nid}/answer", s.handleAnswer)
	s.srv = httptest.NewServer(s.record(mux))
	return s
}

// Close shuts the server down.
func (s *Server) Close() { s.srv.Close() }

// URL returns the daemon's base URL, "http://127.0.0.1:PORT".
func (s *Server) URL() string { return s.srv.URL }

// RequireToken makes every request without "Authorization: Bearer token"
// fail with 401.
func (s *Server) RequireToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}

// Script queues intents for the next submissions: each submission takes
// the first queued script that matches its prose.
func (s *Server) Script(intents ...Intent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts = append(s.scripts, intents...)
}

// SetDefault sets the script used when no queued script matches. Without
// one, an unscripted submission fails with HTTP 500 so a test fails loudly.
func (s *Server) SetDefault(in Intent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback = &in
}

// Withdraw removes the intent's pending gate nodeID from the pending list,
// as a daemon does when its own gate timeout passes; the intent then ends
// as if the gate were denied. It reports whether that gate was pending.
func (s *Server) Withdraw(intentID, nodeID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.find(intentID)
	if in == nil || in.pendingGate() == nil || in.pendingGate().NodeID != nodeID {
		return false
	}
	in.denied = fmt.Sprintf("the approval for %s expired at the daemon", nodeID)
	s.changedLocked()
	return true
}

// Cancel makes the daemon report the intent cancelled from now on.
func (s *Server) Cancel(intentID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.find(intentID)
	if in == nil {
		return false
	}
	in.cancelled = true
	s.changedLocked()
	return true
}

// Requests returns every request received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = Request{Method: r.Method, Path: r.Path, Header: r.Header.Clone(), Body: slices.Clone(r.Body)}
	}
	return out
}

// Answers returns the gate answers applied, in order; a replayed
// Idempotency-Key is not applied again.
func (s *Server) Answers() []Answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.answers)
}

// Received returns every well-formed gate answer the daemon was sent, in
// order, including those it refused because the gate was no longer
// pending (a withdrawn gate).
func (s *Server) Received() []Answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.received)
}

// WaitReceived waits until at least n answers were sent (see Received) or
// ctx ends.
func (s *Server) WaitReceived(ctx context.Context, n int) ([]Answer, error) {
	err := s.wait(ctx, func() bool { return len(s.received) >= n })
	if err != nil {
		return s.Received(), fmt.Errorf("delegatetest: waiting for %d answers sent, got %d: %w", n, len(s.Received()), err)
	}
	return s.Received(), nil
}

// Intents returns every intent submitted, in order, with its current
// status.
func (s *Server) Intents() []Submission {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Submission, len(s.intents))
	for i, in := range s.intents {
		out[i] = in.Submission
		out[i].Status, _ = in.state()
	}
	return out
}

// Pending returns the node ID of the intent's pending gate, "" when none.
func (s *Server) Pending(intentID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in := s.find(intentID); in != nil {
		if g := in.pendingGate(); g != nil {
			return g.NodeID
		}
	}
	return ""
}

// WaitAnswers blocks until n answers were applied, then returns them; it
// fails when ctx ends first.
func (s *Server) WaitAnswers(ctx context.Context, n int) ([]Answer, error) {
	err := s.wait(ctx, func() bool { return len(s.answers) >= n })
	if err != nil {
		return s.Answers(), fmt.Errorf("delegatetest: waiting for %d answers, got %d: %w", n, len(s.Answers()), err)
	}
	return s.Answers(), nil
}

// WaitRequests blocks until n recorded requests satisfy match, then
// returns those requests; it fails when ctx ends first.
func (s *Server) WaitRequests(ctx context.Context, n int, match func(Request) bool) ([]Request, error) {
	var got []Request
	err := s.wait(ctx, func() bool {
		got = got[:0]
		for _, r := range s.requests {
			if match(r) {
				got = append(got, r)
			}
		}
		return len(got) >= n
	})
	if err != nil {
		return got, fmt.Errorf("delegatetest: waiting for %d matching requests, got %d: %w", n, len(got), err)
	}
	return got, nil
}

// WaitIntents blocks until n intents were submitted, then returns them; it
// fails when ctx ends first.
func (s *Server) WaitIntents(ctx context.Context, n int) ([]Submission, error) {
	err := s.wait(ctx, func() bool { return len(s.intents) >= n })
	if err != nil {
		return s.Intents(), fmt.Errorf("delegatetest: waiting for %d intents, got %d: %w", n, len(s.Intents()), err)
	}
	return s.Intents(), nil
}

// wait blocks until cond, called with s.mu held, is true or ctx ends.
func (s *Server) wait(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		if cond() {
			s.mu.Unlock()
			return nil
		}
		if s.changed == nil {
			s.changed = make(chan struct{})
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (s *Server) changedLocked() {
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

func (s *Server) find(id string) *intent {
	for _, in := range slices.Backward(s.intents) {
		if in.ID == id {
			return in
		}
	}
	return nil
}

// record keeps every request, then checks the bearer token.
func (s *Server) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.mu.Lock()
		s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		token := s.token
		s.changedLocked()
		s.mu.Unlock()
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "unauthorized"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) handleSubmit(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Prose        string `json:"prose"`
		Skill        string `json:"skill"`
		CallerDID    string `json:"caller_did"`
		CallerWallet string `json:"caller_wallet"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || strings.TrimSpace(req.Prose) == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "prose is required"})
		return
	}
	key := r.Header.Get("Idempotency-Key")
	s.mu.Lock()
	defer s.mu.Unlock()
	if in, ok := s.byKey[key]; ok && key != "" {
		writeJSON(w, http.StatusOK, map[string]string{"intent_id": in.ID})
		return
	}
	script, ok := s.take(req.Prose)
	if !ok {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "delegatetest: no scripted intent for this prose"})
		return
	}
	in := &intent{
		Submission: Submission{
			ID: fmt.Sprintf("i%d", len(s.intents)+1), Prose: req.Prose, Skill: req.Skill,
			CallerDID: req.CallerDID, CallerWallet: req.CallerWallet, Key: key,
		},
		script: script,
	}
	if script.ID != "" {
		// A restarted daemon forgets the answers it applied before.
		in.ID = script.ID
		maps.DeleteFunc(s.answered, func(k string, _ bool) bool { return strings.HasPrefix(k, in.ID+"\x00") })
	}
	s.intents = append(s.intents, in)
	if key != "" {
		s.byKey[key] = in
	}
	s.changedLocked()
	writeJSON(w, http.StatusAccepted, map[string]string{"intent_id": in.ID})
}

// take removes and returns the first queued script matching prose, else
// the default.
func (s *Server) take(prose string) (Intent, bool) {
	for i, sc := range s.scripts {
		if sc.Match == "" || strings.Contains(strings.ToLower(prose), strings.ToLower(sc.Match)) {
			s.scripts = slices.Delete(s.scripts, i, i+1)
			sc.Gates = slices.Clone(sc.Gates)
			return sc, true
		}
	}
	if s.fallback != nil {
		return *s.fallback, true
	}
	return Intent{}, false
}

func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.find(r.PathValue("id"))
	if in == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "unknown intent"})
		return
	}
	status, body := in.state()
	if status == "running" && in.pendingGate() == nil && in.denied == "" && in.polls < in.script.Polls {
		in.polls++ // a slow intent: one poll closer to its outcome
	}
	writeJSON(w, http.StatusOK, body)
}

func (s *Server) handleGates(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.find(r.PathValue("id"))
	if in == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "unknown intent"})
		return
	}
	pending := []map[string]any{}
	if g := in.pendingGate(); g != nil {
		pending = append(pending, map[string]any{"node_id": g.NodeID, "question": g.Question, "options": gateOptions(*g)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"pending": pending})
}

func (s *Server) handleAnswer(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Approved *bool  `json:"approved"`
		Answer   string `json:"answer"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Approved == nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "approved is required"})
		return
	}
	id, node, key := r.PathValue("id"), r.PathValue("nid"), r.Header.Get("Idempotency-Key")
	s.mu.Lock()
	s.received = append(s.received, Answer{IntentID: id, NodeID: node, Approved: *req.Approved, Answer: req.Answer, Key: key})
	s.changedLocked()
	in := s.find(id)
	switch {
	case in == nil:
		s.mu.Unlock()
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "unknown intent"})
		return
	case key != "" && s.answered[id+"\x00"+key]:
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "replayed": true})
		return
	case in.pendingGate() == nil || in.pendingGate().NodeID != node:
		s.mu.Unlock()
		writeJSON(w, http.StatusConflict, map[string]string{"error": "gate is not pending"})
		return
	}
	if key != "" {
		s.answered[id+"\x00"+key] = true
	}
	s.answers = append(s.answers, Answer{IntentID: id, NodeID: node, Approved: *req.Approved, Answer: req.Answer, Key: key})
	if *req.Approved {
		in.gate++
	} else {
		in.denied = fmt.Sprintf("the approver denied %s", node)
	}
	drop := in.dropped < in.script.DropAnswers
	if drop {
		in.dropped++
	}
	s.changedLocked()
	s.mu.Unlock()
	if drop {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		// Without hijacking, a gateway error stands in for the lost reply.
		writeJSON(w, http.StatusBadGateway, map[string]string{"error": "delegatetest: connection dropped"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
}

// pendingGate returns the gate waiting for an answer, nil when none.
func (in *intent) pendingGate() *Gate {
	if in.cancelled || in.denied != "" || in.gate >= len(in.script.Gates) {
		return nil
	}
	return &in.script.Gates[in.gate]
}

// state returns the intent's status and the status response body.
func (in *intent) state() (string, map[string]any) {
	body := func(status string, kv ...any) (string, map[string]any) {
		m := map[string]any{"intent_id": in.ID, "status": status}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return status, m
	}
	sc := in.script
	switch {
	case in.cancelled:
		return body("cancelled")
	case in.denied != "" && sc.DeniedStatus == "cancelled":
		return body("cancelled")
	case in.denied != "":
		return body("failed", "error", in.denied)
	case in.pendingGate() != nil:
		return body("awaiting_approval")
	case in.polls < sc.Polls || sc.Never:
		return body("running")
	case sc.Clarify != "":
		return body("clarify", "clarify", map[string]string{"question": sc.Clarify})
	case sc.Fail != "":
		return body("failed", "error", sc.Fail)
	case sc.Cancel:
		return body("cancelled")
	}
	return body("completed", "result", map[string]string{"answer": sc.Answer})
}

func gateOptions(g Gate) []string {
	if len(g.Options) == 0 {
		return []string{"yes", "no"}
	}
	return g.Options
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
