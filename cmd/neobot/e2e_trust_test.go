package main

import (
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/delegate/delegatetest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// waitGate waits for an approval message in the thread whose text holds
// question.
func (w *slackWorld) waitGate(t *testing.T, p *process, threadTS, question string) slacktest.Message {
	t.Helper()
	gate, err := w.slack.WaitMessage(waitCtx(t), func(m slacktest.Message) bool {
		return m.FromBot() && m.ThreadTS == threadTS && len(m.Buttons()) > 0 && strings.Contains(m.Rendered(), question)
	})
	if err != nil {
		t.Fatalf("no approval message %q in thread %s: %v\n%s", question, threadTS, err, p.output.String())
	}
	return gate
}

// TestSlackDontSendDenies: the requester clicks a button labelled "Don't
// send" and the daemon hears approved: false. Only the plain yes is drawn
// as the primary button.
func TestSlackDontSendDenies(t *testing.T) {
	w := newSlackWorld(t)
	w.daemon.Script(delegatetest.Intent{
		Gates: []delegatetest.Gate{{NodeID: "n1", Question: "Send 5 PAX to 0xabc?", Options: []string{"Yes, send 5 PAX", "Don't send"}}},
	})
	scriptModel(t, w.model,
		llmtest.Calls(llmtest.Call("c1", "core_execute", `{"intent":"send 5 PAX to 0xabc"}`)),
		llmtest.Text("Understood: nothing was sent."),
	)
	p := w.start(t, 1)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "send 5 PAX to 0xabc"})
	gate := w.waitGate(t, p, mention.TS, "Send 5 PAX to 0xabc?")
	buttons := gate.Buttons()
	if len(buttons) != 2 || buttons[0].Style != "primary" || buttons[1].Style == "primary" {
		t.Errorf("buttons = %+v, want only %q primary", buttons, "Yes, send 5 PAX")
	}

	w.slack.Click("UALICE", gate, 1)
	answers, err := w.daemon.WaitAnswers(waitCtx(t), 1)
	if err != nil {
		t.Fatalf("the daemon never heard the click: %v\n%s", err, p.output.String())
	}
	if answers[0].Approved || answers[0].Answer != "Don't send" {
		t.Errorf("daemon answer = %+v, want approved: false with the answer \"Don't send\"", answers[0])
	}
	w.answerIn(t, "C0GENERAL", mention.TS, "Understood: nothing was sent.")
	p.stop(t)
}

// TestSlackRepeatedIntentAsksAgain: the daemon, restarted on an empty
// database, hands out an intent ID it used before. The new spend, in
// another thread, shows its own buttons and waits for a click instead of
// reusing the first spend's approval.
func TestSlackRepeatedIntentAsksAgain(t *testing.T) {
	w := newSlackWorld(t)
	gate := delegatetest.Gate{NodeID: "n1", Question: "Approve spend of 5 PAX?", Options: []string{"approve", "deny"}}
	w.daemon.Script(
		delegatetest.Intent{Match: "bob", ID: "i1", Gates: []delegatetest.Gate{gate}, Answer: "paid bob"},
		delegatetest.Intent{Match: "carol", ID: "i1", Gates: []delegatetest.Gate{gate}, Answer: "paid carol"},
	)
	scriptModel(t, w.model,
		llmtest.Calls(llmtest.Call("c1", "core_execute", `{"intent":"send 5 PAX to bob"}`)),
		llmtest.Text("Bob is paid."),
		llmtest.Calls(llmtest.Call("c1", "core_execute", `{"intent":"send 5 PAX to carol"}`)),
		llmtest.Text("Carol is paid."),
	)
	p := w.start(t, 1)

	first := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "send 5 PAX to bob"})
	w.slack.Click("UALICE", w.waitGate(t, p, first.TS, "Approve spend of 5 PAX?"), 0)
	w.answerIn(t, "C0GENERAL", first.TS, "Bob is paid.")

	second := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "send 5 PAX to carol"})
	again := w.waitGate(t, p, second.TS, "Approve spend of 5 PAX?")
	if _, err := w.daemon.WaitIntents(waitCtx(t), 2); err != nil {
		t.Fatal(err)
	}
	if got := w.daemon.Answers(); len(got) != 1 {
		t.Fatalf("daemon answers before the second click = %+v, want only the first spend's", got)
	}
	w.slack.Click("UALICE", again, 0)
	w.answerIn(t, "C0GENERAL", second.TS, "Carol is paid.")
	if got := w.daemon.Answers(); len(got) != 2 || !got[1].Approved {
		t.Errorf("daemon answers = %+v, want the second spend approved by its own click", got)
	}
	p.stop(t)
}

