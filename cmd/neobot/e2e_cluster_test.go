package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/delegate/delegatetest"
	"github.com/neobot/neobot/core/llm/llmtest"
	"github.com/neobot/neobot/store/postgres/pgtest"
)

// newClusterWorld is the Slack world with its state in one PostgreSQL
// database, for several neobot instances.
func newClusterWorld(t *testing.T) *slackWorld {
	t.Helper()
	w := newSlackWorld(t)
	w.env["NEO_DATABASE_URL"] = pgtest.Database(t)
	delete(w.env, "NEO_DB_PATH")
	return w
}

var question = regexp.MustCompile(`q-\d+-\d+`)

// echoModel answers each question "q-<thread>-<n>" with "answer
// q-<thread>-<n>", whichever instance asks, and counts the calls per
// question.
func echoModel(t *testing.T, srv *llmtest.Server) (calls func(q string) int) {
	t.Helper()
	var mu sync.Mutex
	n := map[string]int{}
	srv.Handle(func(r llmtest.Request) llmtest.Reply {
		if r.Model == cheapModel {
			return llmtest.Text(`{"facts":[]}`)
		}
		last := r.Messages[len(r.Messages)-1]
		q := question.FindString(last.Content)
		mu.Lock()
		n[q]++
		mu.Unlock()
		return llmtest.Text("answer " + q)
	})
	return func(q string) int {
		mu.Lock()
		defer mu.Unlock()
		return n[q]
	}
}

// answersByThread collects the bot's answers, by thread, in the order
// they were posted.
func answersByThread(msgs []slacktest.Message) (map[string][]string, int) {
	by, total := map[string][]string{}, 0
	for _, m := range msgs {
		if !m.FromBot() || m.Ephemeral {
			continue
		}
		if q := question.FindString(m.Rendered()); q != "" && strings.Contains(m.Rendered(), "answer ") {
			root := m.ThreadTS
			if root == "" {
				root = m.TS
			}
			by[root] = append(by[root], q)
			total++
		}
	}
	return by, total
}

// threadCalls describes the threads named at the end of each of missing
// ("q-1-4 in <ts>"): the posts the fake saw in them, what they hold now,
// and every deletion: what a failure needs to tell a lost message from a
// lost answer.
func threadCalls(s *slacktest.Server, missing []string) string {
	var b strings.Builder
	for _, m := range missing {
		_, ts, _ := strings.Cut(m, " in ")
		fmt.Fprintf(&b, "thread %s:\n", ts)
		for _, c := range s.Calls("") {
			if c.Params.Get("thread_ts") == ts {
				fmt.Fprintf(&b, "  %s %s text=%q\n", c.At.Format("15:04:05.000"), c.Method, c.Params.Get("text"))
			}
		}
		for _, msg := range s.Messages() {
			if msg.TS == ts || msg.ThreadTS == ts {
				fmt.Fprintf(&b, "  holds %s (bot %v): %q\n", msg.TS, msg.FromBot(), msg.Rendered())
			}
		}
	}
	for _, c := range s.Calls("chat.delete") {
		fmt.Fprintf(&b, "deleted %s at %s\n", c.Params.Get("ts"), c.At.Format("15:04:05.000"))
	}
	return b.String()
}

