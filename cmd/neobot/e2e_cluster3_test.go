package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/adapters/web"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// TestClusterThree: three instances on one PostgreSQL under a steady
// load of Slack threads; one is killed with SIGKILL and another restarted
// gracefully while turns run. Every question is answered once, in its
// thread's order. Then, on the web: a person's limit holds across the
// instances (the 21st message in a minute is refused whichever instance
// takes it), an upload made through one instance is read by a turn run
// through another, and a page that reconnects to another instance with
// its last event ID misses no event.
func TestClusterThree(t *testing.T) {
	w := newClusterWorld(t)
	var mu sync.Mutex
	calls := map[string]int{}
	w.model.Handle(func(r llmtest.Request) llmtest.Reply {
		if r.Model == cheapModel {
			return llmtest.Text(`{"facts":[]}`)
		}
		last := r.Messages[len(r.Messages)-1].Content
		if q := question.FindString(last); q != "" {
			mu.Lock()
			calls[q]++
			mu.Unlock()
			return llmtest.Text("answer " + q)
		}
		if strings.Contains(last, "read the upload") {
			if strings.Contains(last, "remember the milk") {
				return llmtest.Text("The upload says: remember the milk.")
			}
			return llmtest.Text("I could not read the upload.")
		}
		return llmtest.Text("ok")
	})
	var alice, bob string
	var users []string
	for _, name := range []string{"alice", "bob"} {
		token, hash, err := web.NewToken()
		if err != nil {
			t.Fatal(err)
		}
		users = append(users, name+"="+hash)
		if name == "alice" {
			alice = token
		} else {
			bob = token
		}
	}
	w.env["NEO_WEB_USERS"] = strings.Join(users, ",")
	webs := map[int]*webWorld{}
	start := func(n, conns int) *process {
		addr := freeAddr(t)
		w.env["NEO_WEB_ADDR"] = addr
		webs[n] = &webWorld{base: "http://" + addr, alice: alice, bob: bob, env: w.env}
		p := w.start(t, conns)
		waitHTTP(t, webs[n].base+"/v1/openapi.json", p)
		return p
	}
	p1, p2, p3 := start(1, 1), start(2, 2), start(3, 3)
	output := func() string {
		return "1: " + p1.output.String() + "\n2: " + p2.output.String() + "\n3: " + p3.output.String()
	}

	// The steady load: a round of questions in each of the threads, each
	// round journaled (acked) before the next.
	const threads = 24
	roots := make([]string, threads)
	round := func(k int) {
		var sent []slacktest.Delivery
		for i := range threads {
			d := w.slack.Mention(slacktest.Msg{User: fmt.Sprintf("U%03d", i), Text: fmt.Sprintf("q-%d-%d", i, k), ThreadTS: roots[i]})
			if k == 0 {
				roots[i] = d.TS
			}
			sent = append(sent, d)
		}
		if k > 0 {
			return // acked by whichever instance lives; a killed one's are redelivered
		}
		for _, d := range sent {
			if _, err := w.slack.WaitAck(waitCtx(t), d); err != nil {
				t.Fatalf("round %d: %v\n%s", k, err, output())
			}
		}
	}
	answered := func(rounds int) {
		t.Helper()
		if _, err := w.slack.WaitMessages(waitCtx(t), func(ms []slacktest.Message) bool {
			_, n := answersByThread(ms)
			return n >= threads*rounds
		}); err != nil {
			_, n := answersByThread(w.slack.Messages())
			t.Fatalf("%d of %d answers: %v\n%s", n, threads*rounds, err, output())
		}
	}
	round(0)
	answered(1)
	round(1)
	p1.kill() // SIGKILL while round 1 runs
	answered(2)
	round(2)
	p2.stop(t) // a graceful restart while round 2 runs
	p2 = start(2, 2)
	answered(3)
	round(3)
	answered(4)

	// The web, through instances 2 (restarted) and 3. Bob's share: 20
	// messages a minute, taken by either instance, then none by either.
	for i := range 20 {
		ww := webs[2+i%2]
		if got := ww.call(t, bob, "POST", "/v1/conversations", map[string]string{"message": fmt.Sprintf("bob %d", i)}, nil); got != http.StatusCreated {
			t.Fatalf("bob's message %d through instance %d = %d, want 201", i+1, 2+i%2, got)
		}
	}
	for _, n := range []int{2, 3} {
		var refused struct{ Limit string }
		if got := webs[n].call(t, bob, "POST", "/v1/conversations", map[string]string{"message": "bob 21"}, &refused); got != http.StatusTooManyRequests || refused.Limit != "messages per minute" {
			t.Errorf("bob's 21st message through instance %d = %d %+v, want 429 for the messages per minute", n, got, refused)
		}
	}

	// An upload made through instance 2, sent and read through instance 3.
	req, _ := http.NewRequest("POST", webs[2].base+"/v1/uploads?name=list.txt", bytes.NewReader([]byte("remember the milk")))
	req.Header.Set("Authorization", "Bearer "+alice)
	req.Header.Set("Content-Type", "text/plain")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var up struct{ ID string }
	_ = json.NewDecoder(res.Body).Decode(&up)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("upload through instance 2 = %d", res.StatusCode)
	}
	var conv struct{ ID string }
	if got := webs[3].call(t, alice, "POST", "/v1/conversations", map[string]any{}, &conv); got != http.StatusCreated {
		t.Fatalf("alice's conversation through instance 3 = %d", got)
	}
	page := webs[3].follow(t, alice, conv.ID, "")
	if got := webs[3].call(t, alice, "POST", "/v1/conversations/"+conv.ID+"/messages", map[string]any{"text": "read the upload", "files": []string{up.ID}}, nil); got != http.StatusAccepted {
		t.Fatalf("send the upload through instance 3 = %d, want 202", got)
	}
	e, _ := page.next(t, web.EventAnswer)
	if text(e) != "The upload says: remember the milk." {
		t.Errorf("the turn on instance 3 answered %q, want it to have read the upload made through instance 2", text(e))
	}

	// The page reconnects to instance 2 with the last event it saw, and
	// gets everything after it: the next message and its answer, no
	// reset.
	page.cancel()
	if got := webs[3].call(t, alice, "POST", "/v1/conversations/"+conv.ID+"/messages", map[string]string{"text": "q-900-0"}, nil); got != http.StatusAccepted {
		t.Fatalf("alice's next message = %d", got)
	}
	again := webs[2].follow(t, alice, conv.ID, e.ID)
	e2, seen := again.next(t, web.EventAnswer)
	if text(e2) != "answer q-900-0" || len(seen) == 0 || seen[0].Type != web.EventMessage || text(seen[0]) != "q-900-0" ||
		slices.ContainsFunc(seen, func(e web.Event) bool { return e.Type == web.EventReset }) {
		t.Errorf("the page resumed on instance 2 after %s saw %+v, want alice's message first, then the answer, and no reset", e.ID, seen)
	}

	p2.stop(t)
	p3.stop(t)
	by, _ := answersByThread(w.slack.Messages())
	for i, root := range roots {
		var want []string
		for k := range 4 {
			want = append(want, fmt.Sprintf("q-%d-%d", i, k))
		}
		if got := by[root]; !slices.Equal(got, want) {
			t.Errorf("thread %d answered %v, want each question once, in order", i, got)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range threads {
		if n := calls[fmt.Sprintf("q-%d-0", i)]; n != 1 {
			t.Errorf("q-%d-0 reached the model %d times, want once", i, n)
		}
	}
}
