package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/web"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// webWorld is neobot serving the web API to two users, Alice and Bob,
// with a scripted model and the filesystem server behind a skill that
// asks before writing.
type webWorld struct {
	base       string
	alice, bob string // tokens
	model      *llmtest.Server
	env        map[string]string
	dir        string
}

func newWebWorld(t *testing.T) *webWorld {
	t.Helper()
	w := &webWorld{model: llmtest.New(t), dir: t.TempDir()}
	addr := freeAddr(t)
	w.base = "http://" + addr
	var users []string
	for _, name := range []string{"alice", "bob"} {
		token, hash, err := web.NewToken()
		if err != nil {
			t.Fatal(err)
		}
		users = append(users, name+"="+hash)
		if name == "alice" {
			w.alice = token
		} else {
			w.bob = token
		}
	}
	w.env = map[string]string{
		"NEO_MODEL": "test-main", "NEO_CHEAP_MODEL": cheapModel, "NEO_LLM_BASE_URL": w.model.BaseURL(),
		"NEO_DB_PATH": filepath.Join(t.TempDir(), "neobot.db"), "NEO_WEB_ADDR": addr,
		"NEO_WEB_USERS": strings.Join(users, ","), "NEO_SELF_APPROVE": "true",
		"NEO_MANIFEST": writeJSON(t, "manifest.json", map[string]any{
			"did": "did:web:neobot.test:agents:e2e", "servers": []any{fsServerSpec(t, "fs", w.dir)}}),
		"NEO_CONFIG": writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{
			"default": map[string]any{"side_effects": map[string]string{"read": "allow", "write": "ask"}}}}),
	}
	return w
}

func (w *webWorld) start(t *testing.T) *process {
	t.Helper()
	p := start(t, w.env)
	waitHTTP(t, w.base+"/v1/openapi.json", p)
	return p
}

// call makes an API request as token and decodes the JSON answer into out
// (when not nil); it returns the status.
func (w *webWorld) call(t *testing.T, token, method, path string, body any, out any, headers ...string) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, w.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	if out != nil {
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			t.Fatalf("%s %s: decode: %v", method, path, err)
		}
	}
	return res.StatusCode
}

// sse is an open event stream.
type sse struct {
	events chan web.Event
	cancel context.CancelFunc
}

// follow opens conversation id's event stream as token, from lastID.
func (w *webWorld) follow(t *testing.T, token, id, lastID string) *sse {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", w.base+"/v1/conversations/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("open the event stream: %v (status %v)", err, res)
	}
	s := &sse{events: make(chan web.Event, 256), cancel: cancel}
	go func() {
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		var e web.Event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				e.ID = line[4:]
			case strings.HasPrefix(line, "event: "):
				e.Type = line[7:]
			case strings.HasPrefix(line, "data: "):
				e.Data = json.RawMessage(line[6:])
			case line == "" && e.Type != "":
				s.events <- e
				e = web.Event{}
			}
		}
	}()
	return s
}

// next waits for the next event of type typ, returning it and every
// event before it.
func (s *sse) next(t *testing.T, typ string) (web.Event, []web.Event) {
	t.Helper()
	var seen []web.Event
	ctx := waitCtx(t)
	for {
		select {
		case e := <-s.events:
			seen = append(seen, e)
			if e.Type == typ {
				return e, seen
			}
		case <-ctx.Done():
			t.Fatalf("no %s event; saw %+v", typ, seen)
		}
	}
}

func text(e web.Event) string {
	var d struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(e.Data, &d)
	return d.Text
}

