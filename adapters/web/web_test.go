package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/internal/intake/intaketest"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
)

// history is a History over nothing stored.
type history struct{}

func (history) Conversations(context.Context, string, int) ([]Summary, error) { return nil, nil }
func (history) Transcript(context.Context, core.Thread) ([]Said, error)       { return nil, nil }
func (history) Known(context.Context, core.Thread) (bool, error)              { return false, nil }
func (history) Rename(context.Context, core.Thread, string) error             { return core.ErrNotFound }
func (history) Delete(context.Context, core.Thread) error                     { return nil }

func newAdapter(t *testing.T) (*Adapter, string) {
	t.Helper()
	token, hash, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{Users: map[string]string{hash: "alice"}, Hub: intaketest.NewHub(intaketest.NewThreads()), History: history{}})
	if err != nil {
		t.Fatal(err)
	}
	return a, token
}

// TestOpenAPIInStep: the served document lists exactly the routes the
// adapter serves, with the same methods.
func TestOpenAPIInStep(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	served := map[string]bool{"GET /v1/openapi.json": true}
	for _, rt := range routes {
		served[rt.method+" "+rt.path] = true
	}
	for k := range served {
		if !documented[k] {
			t.Errorf("%s is served but not in openapi.json", k)
		}
	}
	for k := range documented {
		if !served[k] {
			t.Errorf("%s is in openapi.json but not served", k)
		}
	}
}

// TestEveryEndpointNeedsAToken: no /v1 endpoint but the login exchange
// and the document answers without a valid token.
func TestEveryEndpointNeedsAToken(t *testing.T) {
	a, token := newAdapter(t)
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	for _, rt := range routes {
		if !rt.auth {
			continue
		}
		path := strings.NewReplacer("{id}", "0123456789abcdef01234567", "{token}", "tok").Replace(rt.path)
		for _, auth := range []string{"", "Bearer", "Bearer neo_wrong", "Basic " + token, token} {
			req, _ := http.NewRequest(rt.method, srv.URL+path, strings.NewReader(`{}`))
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s %s with Authorization %.12q = %d, want 401", rt.method, path, auth, res.StatusCode)
			}
		}
	}
	req, _ := http.NewRequest("GET", srv.URL+"/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Errorf("a valid token: %v %v", err, res.Status)
	}
}

func TestParseUsers(t *testing.T) {
	_, hash, _ := NewToken()
	bobs := strings.Repeat("AB", 32) // upper case is read as lower case
	users, err := ParseUsers([]string{"alice=" + hash, " bob=" + bobs})
	if err != nil || users[hash] != "alice" || users[strings.ToLower(bobs)] != "bob" || len(users) != 2 {
		t.Errorf("ParseUsers = %v, %v", users, err)
	}
	for _, tt := range []struct{ entry, want string }{
		{"alice", "name=<token hash>"},
		{"Alice=" + hash, "lowercase"},
		{"alice=neo_plaintexttoken", "SHA-256 hash"},
	} {
		if _, err := ParseUsers([]string{tt.entry}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseUsers(%.20q) = %v, want an error saying %q", tt.entry, err, tt.want)
		}
		if _, err := ParseUsers([]string{tt.entry}); err != nil && strings.Contains(err.Error(), "plaintexttoken") {
			t.Errorf("the error repeats what may be a token: %v", err)
		}
	}
}

func TestLoginCodeOnce(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	a := newAuth(nil, func() time.Time { return now })
	code, _ := a.loginCode("carol")
	token, user, err := a.exchange(code)
	if err != nil || user != "carol" || token == "" {
		t.Fatalf("exchange = %q, %q, %v", token, user, err)
	}
	if _, _, err := a.exchange(code); err == nil {
		t.Error("a login code worked twice")
	}
	late, _ := a.loginCode("carol")
	now = now.Add(loginTTL)
	if _, _, err := a.exchange(late); err == nil {
		t.Error("an expired login code worked")
	}
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if got := a.user(req); got != "carol" {
		t.Errorf("the session token is %q's, want carol's", got)
	}
}

