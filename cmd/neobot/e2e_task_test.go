package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm/llmtest"
	"github.com/neobot/neobot/core/mcp/tasktest"
)

// TestTaskSurvivesKill: a tool whose server answers with a task (the MCP
// tasks extension) shows the task on its step in the web chat; neobot is
// killed (kill -9) while the task runs. The restarted neobot picks the
// task up from the store (its ID was recorded before the task was
// followed), reports its result once, and never calls the tool again.
func TestTaskSurvivesKill(t *testing.T) {
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			srv := tasktest.New(t, "build")
			w := newWebWorld(t)
			db.use(t, w.env)
			w.env["NEO_MANIFEST"] = writeJSON(t, "manifest.json", map[string]any{"did": "did:web:neobot.test:agents:e2e", "servers": []any{map[string]any{
				"alias": "ci", "transport": "http", "url": srv.URL, "version": "1.0.0", "tools": []string{"build"}, "side_effects": "write",
			}}})
			w.env["NEO_CONFIG"] = writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{
				"default": map[string]any{"side_effects": map[string]string{"write": "allow"}}}})
			scriptModel(t, w.model,
				llmtest.Calls(llmtest.Call("c1", "ci__build", `{}`)),
				llmtest.Text("The build passed."),
			)
			p1 := w.start(t)
			var created struct{ ID string }
			if got := w.call(t, w.alice, "POST", "/v1/conversations", map[string]any{}, &created); got != http.StatusCreated {
				t.Fatalf("create = %d", got)
			}
			events := w.follow(t, w.alice, created.ID, "")
			w.call(t, w.alice, "POST", "/v1/conversations/"+created.ID+"/messages", map[string]string{"text": "build it"}, nil)
			id := <-srv.Created()
			srv.Say(id, "compiling")
			for {
				e, _ := events.next(t, "step")
				var st struct{ State, Output string }
				_ = json.Unmarshal(e.Data, &st)
				if st.State == "in_progress" && strings.Contains(st.Output, "Task "+id+": working — compiling") {
					break // the task card shows the task's progress
				}
			}
			p1.kill()

			srv.Complete(id, "build 42 passed")
			w.start(t)
			again := w.follow(t, w.alice, created.ID, "")
			if e, _ := again.next(t, "answer"); text(e) != "The build passed." {
				t.Errorf("answer = %q", text(e))
			}
			if n := srv.Calls(); n != 1 {
				t.Errorf("the tool was called %d times, want once: the resumed turn must follow its task", n)
			}
			reqs := mainRequests(w.model)
			if len(reqs) != 2 || !strings.Contains(toolResult(reqs[1], "c1"), "build 42 passed") {
				t.Fatalf("model requests %d, the last told %q; want 2, told the task's result", len(reqs), toolResult(reqs[len(reqs)-1], "c1"))
			}
			var conv struct {
				Messages []struct{ Text string }
			}
			w.call(t, w.alice, "GET", "/v1/conversations/"+created.ID, nil, &conv)
			answers := 0
			for _, m := range conv.Messages {
				answers += strings.Count(m.Text, "The build passed.")
			}
			if answers != 1 {
				t.Errorf("the conversation holds the answer %d times, want once: %+v", answers, conv.Messages)
			}
		})
	}
}

// TestSlackTaskStop: while a tool's task runs, only the person whose turn
// it is may stop the turn. Bob's "stop" is refused privately, saying why,
// and cancels nothing; Alice's cancels the task at the server.
func TestSlackTaskStop(t *testing.T) {
	srv := tasktest.New(t, "build")
	w := newSlackWorld(t)
	w.env["NEO_MANIFEST"] = writeJSON(t, "manifest.json", map[string]any{"did": "did:web:neobot.test:agents:e2e", "servers": []any{map[string]any{
		"alias": "ci", "transport": "http", "url": srv.URL, "version": "1.0.0", "tools": []string{"build"}, "side_effects": "write",
	}}})
	w.env["NEO_CONFIG"] = writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{
		"default": map[string]any{"side_effects": map[string]string{"write": "allow"}}}})
	scriptModel(t, w.model, llmtest.Calls(llmtest.Call("c1", "ci__build", `{}`)), llmtest.Text("Stopped."))
	p := w.start(t, 1)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "build it"})
	id := <-srv.Created()
	for got := range srv.Polled() {
		if got == id {
			break // neobot follows the task: the turn is held for Alice
		}
	}
	w.slack.Message(slacktest.Msg{User: "UBOB", Text: "stop", ThreadTS: mention.TS})
	if _, err := w.slack.WaitMessage(waitCtx(t), func(m slacktest.Message) bool {
		return m.Ephemeral && m.Recipient == "UBOB" && strings.Contains(m.Text, "running a long task, and only the person who asked")
	}); err != nil {
		t.Fatalf("Bob's stop got no private refusal: %v\n%s", err, p.output.String())
	}
	select {
	case got := <-srv.Cancels():
		t.Fatalf("Bob's stop cancelled task %s", got)
	default:
	}
	w.slack.Message(slacktest.Msg{User: "UALICE", Text: "stop", ThreadTS: mention.TS})
	select {
	case got := <-srv.Cancels():
		if got != id {
			t.Errorf("cancelled %s, want %s", got, id)
		}
	case <-waitCtx(t).Done():
		t.Fatalf("Alice's stop did not cancel her task\n%s", p.output.String())
	}
	if n := srv.Calls(); n != 1 {
		t.Errorf("the tool was called %d times, want once", n)
	}
	p.stop(t)
}