// TestClusterSlack: two instances and one PostgreSQL behind the Slack
// fake, one Socket Mode connection each, Slack spreading events across
// both. 200 mentions in 50 threads are each answered exactly once, in
// order within each thread; then one instance is killed in the middle of
// turns and the survivor answers every message left, exactly once.
func TestClusterSlack(t *testing.T) {
	w := newClusterWorld(t)
	calls := echoModel(t, w.model)
	p1 := w.start(t, 1)
	p2 := w.start(t, 2)

	const threads, rounds = 50, 4
	roots := make([]string, threads)
	for k := range rounds {
		var sent []slacktest.Delivery
		for i := range threads {
			d := w.slack.Mention(slacktest.Msg{User: fmt.Sprintf("U%03d", i), Text: fmt.Sprintf("q-%d-%d", i, k), ThreadTS: roots[i]})
			if k == 0 {
				roots[i] = d.TS
			}
			sent = append(sent, d)
		}
		// Each message is journaled (acked) before the next round: the
		// order within a thread is then the order Slack sent them in.
		for _, d := range sent {
			if _, err := w.slack.WaitAck(waitCtx(t), d); err != nil {
				t.Fatalf("round %d: %v\n%s\n%s", k, err, p1.output.String(), p2.output.String())
			}
		}
	}
	msgs, err := w.slack.WaitMessages(waitCtx(t), func(ms []slacktest.Message) bool {
		_, n := answersByThread(ms)
		return n >= threads*rounds
	})
	if err != nil {
		_, n := answersByThread(w.slack.Messages())
		t.Fatalf("%d of %d answers: %v\n%s\n%s", n, threads*rounds, err, p1.output.String(), p2.output.String())
	}
	by, _ := answersByThread(msgs)
	for i, root := range roots {
		var want []string
		for k := range rounds {
			want = append(want, fmt.Sprintf("q-%d-%d", i, k))
		}
		if got := by[root]; !slices.Equal(got, want) {
			t.Errorf("thread %d answered %v, want %v", i, got, want)
		}
	}
	for i := range threads {
		for k := range rounds {
			if n := calls(fmt.Sprintf("q-%d-%d", i, k)); n != 1 {
				t.Errorf("q-%d-%d reached the model %d times, want once", i, k, n)
			}
		}
	}
	// Slack spread the threads' first mentions over both connections, and
	// each instance claimed the threads it heard of first.
	ran := func(p *process) int { return strings.Count(p.output.String(), `"model":"test-main"`) }
	if ran(p1) == 0 || ran(p2) == 0 {
		t.Errorf("model calls: instance 1 made %d, instance 2 made %d; want both to run turns", ran(p1), ran(p2))
	}

	// Kill instance 1 while turns run; Slack redelivers what it did not
	// ack to instance 2, and instance 2 adopts the threads instance 1
	// held.
	for i := range threads {
		w.slack.Mention(slacktest.Msg{User: fmt.Sprintf("U%03d", i), Text: fmt.Sprintf("q-%d-%d", i, rounds), ThreadTS: roots[i]})
	}
	p1.kill()
	if _, err := w.slack.WaitMessages(waitCtx(t), func(ms []slacktest.Message) bool {
		_, n := answersByThread(ms)
		return n >= threads*(rounds+1)
	}); err != nil {
		by, n := answersByThread(w.slack.Messages())
		var missing []string
		for i, root := range roots {
			if q := fmt.Sprintf("q-%d-%d", i, rounds); !slices.Contains(by[root], q) {
				missing = append(missing, q+" in "+root)
			}
		}
		t.Fatalf("after the kill: %d of %d answers (missing %v): %v\n%s\n%s", n, threads*(rounds+1), missing, err,
			threadCalls(w.slack, missing), p2.output.String())
	}
	p2.stop(t) // every turn settled: nothing more can be posted
	by, _ = answersByThread(w.slack.Messages())
	for i, root := range roots {
		if got := by[root]; len(got) != rounds+1 || got[rounds] != fmt.Sprintf("q-%d-%d", i, rounds) {
			t.Errorf("thread %d answered %v after the kill, want each question once, the last one last\n%s\n%s", i, got,
				threadCalls(w.slack, []string{"thread in " + root}), p2.output.String())
		}
	}
}

// TestClusterClaimsLost: the database connection holding an instance's
// claims breaks while a turn runs under one of them (the server ends the
// session, as it does for a machine it stops hearing from). The turn
// stops on that instance, and the thread, free again, is resumed by the
// instance that claims it next: the answer is posted once.
func TestClusterClaimsLost(t *testing.T) {
	w := newClusterWorld(t)
	calls, release := heldModel(t, w.model, llmtest.Text("The answer is 4."), llmtest.Text("The answer is 4."))
	p1 := w.start(t, 1)
	p2 := w.start(t, 2)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "what is 2+2?"})
	waitModelCall(t, calls, p1) // held: the turn runs until it is stopped

	endClaimsSession(t, w.env["NEO_DATABASE_URL"]) // the only claim held is the running turn's thread

	waitModelCall(t, calls, p1) // the turn, resumed where the thread is claimed now
	w.answerIn(t, "C0GENERAL", mention.TS, "The answer is 4.")
	// The first call answers now: a turn still running under the lost
	// claim would post its answer a second time.
	release()
	p1.stop(t)
	p2.stop(t)
	if got := botAnswers(w, "The answer is 4."); got != 1 {
		t.Errorf("answer posted %d times, want once", got)
	}
	logs := p1.output.String() + p2.output.String()
	if !strings.Contains(logs, "lost thread claims") || !strings.Contains(logs, "this process lost the thread's claim") {
		t.Errorf("no instance reported stopping the turn under its lost claim:\n%s", logs)
	}
	w.noStatusLeft(t, "C0GENERAL", mention.TS)
}