// TestSlackSpendRefusedForUnlistedUser: a user who is not in
// SLACK_SPEND_USERS asks for a spend; the model is told in words and the
// daemon sees no request at all.
func TestSlackSpendRefusedForUnlistedUser(t *testing.T) {
	w := newSlackWorld(t)
	w.daemon.SetDefault(delegatetest.Intent{Answer: "should never run"})
	scriptModel(t, w.model,
		llmtest.Calls(llmtest.Call("c1", "core_execute", `{"intent":"send 5 PAX to 0xabc"}`)),
		llmtest.Text("Sorry, you are not allowed to ask me for spends."),
	)
	p := w.start(t, 1)
	mention := w.slack.Mention(slacktest.Msg{User: "UBOB", Text: "send 5 PAX to 0xabc"})
	w.answerIn(t, "C0GENERAL", mention.TS, "not allowed to ask me for spends")
	p.stop(t)

	if n := len(w.daemon.Requests()); n != 0 {
		t.Errorf("daemon requests = %d, want none", n)
	}
	calls := mainRequests(w.model)
	if len(calls) != 2 {
		t.Fatalf("model calls = %d, want 2", len(calls))
	}
	last := calls[1].Messages[len(calls[1].Messages)-1]
	if last.Role != "tool" || !strings.Contains(last.Content, "UBOB") || !strings.Contains(last.Content, "SLACK_SPEND_USERS") || !strings.Contains(last.Content, "nothing was submitted") {
		t.Errorf("tool result the model saw = %q, want a refusal naming UBOB, SLACK_SPEND_USERS and that nothing was submitted", last.Content)
	}
}

// TestSlackStartRefusedWithoutSpendAuthority: with a daemon configured,
// neobot will not start in Slack until it is told who may ask for spends
// and who may approve them.
func TestSlackStartRefusedWithoutSpendAuthority(t *testing.T) {
	w := newSlackWorld(t)
	delete(w.env, "SLACK_SPEND_USERS")
	delete(w.env, "SLACK_APPROVERS")
	delete(w.env, "NEO_SELF_APPROVE")
	_, out, err := run(t, w.env, "")
	if err == nil {
		t.Fatalf("neobot started without spend settings:\n%s", out)
	}
	for _, want := range []string{"SLACK_SPEND_USERS", "SLACK_APPROVERS", "NEO_SELF_APPROVE"} {
		if !strings.Contains(out, want) {
			t.Errorf("start-up error does not name %s:\n%s", want, out)
		}
	}
}

// TestCheckNamesMissingSpendAuthority: `neobot check` reports the same
// missing spend settings start-up would refuse, before anyone deploys.
func TestCheckNamesMissingSpendAuthority(t *testing.T) {
	env := map[string]string{
		"NEO_MANIFEST":      fsManifest(t, t.TempDir()),
		"DISCORD_BOT_TOKEN": "check-token",
		"NEO_DAEMON_URL":    "http://127.0.0.1:1",
	}
	_, stderr, err := run(t, env, "", "check")
	if err == nil {
		t.Fatal("neobot check passed with a daemon and no spend settings, want a non-zero exit")
	}
	for _, want := range []string{"DISCORD_SPEND_USERS", "DISCORD_APPROVERS", "NEO_SELF_APPROVE"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("check error does not name %s:\n%s", want, stderr)
		}
	}
}
