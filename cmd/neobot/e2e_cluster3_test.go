package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/adapters/web"
	"github.com/neobot/neobot/core/delegate/delegatetest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// TestClusterThree: three instances on one PostgreSQL under a steady
// load of Slack threads, with web pages, uploads, a spend's approval and
// a stop on the side; one instance is killed with SIGKILL and another
// restarted gracefully while turns run. Every question is answered once,
// in its thread's order. On the web: a person's live streams are
// counted across the instances, and those of the killed instance end
// with it; a page following a conversation on the killed instance
// resumes on another with its last event ID and misses no event; an
// upload made through the killed instance is read by a turn through
// another; a Stop sent through one instance stops the turn running on
// another; a spend asked before the graceful restart is listed and
// approved through the restarted instance, and spent once; a person's
// limit holds across the instances (the 21st message in a minute is
// refused whichever instance takes it). In Slack, spends wait on their
// approvals while the approver clicks through the instance being killed
// (the kill comes with the first click's ack) and through the one
// restarting: a click acked is stored, one never acked is clicked again
// through another instance, each approved spend is spent and answered
// once, and a click by someone who may not approve is refused wherever
// it lands.
func TestClusterThree(t *testing.T) {
	w := newClusterWorld(t)
	w.env["NEO_WEB_SPEND_USERS"] = "alice"
	w.daemon.Script(delegatetest.Intent{
		Match:  "5 PAX",
		Gates:  []delegatetest.Gate{{NodeID: "n1", Question: "Approve spend of 5 PAX to 0xabc?", Options: []string{"approve", "deny"}}},
		Answer: "settled: tx 0xfeed",
	})
	const spends = 4 // Slack spends, each to its own 0xs<k>
	for k := range spends {
		w.daemon.Script(delegatetest.Intent{
			Match:  fmt.Sprintf("to 0xs%d", k),
			Gates:  []delegatetest.Gate{{NodeID: "n1", Question: fmt.Sprintf("Approve spend of 7 PAX to 0xs%d?", k), Options: []string{"approve", "deny"}}},
			Answer: fmt.Sprintf("settled: tx 0xs%d", k),
		})
	}
	var mu sync.Mutex
	calls := map[string]int{}
	w.model.Handle(func(r llmtest.Request) llmtest.Reply {
		if r.Model == cheapModel {
			return llmtest.Text(`{"facts":[]}`)
		}
		m := r.Messages[len(r.Messages)-1]
		last := m.Content
		switch {
		case m.Role == "tool" && strings.Contains(last, "0xfeed"):
			return llmtest.Text("Done: 5 PAX sent (tx 0xfeed).")
		case m.Role == "tool" && strings.Contains(last, "settled: tx 0xs"):
			return llmtest.Text("Done: 7 PAX sent (tx " + slackSpend.FindString(last) + ").")
		case m.Role == "tool":
			return llmtest.Text("The spend did not go through: " + last)
		case strings.Contains(last, "send 5 PAX"):
			return llmtest.Calls(llmtest.Call("c1", "core_execute", `{"intent":"send 5 PAX to 0xabc"}`))
		case strings.Contains(last, "send 7 PAX"):
			return llmtest.Calls(llmtest.Call("c1", "core_execute", `{"intent":"send 7 PAX to `+slackSpend.FindString(last)+`"}`))
		case strings.Contains(last, "write an essay"):
			return llmtest.Text(stoppableAnswer).Streamed(8, 40*time.Millisecond)
		case strings.Contains(last, "read the upload"):
			if strings.Contains(last, "remember the milk") {
				return llmtest.Text("The upload says: remember the milk.")
			}
			return llmtest.Text("I could not read the upload.")
		}
		if q := question.FindString(last); q != "" {
			mu.Lock()
			calls[q]++
			mu.Unlock()
			return llmtest.Text("answer " + q)
		}
		return llmtest.Text("ok")
	})
	tokens := map[string]string{}
	var users []string
	for _, name := range []string{"alice", "bob", "carol"} {
		token, hash, err := web.NewToken()
		if err != nil {
			t.Fatal(err)
		}
		users = append(users, name+"="+hash)
		tokens[name] = token
	}
	alice, bob, carol := tokens["alice"], tokens["bob"], tokens["carol"]
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
	// create makes a conversation through instance n, known to every
	// instance up when it returns.
	create := func(n int, token string) string {
		t.Helper()
		var conv struct{ ID string }
		if got := webs[n].call(t, token, "POST", "/v1/conversations", map[string]any{}, &conv); got != http.StatusCreated {
			t.Fatalf("create a conversation through instance %d = %d", n, got)
		}
		for k, ww := range webs {
			if k != n {
				known(t, ww, token, conv.ID, output)
			}
		}
		return conv.ID
	}
	send := func(n int, token, conv string, body any) {
		t.Helper()
		if got := webs[n].call(t, token, "POST", "/v1/conversations/"+conv+"/messages", body, nil); got != http.StatusAccepted {
			t.Fatalf("send %v through instance %d = %d, want 202\n%s", body, n, got, output())
		}
	}

	// Bob's live streams, 4 at most, are counted across the instances.
	streamsOf := create(1, bob)
	for _, n := range []int{1, 1, 2, 3} {
		if got, _ := openStream(t, webs[n], bob, streamsOf); got != http.StatusOK {
			t.Fatalf("bob's stream through instance %d = %d, want 200", n, got)
		}
	}
	if got, limit := openStream(t, webs[2], bob, streamsOf); got != http.StatusTooManyRequests || limit != "live event streams" {
		t.Errorf("bob's fifth stream, through instance 2 = %d %q; want 429 for the live event streams", got, limit)
	}

	// Alice's upload through instance 1 (to be killed); her page follows
	// a conversation on instance 1.
	up := upload(t, webs[1], alice, "list.txt", "remember the milk")
	followed := create(1, alice)
	page := webs[1].follow(t, alice, followed, "")

	// A spend asked through instance 3, waiting on its approval.
	spend := create(3, alice)
	spendPage := webs[3].follow(t, alice, spend, "")
	send(3, alice, spend, map[string]string{"text": "send 5 PAX to 0xabc"})
	invoked, _ := spendPage.next(t, web.EventGateInvoked)
	var gate struct{ Token string }
	_ = json.Unmarshal(invoked.Data, &gate)

	// A turn through instance 3, stopped through instance 2 while its
	// answer streams: the words written so far are kept, and read
	// through instance 2.
	stopped := create(3, alice)
	stoppedPage := webs[3].follow(t, alice, stopped, "")
	send(3, alice, stopped, map[string]string{"text": "write an essay"})
	stoppedPage.next(t, web.EventAnswerDelta)
	if got := webs[2].call(t, alice, "POST", "/v1/conversations/"+stopped+"/stop", nil, nil); got != http.StatusAccepted {
		t.Fatalf("stop through instance 2 = %d, want 202", got)
	}
	if e, seen := stoppedPage.next(t, web.EventNotice); !strings.HasPrefix(text(e), "Stopped.") {
		t.Errorf("the stopped turn's page saw %+v, want the notice that it stopped", seen)
	}
	if kept := webAnswers(t, webs[2], alice, stopped, 1, output); !strings.HasPrefix(kept[0], "This answer goes on") || len(kept[0]) >= len(stoppableAnswer) {
		t.Errorf("the stopped answer, read through instance 2, holds %d characters (%.40q…); want the part written before the stop", len(kept[0]), kept[0])
	}

	// The steady load: a round of questions in each of the Slack threads,
	// each round journaled (acked) before the next, and in each of
	// Carol's web conversations, sent through the instances in turn.
	const threads, convs = 24, 4
	roots := make([]string, threads)
	loads := make([]string, convs)
	for j := range loads {
		loads[j] = create(1+j%3, carol)
	}
	round := func(k int) {
		live := slices.Sorted(maps.Keys(webs))
		for j, conv := range loads {
			send(live[(j+k)%len(live)], carol, conv, map[string]string{"text": fmt.Sprintf("q-%d-%d", 910+j, k)})
		}
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
	send(2, alice, followed, map[string]string{"text": "q-901-0"})
	seenLast, _ := page.next(t, web.EventAnswer)

	// Alice's Slack spends, each in a thread of its own, waiting on its
	// approval; Carol approves, Mallory may not.
	spendTS := make([]string, spends)
	gates := make([]slacktest.Message, spends)
	for k := range spends {
		spendTS[k] = w.slack.Mention(slacktest.Msg{User: "UALICE", Text: fmt.Sprintf("send 7 PAX to 0xs%d", k)}).TS
	}
	for k, ts := range spendTS {
		g, err := w.slack.WaitMessage(waitCtx(t), func(m slacktest.Message) bool {
			return m.FromBot() && !m.Ephemeral && m.ThreadTS == ts && len(m.Buttons()) == 2
		})
		if err != nil {
			t.Fatalf("no approval for spend %d: %v\n%s", k, err, output())
		}
		gates[k] = g
	}
	type click struct {
		d    slacktest.Delivery
		user string
		gate int
	}
	var clicks []*click
	clickOn := func(user string, gate int) *click {
		c := &click{d: w.slack.Click(user, gates[gate], 0), user: user, gate: gate}
		clicks = append(clicks, c)
		return c
	}
	// settle waits until each click is acked; one whose connection closed
	// unacked Slack shows as failed, and the person clicks again.
	reclicked := 0
	settle := func(cs ...*click) {
		t.Helper()
		for _, c := range cs {
			for {
				_, err := w.slack.WaitAckOrClose(waitCtx(t), c.d)
				if err == nil {
					break
				}
				if !errors.Is(err, slacktest.ErrUnacked) {
					t.Fatalf("%s's click on spend %d: %v\n%s", c.user, c.gate, err, output())
				}
				reclicked++
				c.d = w.slack.Click(c.user, gates[c.gate], 0)
			}
		}
	}

	round(1)
	// Clicks through instance 1, SIGKILLed the moment Slack gets the
	// first of their acks, while round 1 runs.
	var (
		clickMu sync.Mutex
		armed   atomic.Bool
	)
	ours := map[string]bool{}
	down := make(chan struct{})
	w.slack.OnAck(func(a slacktest.Ack) {
		clickMu.Lock()
		mine := ours[a.EnvelopeID]
		clickMu.Unlock()
		if mine && armed.CompareAndSwap(true, false) {
			p1.kill()
			close(down)
		}
	})
	armed.Store(true)
	w.slack.Via(1)
	clickMu.Lock()
	atKill := []*click{clickOn("UCAROL", 0), clickOn("UMALLORY", 1), clickOn("UCAROL", 1)}
	for _, c := range atKill {
		ours[c.d.EnvelopeID] = true
	}
	clickMu.Unlock()
	select {
	case <-down:
	case <-waitCtx(t).Done():
		t.Fatalf("instance 1 acked none of the clicks\n%s", output())
	}
	killed := time.Now()
	w.slack.Via(0)
	delete(webs, 1)
	settle(atKill...)
	answered(2)
	takeover := time.Since(killed)

	// The page reconnects to instance 3 with the last event it saw, and
	// gets everything after it: the next message and its answer, no
	// reset.
	page.cancel()
	send(3, alice, followed, map[string]string{"text": "q-902-0"})
	again := webs[3].follow(t, alice, followed, seenLast.ID)
	if e, seen := again.next(t, web.EventAnswer); text(e) != "answer q-902-0" || len(seen) == 0 || seen[0].Type != web.EventMessage || text(seen[0]) != "q-902-0" ||
		slices.ContainsFunc(seen, func(e web.Event) bool { return e.Type == web.EventReset }) {
		t.Errorf("the page resumed on instance 3 after %s saw %+v, want alice's message first, then the answer, and no reset", seenLast.ID, seen)
	}

	// The upload made through the killed instance, sent and read through
	// instance 3.
	reader := create(3, alice)
	readerPage := webs[3].follow(t, alice, reader, "")
	send(3, alice, reader, map[string]any{"text": "read the upload", "files": []string{up}})
	if e, _ := readerPage.next(t, web.EventAnswer); text(e) != "The upload says: remember the milk." {
		t.Errorf("the turn through instance 3 answered %q, want it to have read the upload made through instance 1", text(e))
	}

	// The killed instance's two streams ended with it: bob opens two
	// more, and no third.
	waitStream(t, webs[3], bob, streamsOf, output)
	if got, _ := openStream(t, webs[2], bob, streamsOf); got != http.StatusOK {
		t.Errorf("bob's second stream after the kill = %d, want 200", got)
	}
	if got, _ := openStream(t, webs[2], bob, streamsOf); got != http.StatusTooManyRequests {
		t.Errorf("bob's fifth stream after the kill = %d, want 429", got)
	}

	round(2)
	// Clicks through instance 2 as it restarts gracefully while round 2
	// runs, then through the restarted instance (Slack connection 4).
	w.slack.Via(2)
	atRestart := []*click{clickOn("UCAROL", 2), clickOn("UMALLORY", 3)}
	p2.stop(t)
	p2 = start(2, 4)
	w.slack.Via(4)
	settle(atRestart...)
	refused := clickOn("UMALLORY", 3)
	settle(refused, clickOn("UCAROL", 3))
	w.slack.Via(0)
	if _, err := w.slack.WaitMessage(waitCtx(t), func(m slacktest.Message) bool {
		return m.Ephemeral && m.Recipient == "UMALLORY" && m.ThreadTS == spendTS[3] && strings.Contains(m.Rendered(), "you can't approve this")
	}); err != nil {
		t.Errorf("Mallory's click through the restarted instance was not refused to her: %v\n%s", err, output())
	}
	for k, ts := range spendTS {
		w.answerIn(t, "C0GENERAL", ts, fmt.Sprintf("Done: 7 PAX sent (tx 0xs%d).", k))
	}

	// The restarted instance lists the spend asked before it started,
	// shows it to a page loading its conversation, takes its approval,
	// and the turn on instance 3 spends once.
	var listed struct{ Approvals []struct{ Token string } }
	if got := webs[2].call(t, alice, "GET", "/v1/approvals", nil, &listed); got != http.StatusOK || len(listed.Approvals) != 1 || listed.Approvals[0].Token != gate.Token {
		t.Errorf("the approvals through the restarted instance = %d %+v, want the spend's %s", got, listed.Approvals, gate.Token)
	}
	var reloaded struct{ Approvals []struct{ Token string } }
	if got := webs[2].call(t, alice, "GET", "/v1/conversations/"+spend, nil, &reloaded); got != http.StatusOK || len(reloaded.Approvals) != 1 || reloaded.Approvals[0].Token != gate.Token {
		t.Errorf("the spend's conversation loaded through the restarted instance = %d %+v, want its pending approval %s", got, reloaded.Approvals, gate.Token)
	}
	if got := webs[2].call(t, alice, "POST", "/v1/gates/"+gate.Token+"/answer", map[string]int{"option": 0}, nil); got != http.StatusOK {
		t.Errorf("the approval through the restarted instance = %d, want 200", got)
	}
	if e, seen := spendPage.next(t, web.EventAnswer); text(e) != "Done: 5 PAX sent (tx 0xfeed)." {
		t.Errorf("the spend's answer = %q after %+v", text(e), seen)
	}
	answered(3)
	round(3)
	answered(4)

	// Bob's share: 20 messages a minute, taken by either instance, then
	// none by either.
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

	// Each of Carol's questions answered once, in order.
	for j, conv := range loads {
		var want []string
		for k := range 4 {
			want = append(want, fmt.Sprintf("answer q-%d-%d", 910+j, k))
		}
		if got := webAnswers(t, webs[3], carol, conv, len(want), output); !slices.Equal(got, want) {
			t.Errorf("carol's conversation %d answered %v, want %v", j, got, want)
		}
	}

	p2.stop(t)
	p3.stop(t)
	by, total := answersByThread(w.slack.Messages())
	for i, root := range roots {
		var want []string
		for k := range 4 {
			want = append(want, fmt.Sprintf("q-%d-%d", i, k))
		}
		if got := by[root]; !slices.Equal(got, want) {
			t.Errorf("thread %d answered %v, want each question once, in order", i, got)
		}
	}
	// Each spend, the web's and Slack's, submitted once and approved
	// once, by Carol in Slack, and its outcome posted once.
	approved := map[string]int{}
	for _, a := range w.daemon.Answers() {
		if !a.Approved {
			t.Errorf("daemon answer %+v, want approvals only", a)
		}
		approved[a.IntentID]++
	}
	intents := w.daemon.Intents()
	if len(intents) != 1+spends || len(approved) != len(intents) {
		t.Errorf("daemon got %d intents and approvals for %v, want %d, each approved once", len(intents), approved, 1+spends)
	}
	for id, n := range approved {
		if n != 1 {
			t.Errorf("intent %s approved %d times, want once", id, n)
		}
	}
	for k, g := range gates {
		if n := botAnswers(w, fmt.Sprintf("(tx 0xs%d)", k)); n != 1 {
			t.Errorf("spend %d's outcome posted %d times, want once", k, n)
		}
		// Redrawn by the instance that took the click, after its ack, and
		// by the turn's: one killed in between leaves it to the other.
		if m, _ := w.slack.MessageAt(g.Channel, g.TS); !strings.Contains(m.Rendered(), "UCAROL") || strings.Contains(m.Rendered(), "UMALLORY") || len(m.Buttons()) > 0 {
			t.Errorf("spend %d's approval reads %q, want it approved by Carol", k, m.Rendered())
		}
	}
	// Mallory's clicks: refused, or, clicked again once Carol's approval
	// had landed, told it changed nothing.
	for _, m := range w.slack.Messages() {
		if said := m.Rendered(); m.Ephemeral && m.Recipient == "UMALLORY" && !strings.Contains(said, "you can't approve this") && !strings.Contains(said, "your click changed nothing") {
			t.Errorf("Mallory was told %q, want only refusals", said)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range threads {
		if n := calls[fmt.Sprintf("q-%d-0", i)]; n != 1 {
			t.Errorf("q-%d-0 reached the model %d times, want once", i, n)
		}
	}
	for _, q := range []string{"q-901-0", "q-902-0"} { // the web's
		if n := calls[q]; n != 1 {
			t.Errorf("%s reached the model %d times, want once", q, n)
		}
	}
	t.Logf("%d Slack answers for %d questions, %d web questions answered once each; from the kill to every answer of round 1: %s; %d approval clicks, %d clicked again after an instance went down unacked",
		total, threads*4, convs*4+2, takeover, len(clicks), reclicked)
}

// slackSpend is the address a Slack spend of TestClusterThree pays.
var slackSpend = regexp.MustCompile(`0xs\d+`)

// known waits until ww serves conversation id to token's owner: the
// note of a conversation created on another instance is on its way.
func known(t *testing.T, ww *webWorld, token, id string, output func() string) {
	t.Helper()
	ctx := waitCtx(t)
	for ww.call(t, token, "GET", "/v1/conversations/"+id, nil, nil) != http.StatusOK {
		select {
		case <-ctx.Done():
			t.Fatalf("%s never learned of conversation %s\n%s", ww.base, id, output())
		case <-time.After(10 * time.Millisecond): // polling the API, not timing the bot
		}
	}
}

// openStream opens conversation id's event stream through ww as token:
// a stream answered 200 stays open until the test ends; a refusal's
// limit is returned.
func openStream(t *testing.T, ww *webWorld, token, id string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", ww.base+"/v1/conversations/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("open a stream through %s: %v", ww.base, err)
	}
	if res.StatusCode == http.StatusOK {
		t.Cleanup(func() { res.Body.Close() })
		return res.StatusCode, ""
	}
	defer res.Body.Close()
	var refused struct{ Limit string }
	_ = json.NewDecoder(res.Body).Decode(&refused)
	return res.StatusCode, refused.Limit
}

// waitStream opens a stream through ww once one of token's streams is
// free: the server ends a killed instance's session, and its streams,
// when it notices.
func waitStream(t *testing.T, ww *webWorld, token, id string, output func() string) {
	t.Helper()
	ctx := waitCtx(t)
	for {
		got, _ := openStream(t, ww, token, id)
		if got == http.StatusOK {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no stream through %s: the last was answered %d\n%s", ww.base, got, output())
		case <-time.After(20 * time.Millisecond): // polling the API, not timing the bot
		}
	}
}

// upload uploads a text file through ww as token and returns its ID.
func upload(t *testing.T, ww *webWorld, token, name, content string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", ww.base+"/v1/uploads?name="+name, bytes.NewReader([]byte(content)))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "text/plain")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var up struct{ ID string }
	_ = json.NewDecoder(res.Body).Decode(&up)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("upload through %s = %d", ww.base, res.StatusCode)
	}
	return up.ID
}

// webAnswers waits until conversation id holds n answers, read through
// ww as token, and returns every answer it holds.
func webAnswers(t *testing.T, ww *webWorld, token, id string, n int, output func() string) []string {
	t.Helper()
	ctx := waitCtx(t)
	for {
		var conv struct{ Messages []web.Said }
		ww.call(t, token, "GET", "/v1/conversations/"+id, nil, &conv)
		var answers []string
		for _, m := range conv.Messages {
			if m.Role == "assistant" {
				answers = append(answers, m.Text)
			}
		}
		if len(answers) >= n {
			return answers
		}
		select {
		case <-ctx.Done():
			t.Fatalf("conversation %s holds %v, want %d answers\n%s", id, answers, n, output())
		case <-time.After(20 * time.Millisecond): // polling the API, not timing the bot
		}
	}
}