// TestClusterDiscordShardLost: the instance holding the Discord gateway
// session loses its claims connection. It ends the session and exits
// with an error that says why, and the standby takes the session over:
// never two sessions at once.
func TestClusterDiscordShardLost(t *testing.T) {
	w, p1, p2 := discordPair(t)
	scriptModel(t, w.model, llmtest.Text("Answered by the standby."))
	// The holder's claims session is the only one holding a claim, the
	// shard's: the standby's claims are refused, and never held.
	endClaimsSession(t, w.env["NEO_DATABASE_URL"])
	select {
	case <-p1.done:
		if p1.err == nil || !strings.Contains(p1.output.String(), "lost the claim of its Discord gateway shard") {
			t.Errorf("instance 1 exited with %v, want an error naming the lost shard claim\n%s", p1.err, p1.output.String())
		}
	case <-waitCtx(t).Done():
		t.Fatalf("instance 1 kept its gateway session after losing the shard's claim\n%s", p1.output.String())
	}
	waitGatewaySessions(t, w, 2, p2)
	mention := w.discord.Mention(discordtest.Msg{User: "111", Text: "are you there?"})
	w.answerIn(t, mention.ID, "Answered by the standby.")
}

// endClaimsSession ends the one database session holding claims, as the
// server does when it stops hearing from an instance's machine; it fails
// t unless exactly one session held any.
func endClaimsSession(t *testing.T, url string) {
	t.Helper()
	conn, err := pgx.Connect(waitCtx(t), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var ended int
	if err := conn.QueryRow(waitCtx(t), `SELECT count(pg_terminate_backend(pid)) FROM (SELECT DISTINCT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())) s`).Scan(&ended); err != nil || ended != 1 {
		t.Fatalf("ending the claims session = %d, %v; want one session ended", ended, err)
	}
}

// discordPair starts two instances on one PostgreSQL behind the Discord
// fake, and returns once instance 1 holds the gateway session and
// instance 2 reports ready on standby.
func discordPair(t *testing.T) (*discordWorld, *process, *process) {
	t.Helper()
	w := newDiscordWorld(t)
	w.env["NEO_DATABASE_URL"] = pgtest.Database(t)
	delete(w.env, "NEO_DB_PATH")
	p1 := w.start(t, 1)
	addr := freeAddr(t)
	w.env["NEO_HEALTH_ADDR"] = addr
	p2 := start(t, w.env)
	ctx := waitCtx(t)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(string(body), "discord: standby") {
				break
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("instance 2 never reported ready on standby\n%s", p2.output.String())
		case <-time.After(20 * time.Millisecond): // polling a port, not timing the bot
		}
	}
	if n := w.discord.Connections(); n != 1 {
		t.Fatalf("gateway sessions = %d with both instances up, want 1", n)
	}
	return w, p1, p2
}

// waitGatewaySessions waits until the Discord fake has seen n gateway
// sessions, the last one p's.
func waitGatewaySessions(t *testing.T, w *discordWorld, n int, p *process) {
	t.Helper()
	ctx := waitCtx(t)
	for w.discord.Connections() < n {
		if err := w.discord.WaitConnected(ctx); err != nil {
			t.Fatalf("instance never took the gateway session over: %v\n%s", err, p.output.String())
		}
		select {
		case <-ctx.Done():
			t.Fatalf("instance never took the gateway session over\n%s", p.output.String())
		case <-time.After(20 * time.Millisecond): // polling the fake's counter, not timing the bot
		}
	}
}

