package web

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/internal/intake/intaketest"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
)

// pipe is a Relay that hands each note to every instance, the sender's
// included, as the database's notifications do.
type pipe struct {
	mu sync.Mutex
	to []*Adapter
}

func (p *pipe) Relay(ctx context.Context, note []byte) error {
	p.mu.Lock()
	to := p.to
	p.mu.Unlock()
	for _, a := range to {
		if err := a.Receive(ctx, note); err != nil {
			return err
		}
	}
	return nil
}

// instance is one neobot's web, serving on loopback until the test ends.
type instance struct {
	a    *Adapter
	base string
}

// twoInstances starts two webs for alice that relay to each other and
// share one gate store, and returns them with alice's token.
func twoInstances(t *testing.T) (x, y instance, token string, gates *core.Gates) {
	t.Helper()
	token, hash, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	gates = core.NewGates(core.GatesOptions{Store: coretest.NewGateStore(), SelfApprove: true})
	pipes := []*pipe{{}, {}}
	var inst []instance
	for i := range 2 {
		a, err := New(Options{Users: map[string]string{hash: "alice"}, Hub: intaketest.NewHub(intaketest.NewThreads()),
			History: history{}, Gates: gates, Relay: pipes[i]})
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- a.Serve(ctx, ln) }()
		t.Cleanup(func() {
			stop()
			if err := <-done; err != nil {
				t.Errorf("Serve = %v", err)
			}
		})
		inst = append(inst, instance{a: a, base: "http://" + ln.Addr().String()})
	}
	pipes[0].to, pipes[1].to = []*Adapter{inst[0].a, inst[1].a}, []*Adapter{inst[0].a, inst[1].a}
	return inst[0], inst[1], token, gates
}

func (in instance) call(t *testing.T, token, method, path string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(method, in.base+path, strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if out != nil {
		_ = json.NewDecoder(res.Body).Decode(out)
	}
	return res.StatusCode
}

// stream reads a conversation's event stream; next returns the types of
// the events up to and including the first of typ.
type stream struct {
	events chan Event
}

func (in instance) follow(t *testing.T, token, id string, lastID ...string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", in.base+"/v1/conversations/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if len(lastID) > 0 {
		req.Header.Set("Last-Event-ID", lastID[0])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("events of %s: %s", id, res.Status)
	}
	s := &stream{events: make(chan Event, 64)}
	go func() {
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		var e Event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				e.Type = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				e.Data = json.RawMessage(strings.TrimPrefix(line, "data: "))
			case line == "" && e.Type != "":
				s.events <- e
				e = Event{}
			}
		}
	}()
	return s
}

func (s *stream) next(t *testing.T, typ string) []string {
	t.Helper()
	var seen []string
	timeout := time.After(20 * time.Second)
	for {
		select {
		case e := <-s.events:
			seen = append(seen, e.Type)
			if e.Type == typ {
				return seen
			}
		case <-timeout:
			t.Fatalf("no %s event; saw %v", typ, seen)
		}
	}
}

