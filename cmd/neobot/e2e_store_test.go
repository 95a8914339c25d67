package main

import (
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm/llmtest"
	"github.com/neobot/neobot/store/postgres/pgtest"
)

// TestStoreCopy: a conversation held in the bbolt file continues on
// PostgreSQL after neobot store copy, and a second copy into the same
// database is refused.
func TestStoreCopy(t *testing.T) {
	w := newSlackWorld(t)
	scriptModel(t, w.model,
		llmtest.Text("Hello! I'm Neo."),
		llmtest.Text("You asked me who I am."),
	)
	p := w.start(t, 1)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "who are you?"})
	w.answerIn(t, "C0GENERAL", mention.TS, "Hello! I'm Neo.")
	p.stop(t)

	w.env["NEO_DATABASE_URL"] = pgtest.Database(t)
	out, stderr, err := run(t, w.env, "", "store", "copy")
	if err != nil {
		t.Fatalf("neobot store copy: %v\n%s%s", err, out, stderr)
	}
	for _, want := range []string{"Copied ", "1  threads", "1  journaled messages", "0  of them pending"} {
		if !strings.Contains(out, want) {
			t.Errorf("store copy output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out+stderr, "user=neobot") {
		t.Errorf("store copy prints the connection URL's query:\n%s%s", out, stderr)
	}

	// The bot on PostgreSQL answers the follow-up from the copied thread.
	p = w.start(t, 2)
	w.slack.Message(slacktest.Msg{User: "UALICE", Text: "what did I just ask?", ThreadTS: mention.TS})
	w.answerIn(t, "C0GENERAL", mention.TS, "You asked me who I am.")
	calls := mainRequests(w.model)
	var history []string
	for _, m := range calls[len(calls)-1].Messages {
		history = append(history, m.Content)
	}
	if joined := strings.Join(history, "\n"); !strings.Contains(joined, "who are you?") || !strings.Contains(joined, "Hello! I'm Neo.") {
		t.Errorf("the follow-up on PostgreSQL lacks the copied thread:\n%s", joined)
	}
	p.stop(t)

	if _, stderr, err := run(t, w.env, "", "store", "copy"); err == nil || !strings.Contains(stderr, "not empty") {
		t.Errorf("a second copy = %v, %q; want it refused because the database is not empty", err, stderr)
	}
}