// TestClusterWeb: two instances serve the web chat from one PostgreSQL,
// behind a load balancer that sends each request anywhere. Alice creates
// a conversation and follows it on instance 1; her message reaches
// instance 2, which runs the turn; her browser, on instance 1, sees her
// message and the answer.
func TestClusterWeb(t *testing.T) {
	w1 := newWebWorld(t)
	w1.env["NEO_DATABASE_URL"] = pgtest.Database(t)
	delete(w1.env, "NEO_DB_PATH")
	scriptModel(t, w1.model, llmtest.Text("Hello from either instance."))
	w2 := *w1
	addr := freeAddr(t)
	w2.base, w2.env = "http://"+addr, maps.Clone(w1.env)
	w2.env["NEO_WEB_ADDR"] = addr
	w1.start(t)
	p2 := w2.start(t)

	var created struct{ ID string }
	if got := w1.call(t, w1.alice, "POST", "/v1/conversations", map[string]any{}, &created); got != http.StatusCreated {
		t.Fatalf("create on instance 1 = %d", got)
	}
	events := w1.follow(t, w1.alice, created.ID, "")
	conv := "/v1/conversations/" + created.ID
	wait := waitCtx(t)
	for w2.call(t, w2.alice, "GET", conv, nil, nil) != http.StatusOK { // the new conversation's note is on its way
		select {
		case <-wait.Done():
			t.Fatalf("instance 2 never learned of the conversation\n%s", p2.output.String())
		case <-time.After(10 * time.Millisecond): // polling the API, not timing the bot
		}
	}
	if got := w2.call(t, w2.alice, "POST", conv+"/messages", map[string]string{"text": "hello"}, nil); got != http.StatusAccepted {
		t.Fatalf("send on instance 2 = %d, want 202", got)
	}
	e, seen := events.next(t, "answer")
	if text(e) != "Hello from either instance." {
		t.Errorf("answer on instance 1 = %q", text(e))
	}
	if len(seen) < 2 || seen[0].Type != "message" || text(seen[0]) != "hello" {
		t.Errorf("instance 1's stream before the answer: %+v, want Alice's message first", seen)
	}
}

// TestClusterApproval: the spend's turn runs on instance 1; the approval
// is clicked through instance 2's connection; the decision, recorded by
// instance 2, wakes the turn on instance 1, and the spend completes once.
func TestClusterApproval(t *testing.T) {
	w := newClusterWorld(t)
	w.daemon.Script(delegatetest.Intent{
		Gates:  []delegatetest.Gate{{NodeID: "n1", Question: "Approve spend of 5 PAX to 0xabc?", Options: []string{"approve", "deny"}}},
		Answer: "settled: tx 0xfeed",
	})
	scriptModel(t, w.model,
		llmtest.Calls(llmtest.Call("c1", "core_execute", `{"intent":"send 5 PAX to 0xabc"}`)),
		llmtest.Text("Done: 5 PAX sent (tx 0xfeed)."),
	)
	p1 := w.start(t, 1)
	p2 := w.start(t, 2)
	w.slack.Via(1)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "send 5 PAX to 0xabc"})
	if ack, err := w.slack.WaitAck(waitCtx(t), mention); err != nil || ack.Conn != 1 {
		t.Fatalf("the mention's ack = %+v, %v; want it from instance 1's connection", ack, err)
	}
	gate, err := w.slack.WaitMessage(waitCtx(t), func(m slacktest.Message) bool {
		return m.FromBot() && len(m.Buttons()) == 2 && strings.Contains(m.Rendered(), "Approve spend of 5 PAX")
	})
	if err != nil {
		t.Fatalf("no approval message: %v\n%s", err, p1.output.String())
	}
	w.slack.Via(2)
	click := w.slack.Click("UALICE", gate, 0)
	if ack, err := w.slack.WaitAck(waitCtx(t), click); err != nil || ack.Conn != 2 {
		t.Fatalf("the click's ack = %+v, %v; want it from instance 2's connection", ack, err)
	}
	w.answerIn(t, "C0GENERAL", mention.TS, "Done: 5 PAX sent (tx 0xfeed).")
	p1.stop(t)
	p2.stop(t)
	if answers := w.daemon.Answers(); len(answers) != 1 || !answers[0].Approved {
		t.Errorf("daemon answers = %+v, want one approval", answers)
	}
	if n := len(w.daemon.Intents()); n != 1 {
		t.Errorf("daemon got %d intents, want 1", n)
	}
	if got := botAnswers(w, "Done: 5 PAX sent"); got != 1 {
		t.Errorf("final answer posted %d times, want once", got)
	}
	if submitted := "delegate: submitted"; !strings.Contains(p1.output.String(), submitted) || strings.Contains(p2.output.String(), submitted) {
		t.Errorf("the spend's turn should run on instance 1 alone:\n1: %s\n2: %s", p1.output.String(), p2.output.String())
	}
}