// TestRelayJoinsTheInstances: a conversation created on one instance is
// its owner's on the other; what a turn shows on one reaches a browser
// following the conversation on the other, its final answer without the
// pieces streamed before it; an approval asked on one is listed on the
// other; an event too big to relay has the browser reload.
func TestRelayJoinsTheInstances(t *testing.T) {
	x, y, token, gates := twoInstances(t)
	var created struct{ ID string }
	if code := x.call(t, token, "POST", "/v1/conversations", &created); code != http.StatusCreated {
		t.Fatalf("create = %d", code)
	}
	var list struct{ Conversations []Summary }
	for deadline := time.Now().Add(20 * time.Second); len(list.Conversations) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the other instance never listed the new conversation")
		}
		time.Sleep(time.Millisecond) // polling the API while the note is on its way, not timing it
		y.call(t, token, "GET", "/v1/conversations", &list)
	}
	if list.Conversations[0].ID != created.ID {
		t.Fatalf("the other instance lists %+v, want the new conversation", list.Conversations)
	}

	s := y.follow(t, token, created.ID)
	th := thread("alice", created.ID)
	rep := x.a.Reporter(th)
	_ = rep.Status(t.Context(), "Thinking…")
	live, _ := rep.(core.Streamer).StreamAnswer(t.Context())
	_ = live.Write(t.Context(), "The ans")
	_ = live.Close(t.Context(), "The answer.")
	if seen := s.next(t, EventAnswer); strings.Join(seen, " ") != "status answer" {
		t.Errorf("the other instance's browser saw %v, want the status and the final answer", seen)
	}

	g, _, err := gates.Open(t.Context(), core.GateRequest{Thread: th, IntentID: "i1", NodeID: "n1", Question: "Send 5?", Options: []core.Option{{Label: "Approve", Approves: true}, {Label: "Deny"}}, Requester: "alice"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (gateUI{x.a}).PostGate(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	if seen := s.next(t, EventGateInvoked); len(seen) != 1 {
		t.Errorf("before the approval the browser saw %v", seen)
	}
	var approvals struct{ Approvals []gateData }
	y.call(t, token, "GET", "/v1/approvals", &approvals)
	if len(approvals.Approvals) != 1 || approvals.Approvals[0].Token != g.Token {
		t.Errorf("the other instance lists approvals %+v, want the one asked", approvals.Approvals)
	}

	_ = rep.Say(t.Context(), strings.Repeat("long ", 3000))
	s.next(t, EventReset)
}

// feedHolds waits until a's feed of conv holds n events, and returns them.
func feedHolds(t *testing.T, a *Adapter, conv string, n int) []Event {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		events, _, wake := a.feed.since(conv, "")
		if len(events) >= n {
			return events
		}
		select {
		case <-wake:
		case <-timeout:
			t.Fatalf("the feed holds %d events, want %d", len(events), n)
		}
	}
}

// TestRelayResumesOnAnotherInstance: a browser that read a conversation
// on one instance and reconnects to the other, with the last event ID it
// saw, gets every event after it, and no reset: the instances give an
// event the same ID. A piece of an answer only the turn's instance
// streamed resumes after the event it followed.
func TestRelayResumesOnAnotherInstance(t *testing.T) {
	x, y, token, _ := twoInstances(t)
	var created struct{ ID string }
	if code := x.call(t, token, "POST", "/v1/conversations", &created); code != http.StatusCreated {
		t.Fatalf("create = %d", code)
	}
	conv := created.ID
	rep := x.a.Reporter(thread("alice", conv))
	_ = rep.Status(t.Context(), "one")
	seen := feedHolds(t, x.a, conv, 1)
	live, _ := rep.(core.Streamer).StreamAnswer(t.Context())
	_ = live.Write(t.Context(), "The ans")
	delta := feedHolds(t, x.a, conv, 2)[1]
	if delta.Type != EventAnswerDelta {
		t.Fatalf("x's feed: %+v, want the piece of the answer second", delta)
	}
	_ = live.Close(t.Context(), "The answer.")
	_ = rep.Status(t.Context(), "two")
	feedHolds(t, y.a, conv, 3) // status, answer, status
	for _, last := range []string{seen[0].ID, delta.ID} {
		events, reset, _ := y.a.feed.since(conv, last)
		var types []string
		for _, e := range events {
			types = append(types, e.Type+":"+text(e))
		}
		if reset || strings.Join(types, " ") != "answer:The answer. status:two" {
			t.Errorf("resumed on the other instance after %s: %v, reset %v; want the answer and status two, no reset", last, types, reset)
		}
	}
}

// TestResumeBeforeTheEventArrives: a page that saw an event on the
// instance that showed it first reconnects to another instance before
// the database delivered the event there; the stream waits for it and
// goes on after it, with no reset.
func TestResumeBeforeTheEventArrives(t *testing.T) {
	x, y, token, _ := twoInstances(t)
	var created struct{ ID string }
	if code := x.call(t, token, "POST", "/v1/conversations", &created); code != http.StatusCreated {
		t.Fatalf("create = %d", code)
	}
	conv := created.ID
	y.a.created.add(conv, "alice", time.Now()) // as the creation's note does
	// Shown on x; on its way to y.
	first := note{Conv: conv, Type: EventStatus, Data: json.RawMessage(`{"text":"one"}`), ID: x.a.feed.mint()}
	x.a.showHere(first)
	s := y.follow(t, token, conv, first.ID)
	for _, n := range []note{first, {Conv: conv, Type: EventStatus, Data: json.RawMessage(`{"text":"two"}`), ID: x.a.feed.mint()}} {
		raw, _ := json.Marshal(n)
		if err := y.a.Receive(t.Context(), raw); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case e := <-s.events:
		if e.Type != EventStatus || text(e) != "two" {
			t.Errorf("the resumed stream's first event = %s %s, want status two (after the one the page saw, no reset)", e.Type, e.Data)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no event on the resumed stream")
	}
}

// TestStopOnAnotherInstance: the owner presses Stop through one instance
// while the turn runs on the other: the words written so far stay,
// marked stopped, on the instance running the turn.
func TestStopOnAnotherInstance(t *testing.T) {
	x, y, token, _ := twoInstances(t)
	var created struct{ ID string }
	if code := x.call(t, token, "POST", "/v1/conversations", &created); code != http.StatusCreated {
		t.Fatalf("create = %d", code)
	}
	conv := created.ID
	y.a.created.add(conv, "alice", time.Now()) // as the creation's note does
	s, _ := y.a.Reporter(thread("alice", conv)).(core.Streamer).StreamAnswer(t.Context())
	_ = s.Write(t.Context(), "Rotating the key takes")
	if code := x.call(t, token, "POST", "/v1/conversations/"+conv+"/stop", nil); code != http.StatusAccepted {
		t.Fatalf("stop through x = %d", code)
	}
	_ = s.Abort(t.Context())
	// Abort's event reaches y's feed through the relay: wait for it.
	var end Event
	for end.Type == "" {
		events, _, wake := y.a.feed.since(conv, "")
		for _, e := range events {
			if e.Type == EventAnswerStopped || e.Type == EventAnswerRetract {
				end = e
			}
		}
		if end.Type != "" {
			break
		}
		select {
		case <-wake:
		case <-time.After(20 * time.Second):
			t.Fatal("the answer never ended on y")
		}
	}
	if end.Type != EventAnswerStopped || text(end) != "Rotating the key takes" {
		t.Errorf("the turn's instance ended the answer with %s %s, want answer.stopped with the words", end.Type, end.Data)
	}
}
