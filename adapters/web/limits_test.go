package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/internal/intake/intaketest"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/quota"
)

// limitedServer serves one adapter whose users alice and bob share the
// quota limits.
func limitedServer(t *testing.T, limits quota.Limits) (srv *httptest.Server, alice, bob string, hub *intaketest.Hub) {
	t.Helper()
	alice, aliceHash, _ := NewToken()
	bob, bobHash, _ := NewToken()
	hub = intaketest.NewHub(intaketest.NewThreads())
	clock := coretest.NewClock(time.Date(2026, 11, 26, 22, 0, 0, 0, time.UTC))
	a, err := New(Options{Users: map[string]string{aliceHash: "alice", bobHash: "bob"}, Hub: hub, History: history{},
		Quota: quota.New(limits, clock), Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	srv = httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	return srv, alice, bob, hub
}

func call(t *testing.T, srv *httptest.Server, token, method, path, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func create(t *testing.T, srv *httptest.Server, token string) string {
	t.Helper()
	res := call(t, srv, token, "POST", "/v1/conversations", `{}`)
	defer res.Body.Close()
	var out struct{ ID string }
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %v", res.StatusCode, err)
	}
	return out.ID
}

// checkLimited checks res is a 429 naming limit, with a Retry-After.
func checkLimited(t *testing.T, res *http.Response, limit string) {
	t.Helper()
	defer res.Body.Close()
	var body struct {
		Error      string `json:"error"`
		Limit      string `json:"limit"`
		RetryAfter int    `json:"retry_after"`
	}
	_ = json.NewDecoder(res.Body).Decode(&body)
	after, err := strconv.Atoi(res.Header.Get("Retry-After"))
	if res.StatusCode != http.StatusTooManyRequests || err != nil || after < 1 || body.Limit != limit || body.RetryAfter != after || body.Error == "" {
		t.Errorf("answer = %d, Retry-After %q, %+v; want 429 naming %q with Retry-After matching retry_after", res.StatusCode, res.Header.Get("Retry-After"), body, limit)
	}
}

// TestSendOverTheRate: past the per-minute rate a message is answered 429
// with Retry-After and the limit named; nothing is journaled, and another
// user is not held back.
func TestSendOverTheRate(t *testing.T) {
	srv, alice, bob, hub := limitedServer(t, quota.Limits{PerMinute: 3})
	id := create(t, srv, alice)
	for i := range 3 {
		res := call(t, srv, alice, "POST", "/v1/conversations/"+id+"/messages", fmt.Sprintf(`{"text":"hello %d"}`, i))
		res.Body.Close()
		if res.StatusCode != http.StatusAccepted {
			t.Fatalf("message %d: %d, want 202", i+1, res.StatusCode)
		}
	}
	for range 5 {
		checkLimited(t, call(t, srv, alice, "POST", "/v1/conversations/"+id+"/messages", `{"text":"more"}`), quota.LimitRate)
	}
	checkLimited(t, call(t, srv, alice, "POST", "/v1/conversations", `{"message":"a new one"}`), quota.LimitRate)
	res := call(t, srv, bob, "POST", "/v1/conversations", `{"message":"hi"}`)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Errorf("bob's message: %d, want 201", res.StatusCode)
	}
	if n := len(hub.Journaled()); n != 4 {
		t.Errorf("journaled %d messages, want 4 (alice's three, bob's one)", n)
	}
	hub.WaitTurns(t)
}

// TestSendOverTheDailyBytes: past the bytes a day, 429 naming that limit.
func TestSendOverTheDailyBytes(t *testing.T) {
	srv, alice, _, hub := limitedServer(t, quota.Limits{PerMinute: -1, BytesPerDay: 64 << 10})
	id := create(t, srv, alice)
	big := `{"text":"` + strings.Repeat("x", 30<<10) + `"}`
	for i := range 2 {
		res := call(t, srv, alice, "POST", "/v1/conversations/"+id+"/messages", big)
		res.Body.Close()
		if res.StatusCode != http.StatusAccepted {
			t.Fatalf("message %d: %d, want 202", i+1, res.StatusCode)
		}
	}
	checkLimited(t, call(t, srv, alice, "POST", "/v1/conversations/"+id+"/messages", big), quota.LimitBytes)
	hub.WaitTurns(t)
}

// TestUploadsCountInDailyBytes: an upload counts in its owner's bytes of
// the day, as text does: past them, 429 naming that limit, for uploads
// and for messages.
func TestUploadsCountInDailyBytes(t *testing.T) {
	srv, alice, bob, _ := limitedServer(t, quota.Limits{PerMinute: -1, BytesPerDay: 64 << 10})
	upload := func(token string) *http.Response {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/uploads?name=notes.txt", strings.NewReader(strings.Repeat("x", 40<<10)))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "text/plain")
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := upload(alice); res.StatusCode != http.StatusCreated {
		t.Fatalf("first upload: %d, want 201", res.StatusCode)
	}
	checkLimited(t, upload(alice), quota.LimitBytes)
	id := create(t, srv, alice)
	checkLimited(t, call(t, srv, alice, "POST", "/v1/conversations/"+id+"/messages", `{"text":"`+strings.Repeat("y", 30<<10)+`"}`), quota.LimitBytes)
	if res := upload(bob); res.StatusCode != http.StatusCreated {
		t.Errorf("another user's upload: %d, want 201", res.StatusCode)
	}
}

// TestEventStreamsPerUser: a user may hold Streams live event streams;
// the next is answered 429, and one closing frees its place.
func TestEventStreamsPerUser(t *testing.T) {
	srv, alice, bob, _ := limitedServer(t, quota.Limits{Streams: 2})
	id := create(t, srv, alice)
	open := func(token, id string) *http.Response {
		return call(t, srv, token, "GET", "/v1/conversations/"+id+"/events", "")
	}
	first, second := open(alice, id), open(alice, id)
	if first.StatusCode != http.StatusOK || second.StatusCode != http.StatusOK {
		t.Fatalf("two streams: %d, %d, want 200s", first.StatusCode, second.StatusCode)
	}
	defer second.Body.Close()
	checkLimited(t, open(alice, id), quota.LimitStreams)
	bobs := open(bob, create(t, srv, bob))
	bobs.Body.Close()
	if bobs.StatusCode != http.StatusOK {
		t.Errorf("bob's stream: %d, want 200", bobs.StatusCode)
	}
	first.Body.Close()
	// The server notices the closed stream at its next write or when the
	// connection's context ends; ask until it has.
	for {
		res := open(alice, id)
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			break
		}
		if res.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("after closing one: %d, want 200 (or 429 until the close is seen)", res.StatusCode)
		}
	}
}