func TestFeedResume(t *testing.T) {
	f := newFeed(time.Unix(1, 0), 0, 0)
	for i := range 3 {
		f.publish("c1", EventStatus, json.RawMessage(`{"text":"`+strings.Repeat("x", i)+`"}`))
	}
	all, reset, _ := f.since("c1", "")
	if len(all) != 3 || reset {
		t.Fatalf("since start: %d events, reset %v", len(all), reset)
	}
	after, reset, _ := f.since("c1", all[0].ID)
	if len(after) != 2 || after[0].ID != all[1].ID || reset {
		t.Errorf("since the first: %+v, reset %v; want the last two", after, reset)
	}
	if _, reset, _ := f.since("c1", "otherepoch.2"); !reset {
		t.Error("an ID from another run must reset")
	}
	for range maxEvents + 10 {
		f.publish("c1", EventStatus, json.RawMessage(`{"text":"y"}`))
	}
	if evs, reset, _ := f.since("c1", all[2].ID); !reset || len(evs) != maxEvents {
		t.Errorf("resuming from an evicted event: reset %v, %d events; want reset and what is kept", reset, len(evs))
	}
	_, _, wake := f.since("c2", f.lastID("c2"))
	f.publish("c2", EventNotice, json.RawMessage(`{"text":"hi"}`))
	select {
	case <-wake:
	default:
		t.Error("a listener was not woken by an event")
	}
	if got := f.lastID("c2"); !strings.HasSuffix(got, ".1") {
		t.Errorf("lastID = %q, want the one event's", got)
	}
}

// FuzzDecode: no body makes the decoders panic, and an accepted body
// holds no unknown field.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"text":"hi"}`, `{"option":1}`, `{"code":"x"}`, `{"text":"a","idempotency_key":"k"}`, ``, `[]`, `{"text":1}`, `{} {}`, `{"option":-1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var send struct {
			Text           string `json:"text"`
			IdempotencyKey string `json:"idempotency_key"`
		}
		_ = decodeBody(data, &send)
		var ans struct {
			Option *int `json:"option"`
		}
		_ = decodeBody(data, &ans)
		var login struct {
			Code string `json:"code"`
		}
		if decodeBody(data, &login) == nil && strings.Contains(string(data), `"text"`) && !strings.Contains(string(data), `"code"`) {
			var m map[string]any
			if json.Unmarshal(data, &m) == nil {
				if _, ok := m["text"]; ok {
					t.Errorf("the login decoder accepted an unknown field: %s", data)
				}
			}
		}
	})
}

// TestApprovalSurvivesRestart: a web approval left pending by a shutdown
// is shown again when the resumed turn asks (the web's events live in
// memory), an approver who cannot read the conversation finds it in
// GET /v1/approvals, and their answer decides it.
func TestApprovalSurvivesRestart(t *testing.T) {
	store := coretest.NewGateStore()
	gates := core.NewGates(core.GatesOptions{Store: store})
	th := thread("alice", "0123456789abcdef01234567")
	req := core.GateRequest{IntentID: "call:x", NodeID: "E1/c1", CallID: "c1", Question: "Write plan.md?", Options: []core.Option{{Label: "Allow once", Approves: true}, {Label: "Deny"}}}

	first, _ := newAdapter(t)
	first.opts.Gates, first.opts.Approvers = gates, []string{"carol"} // the same settings before and after
	ctx, stop := context.WithCancelCause(context.Background())
	asked := make(chan error, 1)
	go func() { _, err := first.Approver(th, "alice")(ctx, req); asked <- err }()
	waitEvent(t, first, th.ID, EventGateInvoked)
	stop(core.ErrShutdown)
	<-asked

	carolToken, carolHash, _ := NewToken()
	second, err := New(Options{Users: map[string]string{carolHash: "carol"}, Hub: intaketest.NewHub(intaketest.NewThreads()),
		History: history{}, Gates: gates, Approvers: []string{"carol"}})
	if err != nil {
		t.Fatal(err)
	}
	answered := make(chan core.GateAnswer, 1)
	go func() { ans, _ := second.Approver(th, "alice")(context.Background(), req); answered <- ans }()
	invoked := waitEvent(t, second, th.ID, EventGateInvoked)
	var g gateData
	_ = json.Unmarshal(invoked.Data, &g)

	srv := httptest.NewServer(second.Handler())
	defer srv.Close()
	call := func(method, path, body string) (int, string) {
		r, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+carolToken)
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if status, body := call("GET", "/v1/approvals", ""); status != 200 || !strings.Contains(body, g.Token) || !strings.Contains(body, th.ID) {
		t.Errorf("carol's approvals = %d %s, want the pending one with its conversation", status, body)
	}
	if status, body := call("POST", "/v1/gates/"+g.Token+"/answer", `{"option": 0}`); status != 200 {
		t.Fatalf("carol's answer = %d %s", status, body)
	}
	if ans := <-answered; !ans.Approved || ans.By != "carol" {
		t.Errorf("the resumed approval = %+v, want approved by carol", ans)
	}
	if _, body := call("GET", "/v1/approvals", ""); strings.Contains(body, g.Token) {
		t.Errorf("a decided approval is still listed: %s", body)
	}
}