// TestWebAPI drives the web API with the built binary: a token is needed
// everywhere; Alice creates a conversation, sends a message twice under
// one idempotency key (one turn), watches the streamed answer, approves a
// write over HTTP and resumes the event stream with Last-Event-ID; Bob's
// token gets nothing of hers.
func TestWebAPI(t *testing.T) {
	w := newWebWorld(t)
	note := filepath.Join(w.dir, "note.txt")
	scriptModel(t, w.model,
		llmtest.Text("Hello! I'm Neo."),
		llmtest.Calls(llmtest.Call("c1", "fs__write_file", `{"path":"`+note+`","content":"ship it"}`)),
		llmtest.Text("Saved note.txt."),
	)
	p := w.start(t)

	for _, path := range []string{"/v1/me", "/v1/conversations", "/v1/conversations/0123456789abcdef01234567"} {
		if got := w.call(t, "", "GET", path, nil, nil); got != http.StatusUnauthorized {
			t.Errorf("GET %s without a token = %d, want 401", path, got)
		}
		if got := w.call(t, "neo_forged", "GET", path, nil, nil); got != http.StatusUnauthorized {
			t.Errorf("GET %s with a forged token = %d, want 401", path, got)
		}
	}

	var created struct{ ID string }
	if got := w.call(t, w.alice, "POST", "/v1/conversations", map[string]any{}, &created); got != http.StatusCreated || created.ID == "" {
		t.Fatalf("create = %d %+v", got, created)
	}
	conv := "/v1/conversations/" + created.ID
	events := w.follow(t, w.alice, created.ID, "")
	for range 2 { // the same key twice: one turn (the model script would fail on a second)
		if got := w.call(t, w.alice, "POST", conv+"/messages", map[string]string{"text": "hello"}, nil, "Idempotency-Key", "k1"); got != http.StatusAccepted {
			t.Fatalf("send = %d, want 202", got)
		}
	}
	if e, _ := events.next(t, "answer"); text(e) != "Hello! I'm Neo." {
		t.Errorf("answer = %q", text(e))
	}

	// Bob sees nothing of Alice's.
	for _, c := range []struct{ method, path string }{{"GET", conv}, {"GET", conv + "/events"}, {"POST", conv + "/messages"}, {"POST", conv + "/stop"}} {
		if got := w.call(t, w.bob, c.method, c.path, map[string]string{"text": "hi"}, nil); got != http.StatusNotFound {
			t.Errorf("Bob's %s %s = %d, want 404", c.method, c.path, got)
		}
	}
	var bobs struct{ Conversations []web.Summary }
	w.call(t, w.bob, "GET", "/v1/conversations", nil, &bobs)
	if len(bobs.Conversations) != 0 {
		t.Errorf("Bob lists %+v, want none of Alice's", bobs.Conversations)
	}

	if got := w.call(t, w.alice, "POST", conv+"/messages", map[string]string{"text": "save a note"}, nil); got != http.StatusAccepted {
		t.Fatalf("send = %d", got)
	}
	invoked, _ := events.next(t, "gate.invoked")
	var gate struct {
		Token     string
		Options   []string
		Approving []bool
	}
	_ = json.Unmarshal(invoked.Data, &gate)
	if len(gate.Options) != 2 || gate.Options[0] != "Allow once" || !gate.Approving[0] || gate.Approving[1] {
		t.Fatalf("gate.invoked = %s, want Allow once (approving) and Deny", invoked.Data)
	}
	events.cancel() // the connection drops while the approval waits

	var refused struct{ Error string }
	if got := w.call(t, w.bob, "POST", "/v1/gates/"+gate.Token+"/answer", map[string]int{"option": 0}, &refused); got != http.StatusForbidden ||
		!strings.Contains(refused.Error, "only @alice or a configured approver") {
		t.Errorf("Bob's answer to Alice's approval = %d %q, want 403 saying who may answer", got, refused.Error)
	}
	if _, err := os.Stat(note); !os.IsNotExist(err) {
		t.Fatalf("the write ran before Alice answered (stat: %v)", err)
	}
	var decided struct{ State, By string }
	if got := w.call(t, w.alice, "POST", "/v1/gates/"+gate.Token+"/answer", map[string]int{"option": 0}, &decided); got != http.StatusOK || decided.State != "approved" || decided.By != "alice" {
		t.Fatalf("Alice's answer = %d %+v", got, decided)
	}
	if got := w.call(t, w.alice, "POST", "/v1/gates/"+gate.Token+"/answer", map[string]int{"option": 1}, nil); got != http.StatusConflict {
		t.Errorf("a second answer = %d, want 409: an approval is answered once", got)
	}

	// Resume after the approval: only what came after it.
	resumed := w.follow(t, w.alice, created.ID, invoked.ID)
	final, seen := resumed.next(t, "answer")
	if text(final) != "Saved note.txt." {
		t.Errorf("answer after resuming = %q", text(final))
	}
	if seen[0].Type != "gate.decided" {
		t.Errorf("the resumed stream starts with %s, want gate.decided, the first event after Last-Event-ID", seen[0].Type)
	}
	for _, e := range seen {
		if e.Type == "gate.invoked" || e.Type == "message" && text(e) == "hello" {
			t.Errorf("the resumed stream repeats %s %s", e.Type, e.Data)
		}
	}
	if data, err := os.ReadFile(note); err != nil || string(data) != "ship it" {
		t.Errorf("note.txt = %q, %v", data, err)
	}

	var tr struct {
		Messages []web.Said
	}
	w.call(t, w.alice, "GET", conv, nil, &tr)
	want := []web.Said{{Role: "user", Text: "hello"}, {Role: "assistant", Text: "Hello! I'm Neo."}, {Role: "user", Text: "save a note"}, {Role: "assistant", Text: "Saved note.txt."}}
	if len(tr.Messages) != len(want) {
		t.Fatalf("transcript = %+v, want %+v", tr.Messages, want)
	}
	for i := range want {
		if tr.Messages[i] != want[i] {
			t.Errorf("transcript[%d] = %+v, want %+v", i, tr.Messages[i], want[i])
		}
	}
	var list struct{ Conversations []web.Summary }
	w.call(t, w.alice, "GET", "/v1/conversations", nil, &list)
	if len(list.Conversations) != 1 || list.Conversations[0].ID != created.ID || list.Conversations[0].Title != "hello" {
		t.Errorf("Alice's conversations = %+v", list.Conversations)
	}
	p.stop(t)
	if out := p.output.String(); strings.Contains(out, w.alice) || strings.Contains(out, w.bob) {
		t.Error("neobot's log leaks a web token")
	}
}