// TestFeedBytes: the feed keeps at most its byte caps, per conversation
// and overall, however large the events; a client resuming from an event
// no longer kept is told to reload.
func TestFeedBytes(t *testing.T) {
	f := newFeed(time.Unix(1, 0), 1<<20, 256<<10)
	kept := func(conv string) (n int) {
		evs, _, _ := f.since(conv, "")
		for _, e := range evs {
			n += len(e.Data)
		}
		return n
	}
	event := json.RawMessage(`{"text":"` + strings.Repeat("x", 32<<10) + `"}`)
	first := ""
	for i := range 100 {
		f.publish("c1", EventMessage, event)
		if i == 0 {
			first = f.lastID("c1")
		}
	}
	if n := kept("c1"); n > 256<<10 || n == 0 {
		t.Errorf("one conversation keeps %d bytes, want at most 256 KiB", n)
	}
	if _, reset, _ := f.since("c1", first); !reset {
		t.Error("resuming from a dropped event does not reset")
	}
	for i := range 100 {
		f.publish(fmt.Sprint("c", i), EventMessage, event)
	}
	total := 0
	for i := range 100 {
		total += kept(fmt.Sprint("c", i))
	}
	if total > 1<<20 {
		t.Errorf("the feed keeps %d bytes, want at most 1 MiB", total)
	}
	huge := json.RawMessage(`{"text":"` + strings.Repeat("y", 2<<20) + `"}`)
	f.publish("c7", EventAnswer, huge)
	if evs, _, _ := f.since("c7", ""); len(evs) != 1 || len(evs[0].Data) != len(huge) {
		t.Errorf("an event over every cap: kept %d events, want it alone (the newest is always kept)", len(evs))
	}
}

// recorder is a ResponseWriter that keeps the size of its largest write,
// and calls done at its second flush: the first opens the stream, the
// second sends the backlog.
type recorder struct {
	*httptest.ResponseRecorder
	largest int
	flushes int
	done    func()
}

func (r *recorder) WriteString(s string) (int, error) {
	r.largest = max(r.largest, len(s))
	return r.ResponseRecorder.WriteString(s)
}

func (r *recorder) Flush() {
	r.ResponseRecorder.Flush()
	if r.flushes++; r.flushes == 2 {
		r.done()
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.largest = max(r.largest, len(p))
	return r.ResponseRecorder.Write(p)
}

// TestStreamWritesEventByEvent: opening a stream on a long backlog writes
// it event by event, never the whole backlog copied into one string.
func TestStreamWritesEventByEvent(t *testing.T) {
	a, token := newAdapter(t)
	id := "0123456789abcdef01234567"
	a.created.add(id, "alice", time.Now())
	text := strings.Repeat("x", 16<<10)
	for range 40 {
		a.show(id, EventStatus, textData{text})
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req := httptest.NewRequest("GET", "/v1/conversations/"+id+"/events", nil).WithContext(ctx)
	req.Header.Set("Authorization", "Bearer "+token)
	w := &recorder{ResponseRecorder: httptest.NewRecorder(), done: cancel}
	a.Handler().ServeHTTP(w, req)
	sc := bufio.NewScanner(strings.NewReader(w.Body.String()))
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "event: ") {
			n++
		}
	}
	if n != 40 {
		t.Fatalf("the stream sent %d events, want the 40 of the backlog", n)
	}
	if w.largest > 20<<10 {
		t.Errorf("largest write %d bytes, want no more than one event's (about 16 KiB)", w.largest)
	}
}

// TestCreatedPerUser: one user creating conversations in a loop keeps
// only their own newest listed; another user's new conversation still
// opens.
func TestCreatedPerUser(t *testing.T) {
	srv, alice, bob, _ := limitedServer(t, quota.Limits{})
	bobs := create(t, srv, bob)
	for range 3 * maxConversations {
		create(t, srv, alice)
	}
	res := call(t, srv, bob, "GET", "/v1/conversations/"+bobs, "")
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("bob's new conversation after alice created %d: %d, want 200", 3*maxConversations, res.StatusCode)
	}
	res = call(t, srv, alice, "GET", "/v1/conversations", "")
	defer res.Body.Close()
	var list struct{ Conversations []Summary }
	_ = json.NewDecoder(res.Body).Decode(&list)
	if len(list.Conversations) != maxCreatedPerUser {
		t.Errorf("alice lists %d conversations, want her newest %d", len(list.Conversations), maxCreatedPerUser)
	}
}