// TestClusterMemory: a fact remembered from a turn on instance 1 is in
// instance 2's memory once the write's notification arrives, and a turn
// on instance 2 recalls it.
func TestClusterMemory(t *testing.T) {
	w := newClusterWorld(t)
	var mu sync.Mutex
	var recalled []string // main-model requests that carried the fact
	w.model.Handle(func(r llmtest.Request) llmtest.Reply {
		if r.Model == cheapModel {
			if strings.Contains(r.Messages[len(r.Messages)-1].Content, "staging is kube-stg-2") {
				return llmtest.Text(`{"facts":[{"text":"Staging runs on kube-stg-2","kind":"fact","about":"shared","entities":["kube-stg-2"]}]}`)
			}
			return llmtest.Text(`{"facts":[]}`)
		}
		var all strings.Builder
		for _, m := range r.Messages {
			all.WriteString(m.Content)
		}
		if q := r.Messages[len(r.Messages)-1].Content; strings.Contains(q, "where does staging run") && strings.Contains(all.String(), "Staging runs on kube-stg-2") {
			mu.Lock()
			recalled = append(recalled, q)
			mu.Unlock()
			return llmtest.Text("On kube-stg-2.")
		}
		return llmtest.Text("Noted.")
	})
	admin := map[int]string{}
	start := func(n int) *process {
		addr := freeAddr(t)
		w.env["NEO_HEALTH_ADDR"], w.env["NEO_ADMIN_TOKEN"] = addr, "admin-e2e-token-0123456789abcdef0123"
		admin[n] = "http://" + addr
		return w.start(t, n)
	}
	p1, p2 := start(1), start(2)

	w.slack.Via(1)
	first := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "staging is kube-stg-2"})
	w.answerIn(t, "C0GENERAL", first.TS, "Noted.")

	// Instance 2's own index holds the fact once the notification lands.
	ctx := waitCtx(t)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, admin[2]+"/admin/v1/memory?workspace="+slacktest.TeamID, nil)
		req.Header.Set("Authorization", "Bearer admin-e2e-token-0123456789abcdef0123")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(body), "kube-stg-2") {
				break
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("instance 2 never learned the fact\n1: %s\n2: %s", p1.output.String(), p2.output.String())
		case <-time.After(20 * time.Millisecond): // polling instance 2's memory, not timing it
		}
	}
	w.slack.Via(2)
	second := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "where does staging run?"})
	w.answerIn(t, "C0GENERAL", second.TS, "On kube-stg-2.")
	mu.Lock()
	defer mu.Unlock()
	if len(recalled) != 1 {
		t.Errorf("turns on instance 2 that recalled the fact = %d, want 1", len(recalled))
	}
	if strings.Contains(p1.output.String(), "where does staging run") {
		t.Errorf("the second question ran on instance 1; it was sent through instance 2")
	}
}

// TestClusterDiscordShard: two instances, one Discord gateway session.
// The second stands by (ready, not connected); when the holder is
// killed, it takes the session over and answers.
func TestClusterDiscordShard(t *testing.T) {
	w, p1, p2 := discordPair(t)
	scriptModel(t, w.model, llmtest.Text("Answered by the standby."))
	p1.kill()
	waitGatewaySessions(t, w, 2, p2)
	mention := w.discord.Mention(discordtest.Msg{User: "111", Text: "are you there?"})
	w.answerIn(t, mention.ID, "Answered by the standby.")
}
