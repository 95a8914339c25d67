package main

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// TestSlackModelOutageKeepsTheThread: the main model answers 500 for a
// whole turn. The user hears that it failed, and the thread's earlier turn is
// not archived: once the model is back, the next request still carries it
// word for word.
func TestSlackModelOutageKeepsTheThread(t *testing.T) {
	w := newSlackWorld(t)
	var down atomic.Bool
	var answers atomic.Int32
	w.model.Handle(func(r llmtest.Request) llmtest.Reply {
		switch {
		case r.Model == cheapModel: // the cheap model is served elsewhere and stays up
			return llmtest.Text(`{"facts":[]}`)
		case down.Load():
			return llmtest.Reply{Status: 500, Body: `{"error":{"message":"upstream is down","type":"server_error"}}`}
		}
		return llmtest.Text(fmt.Sprintf("Answer %d: the deploy window is Friday 14:00.", answers.Add(1)))
	})
	p := w.start(t, 1)

	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "when is the deploy window?"})
	w.answerIn(t, "C0GENERAL", mention.TS, "Answer 1:")
	for i := 2; i <= 4; i++ {
		w.slack.Message(slacktest.Msg{User: "UALICE", Text: fmt.Sprintf("question %d", i), ThreadTS: mention.TS})
		w.answerIn(t, "C0GENERAL", mention.TS, fmt.Sprintf("Answer %d:", i))
	}

	down.Store(true)
	w.slack.Message(slacktest.Msg{User: "UALICE", Text: "and the rollback plan?", ThreadTS: mention.TS})
	w.answerIn(t, "C0GENERAL", mention.TS, "language model")

	down.Store(false)
	w.slack.Message(slacktest.Msg{User: "UALICE", Text: "remind me of the window", ThreadTS: mention.TS})
	w.answerIn(t, "C0GENERAL", mention.TS, "Answer 5:")
	reqs := mainRequests(w.model)
	var carried strings.Builder
	for _, m := range reqs[len(reqs)-1].Messages {
		carried.WriteString(m.Content + "\n")
	}
	for _, want := range []string{"when is the deploy window?", "Answer 1: the deploy window is Friday 14:00.", "question 4"} {
		if !strings.Contains(carried.String(), want) {
			t.Errorf("request after the outage lacks %q: the earlier turn was compacted away\n%s", want, carried.String())
		}
	}
	p.stop(t)
}
