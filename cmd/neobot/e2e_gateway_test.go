package main

import (
	"testing"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// TestSlackGatewayAttribution: through the metering gateway, every model
// call carries the manifest's DID as the actor (no NEO_ACTOR_DID set) and
// an intent ID that is the same for all of a turn's calls and new for the
// next turn.
func TestSlackGatewayAttribution(t *testing.T) {
	w := newSlackWorld(t)
	delete(w.env, "NEO_LLM_BASE_URL")
	w.env["MATRIX_GATEWAY_URL"] = w.model.URL()
	w.env["MATRIX_GATEWAY_TOKEN"] = "gateway-token"
	scriptModel(t, w.model,
		llmtest.Calls(llmtest.Call("c1", "memory_recall", `{"query":"deploys"}`)),
		llmtest.Text("First answer."),
		llmtest.Text("Second answer."),
	)
	p := w.start(t, 1)
	first := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "what do you know about deploys?"})
	w.answerIn(t, "C0GENERAL", first.TS, "First answer.")
	w.slack.Message(slacktest.Msg{User: "UALICE", Text: "thanks", ThreadTS: first.TS})
	w.answerIn(t, "C0GENERAL", first.TS, "Second answer.")
	p.stop(t)

	reqs := mainRequests(w.model)
	if len(reqs) != 3 {
		t.Fatalf("%d main model calls, want 3", len(reqs))
	}
	for i, r := range reqs {
		if got := r.Header.Get("X-Matrix-Actor-DID"); got != "did:web:neobot.test:agents:e2e" {
			t.Errorf("call %d: X-Matrix-Actor-DID = %q, want the manifest's DID", i+1, got)
		}
		if r.Header.Get("X-Matrix-Intent-ID") == "" {
			t.Errorf("call %d: no X-Matrix-Intent-ID", i+1)
		}
	}
	id := func(i int) string { return reqs[i].Header.Get("X-Matrix-Intent-ID") }
	if id(0) != id(1) || id(1) == id(2) {
		t.Errorf("intent IDs %q, %q, %q: want the first turn's two calls to share one, the second turn a new one", id(0), id(1), id(2))
	}
}