// TestWebLoginLink: neobot web prints a one-time link; its code signs in
// once.
func TestWebLoginLink(t *testing.T) {
	w := newWebWorld(t)
	delete(w.env, "NEO_WEB_USERS")
	p := start(t, w.env, "web", "--user", "carol")
	waitHTTP(t, w.base+"/v1/openapi.json", p)
	var code string
	deadline := time.Now().Add(30 * time.Second)
	for code == "" && time.Now().Before(deadline) {
		if _, after, ok := strings.Cut(p.output.String(), "#login="); ok {
			code = strings.Fields(after)[0]
			break
		}
		time.Sleep(20 * time.Millisecond) // polling the output, not timing the bot
	}
	if code == "" {
		t.Fatalf("no login link printed:\n%s", p.output.String())
	}
	var session struct{ Token, User string }
	if got := w.call(t, "", "POST", "/v1/login", map[string]string{"code": code}, &session); got != http.StatusOK || session.User != "carol" {
		t.Fatalf("login = %d %+v", got, session)
	}
	var me struct{ User string }
	if got := w.call(t, session.Token, "GET", "/v1/me", nil, &me); got != http.StatusOK || me.User != "carol" {
		t.Errorf("me = %d %+v", got, me)
	}
	if got := w.call(t, "", "POST", "/v1/login", map[string]string{"code": code}, nil); got != http.StatusUnauthorized {
		t.Errorf("a second login with the same code = %d, want 401", got)
	}
	p.stop(t)
}