// waitEvent waits for an event of typ on conversation id.
func waitEvent(t *testing.T, a *Adapter, id, typ string) Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	last := ""
	for {
		events, _, wake := a.feed.since(id, last)
		for _, e := range events {
			if e.Type == typ {
				return e
			}
			last = e.ID
		}
		select {
		case <-wake:
		case <-ctx.Done():
			t.Fatalf("no %s event on %s", typ, id)
		}
	}
}

// storedGates is the shared store's pending gates, as Pending reads them.
type storedGates []core.Gate

func (s storedGates) GatesOn(_ context.Context, platform string) ([]core.Gate, error) {
	var out []core.Gate
	for _, g := range s {
		if g.Thread.Platform == platform {
			out = append(out, g)
		}
	}
	return out, nil
}

// TestApprovalsFromTheStore: an instance that never saw an approval asked
// (it started after) lists it from the shared store, for the requester
// and the approvers alone; expired ones and a question's form are not
// listed.
func TestApprovalsFromTheStore(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	gate := func(token, platform string, expires time.Time, form *core.Form) core.Gate {
		th := thread("alice", "0123456789abcdef01234567")
		th.Platform = platform
		return core.Gate{Token: token, Thread: th,
			Requester: "alice", Allowed: []string{"carol"}, SelfApprove: true, Question: "Send 5?", State: core.GatePending, Expires: expires, Form: form,
			Options: []core.Option{{Label: "Approve", Approves: true}, {Label: "Deny"}}}
	}
	pending := storedGates{
		gate("later", Platform, now.Add(time.Hour), nil),
		gate("sooner", Platform, now.Add(time.Minute), nil),
		gate("expired", Platform, now.Add(-time.Minute), nil),
		gate("form", Platform, now.Add(time.Hour), &core.Form{}),
		gate("slack", "slack", now.Add(time.Hour), nil),
	}
	users := map[string]string{}
	tokens := map[string]string{}
	for _, name := range []string{"alice", "bob", "carol"} {
		token, hash, err := NewToken()
		if err != nil {
			t.Fatal(err)
		}
		users[hash], tokens[name] = name, token
	}
	a, err := New(Options{Users: users, Hub: intaketest.NewHub(intaketest.NewThreads()), History: history{},
		Gates: core.NewGates(core.GatesOptions{Store: coretest.NewGateStore()}), Approvers: []string{"carol"}, Pending: pending,
		Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	for name, want := range map[string][]string{"alice": {"sooner", "later"}, "carol": {"sooner", "later"}, "bob": nil} {
		r, _ := http.NewRequest("GET", srv.URL+"/v1/approvals", nil)
		r.Header.Set("Authorization", "Bearer "+tokens[name])
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ Approvals []gateData }
		_ = json.NewDecoder(res.Body).Decode(&got)
		res.Body.Close()
		var listed []string
		for _, g := range got.Approvals {
			listed = append(listed, g.Token)
		}
		if !slices.Equal(listed, want) {
			t.Errorf("%s's approvals = %v, want %v", name, listed, want)
		}
	}

	// Alice's page loading the conversation draws its pending approvals
	// again: the stream resumes after them.
	a.created.add("0123456789abcdef01234567", "alice", now)
	r, _ := http.NewRequest("GET", srv.URL+"/v1/conversations/0123456789abcdef01234567", nil)
	r.Header.Set("Authorization", "Bearer "+tokens["alice"])
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	var conv struct{ Approvals []gateData }
	_ = json.NewDecoder(res.Body).Decode(&conv)
	res.Body.Close()
	var shown []string
	for _, g := range conv.Approvals {
		shown = append(shown, g.Token)
	}
	if want := []string{"sooner", "later"}; res.StatusCode != http.StatusOK || !slices.Equal(shown, want) {
		t.Errorf("alice's conversation = %d with approvals %v, want %v", res.StatusCode, shown, want)
	}
}