// TestClusterTaskStop: two instances on PostgreSQL. Alice's turn runs on
// instance 1 and follows its tool's task; the stops come in through
// instance 2, which cannot see what instance 1 holds. Bob's stop is
// refused (privately, saying why) and cancels nothing; Alice's reaches
// instance 1, cancels the task at the server (tasks/cancel) and the
// thread is told the turn stopped.
func TestClusterTaskStop(t *testing.T) {
	srv := tasktest.New(t, "build")
	w := newClusterWorld(t)
	w.env["NEO_MANIFEST"] = writeJSON(t, "manifest.json", map[string]any{"did": "did:web:neobot.test:agents:e2e", "servers": []any{map[string]any{
		"alias": "ci", "transport": "http", "url": srv.URL, "version": "1.0.0", "tools": []string{"build"}, "side_effects": "write",
	}}})
	w.env["NEO_CONFIG"] = writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{
		"default": map[string]any{"side_effects": map[string]string{"write": "allow"}}}})
	scriptModel(t, w.model, llmtest.Calls(llmtest.Call("c1", "ci__build", `{}`)), llmtest.Text("Stopped."))
	p1 := w.start(t, 1)
	p2 := w.start(t, 2)
	w.slack.Via(1)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "build it"})
	if ack, err := w.slack.WaitAck(waitCtx(t), mention); err != nil || ack.Conn != 1 {
		t.Fatalf("the mention's ack = %+v, %v; want it from instance 1's connection", ack, err)
	}
	id := <-srv.Created()
	for got := range srv.Polled() {
		if got == id {
			break // instance 1 follows the task: the turn is held for Alice
		}
	}

	w.slack.Via(2)
	stop := w.slack.Message(slacktest.Msg{User: "UBOB", Text: "stop", ThreadTS: mention.TS})
	if ack, err := w.slack.WaitAck(waitCtx(t), stop); err != nil || ack.Conn != 2 {
		t.Fatalf("Bob's stop's ack = %+v, %v; want it from instance 2's connection", ack, err)
	}
	told, err := w.slack.WaitMessage(waitCtx(t), func(m slacktest.Message) bool {
		refused := m.Ephemeral && m.Recipient == "UBOB" && strings.Contains(m.Text, "running a long task, and only the person who asked")
		stopped := m.FromBot() && !m.Ephemeral && m.ThreadTS == mention.TS && strings.Contains(m.Rendered(), "Stopped")
		return refused || stopped
	})
	if err != nil || !told.Ephemeral {
		t.Fatalf("Bob's stop through instance 2 got %q (%v), want a private refusal\n1: %s\n2: %s", told.Text, err, p1.output.String(), p2.output.String())
	}
	select {
	case got := <-srv.Cancels():
		t.Fatalf("Bob's stop cancelled task %s", got)
	default:
	}

	w.slack.Message(slacktest.Msg{User: "UALICE", Text: "stop", ThreadTS: mention.TS})
	select {
	case got := <-srv.Cancels():
		if got != id {
			t.Errorf("cancelled %s, want %s", got, id)
		}
	case <-waitCtx(t).Done():
		t.Fatalf("Alice's stop through instance 2 did not cancel her task\n1: %s\n2: %s", p1.output.String(), p2.output.String())
	}
	w.answerIn(t, "C0GENERAL", mention.TS, "Stopped.")
	if n := srv.Calls(); n != 1 {
		t.Errorf("the tool was called %d times, want once", n)
	}
	p1.stop(t)
	p2.stop(t)
}
