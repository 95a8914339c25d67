package main

import (
	"encoding/json"
	"github.com/neobot/neobot/adapters/discord/discordtest"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// newQuestionWorld is a Slack world with the asker as its only server.
// Alice asks; Bob is someone else in the channel.
func newQuestionWorld(t *testing.T) (*slackWorld, *asker) {
	t.Helper()
	w := &slackWorld{slack: slacktest.New(t), model: llmtest.New(t)}
	a := newAsker(t)
	w.env = map[string]string{
		"NEO_MODEL": "test-main", "NEO_CHEAP_MODEL": cheapModel, "NEO_LLM_BASE_URL": w.model.BaseURL(),
		"NEO_DB_PATH": filepath.Join(t.TempDir(), "neobot.db"), "NEO_MANIFEST": a.manifest(t),
		"NEOBOT_ASKER_LOG": a.log,
		"SLACK_BOT_TOKEN":  "xoxb-e2e-bot-token", "SLACK_APP_TOKEN": "xapp-e2e-app-token",
		"SLACK_API_URL": w.slack.APIURL(),
	}
	return w, a
}

// askScript is the model's part of a turn that calls tool once and then
// answers with answer.
func askScript(tool, answer string) []llmtest.Reply {
	return []llmtest.Reply{llmtest.Calls(llmtest.Call("c1", "asker__"+tool, `{}`)), llmtest.Text(answer)}
}

// lastToolResult is the tool result the model saw last.
func lastToolResult(t *testing.T, w *slackWorld) string {
	t.Helper()
	calls := mainRequests(w.model)
	msgs := calls[len(calls)-1].Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "tool" {
			return msgs[i].Content
		}
	}
	t.Fatal("the model saw no tool result")
	return ""
}

// TestSlackQuestionButton: a server's question with a choice shows in the
// thread as one button per choice plus Decline and Cancel; someone else's
// click is refused in private and sends nothing; the asker's click sends
// the choice's value to the server, whose answer reaches the model, and
// the message shows who answered.
func TestSlackQuestionButton(t *testing.T) {
	w, a := newQuestionWorld(t)
	scriptModel(t, w.model, askScript("pick_size", "You picked medium.")...)
	p := w.start(t, 1)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "order me a T-shirt"})
	q := w.waitGate(t, p, mention.TS, "Which size should the T-shirt be?")
	if got := strings.Join(buttonLabels(q), "|"); got != "Small|Medium|Large|Decline|Cancel" {
		t.Errorf("question buttons = %s, want Small|Medium|Large|Decline|Cancel", got)
	}
	if !strings.Contains(q.Rendered(), "asker/pick_size asks") || !strings.Contains(q.Rendered(), "only they can answer") {
		t.Errorf("question message = %q, want the tool named and who may answer", q.Rendered())
	}

	w.slack.Click("UBOB", q, 1)
	if _, err := w.slack.WaitMessage(waitCtx(t), func(m slacktest.Message) bool {
		return m.Ephemeral && m.Recipient == "UBOB" && strings.Contains(m.Text, "only <@UALICE> can answer")
	}); err != nil {
		t.Fatalf("someone else's click got no private refusal: %v", err)
	}
	if got := a.answers(t); len(got) != 0 {
		t.Fatalf("someone else's click answered the server: %+v", got)
	}

	w.slack.Click("UALICE", q, 1)
	w.answerIn(t, "C0GENERAL", mention.TS, "You picked medium.")
	if got := a.answers(t); len(got) != 1 || got[0].Action != "accept" || got[0].Content["size"] != "m" {
		t.Errorf("the server heard %+v, want accept with size m", got)
	}
	if res := lastToolResult(t, w); res != "size: m" {
		t.Errorf("tool result = %q, want size: m", res)
	}
	shown, _ := w.slack.MessageAt(q.Channel, q.TS)
	if len(shown.Buttons()) != 0 || !strings.Contains(shown.Rendered(), "Answered (Medium) by <@UALICE>") {
		t.Errorf("question after the answer = %q with %d buttons, want who answered, no buttons", shown.Rendered(), len(shown.Buttons()))
	}
	p.stop(t)
}

// TestSlackQuestionLink: a URL-mode question shows its link (made inert)
// with Done, Decline and Cancel; only the person whose turn it is may
// answer, and Done tells the server accept.
func TestSlackQuestionLink(t *testing.T) {
	w, a := newQuestionWorld(t)
	scriptModel(t, w.model, askScript("link_account", "Your account is linked.")...)
	p := w.start(t, 1)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "link my Example account"})
	q := w.waitGate(t, p, mention.TS, "Sign in to Example to link your account.")
	if got := strings.Join(buttonLabels(q), "|"); got != "Open link|Done|Decline|Cancel" {
		t.Errorf("question buttons = %s, want Open link|Done|Decline|Cancel", got)
	}
	if !strings.Contains(string(q.Blocks), `"url":"https://example.com/link?session=s1`) {
		t.Errorf("question blocks = %s, want the link button opening the page", q.Blocks)
	}
	if r := q.Rendered(); !strings.Contains(r, "asker/link_account asks you to open a link") ||
		!strings.Contains(r, "https://example.com/link?session=s1") || !strings.Contains(r, "who=%3C!here%3E") || strings.Contains(r, "<!here>") {
		t.Errorf("question message = %q, want the tool, and the link with its markup made inert", r)
	}
	w.slack.Click("UBOB", q, 1)
	if _, err := w.slack.WaitMessage(waitCtx(t), func(m slacktest.Message) bool {
		return m.Ephemeral && m.Recipient == "UBOB" && strings.Contains(m.Text, "only <@UALICE> can answer")
	}); err != nil {
		t.Fatalf("someone else's click got no private refusal: %v", err)
	}
	w.slack.Click("UALICE", q, 1)
	w.answerIn(t, "C0GENERAL", mention.TS, "Your account is linked.")
	if got := a.answers(t); len(got) != 1 || got[0].Action != "accept" {
		t.Errorf("the server heard %+v, want accept", got)
	}
	p.stop(t)
}

// TestSlackQuestionDecline: Decline sends decline; the tool carries on
// without an answer.
func TestSlackQuestionDecline(t *testing.T) {
	w, a := newQuestionWorld(t)
	scriptModel(t, w.model, askScript("pick_size", "No T-shirt then.")...)
	p := w.start(t, 1)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "order me a T-shirt"})
	q := w.waitGate(t, p, mention.TS, "Which size")
	w.slack.Click("UALICE", q, 3) // Decline
	w.answerIn(t, "C0GENERAL", mention.TS, "No T-shirt then.")
	if got := a.answers(t); len(got) != 1 || got[0].Action != "decline" {
		t.Errorf("the server heard %+v, want decline", got)
	}
	shown, _ := w.slack.MessageAt(q.Channel, q.TS)
	if !strings.Contains(shown.Rendered(), "Declined by <@UALICE>") {
		t.Errorf("question after Decline = %q, want declined by Alice", shown.Rendered())
	}
	p.stop(t)
}

// TestSlackQuestionTimeout: a question nobody answers is cancelled after
// NEO_QUESTION_TIMEOUT, and the message says it expired; the call's own
// timeout does not run while the question waits.
func TestSlackQuestionTimeout(t *testing.T) {
	w, a := newQuestionWorld(t)
	// The tool's timeout is shorter than the question's: it must not run
	// while the question waits, or the call would time out first.
	w.env["NEO_QUESTION_TIMEOUT"] = "2s"
	w.env["NEO_TOOL_TIMEOUT"] = "1s"
	scriptModel(t, w.model, askScript("pick_size", "Nobody answered.")...)
	p := w.start(t, 1)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "order me a T-shirt"})
	q := w.waitGate(t, p, mention.TS, "Which size")
	w.answerIn(t, "C0GENERAL", mention.TS, "Nobody answered.")
	if got := a.answers(t); len(got) != 1 || got[0].Action != "cancel" {
		t.Errorf("the server heard %+v, want cancel", got)
	}
	if res := lastToolResult(t, w); res != "the user chose no size: cancel" {
		t.Errorf("tool result = %q, want the tool's own answer to cancel (not a tool timeout)", res)
	}
	shown, _ := w.slack.MessageAt(q.Channel, q.TS)
	if len(shown.Buttons()) != 0 || !strings.Contains(shown.Rendered(), "Expired") {
		t.Errorf("question after the timeout = %q, want expired without buttons", shown.Rendered())
	}
	p.stop(t)
}

// TestSlackQuestionForm: a question with fields to type opens a modal
// from its Answer… button, pre-filled with the schema's defaults; a value
// out of range keeps the modal open with the problem under its field; a
// good one sends the typed values with the defaults of the fields left
// as they were.
func TestSlackQuestionForm(t *testing.T) {
	w, a := newQuestionWorld(t)
	scriptModel(t, w.model, askScript("book", "Booked.")...)
	p := w.start(t, 1)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "book a table"})
	q := w.waitGate(t, p, mention.TS, "Who is the table for?")
	if got := strings.Join(buttonLabels(q), "|"); got != "Answer…|Decline|Cancel" {
		t.Errorf("form question buttons = %s, want Answer…|Decline|Cancel", got)
	}
	w.slack.Click("UBOB", q, 0)
	if _, err := w.slack.WaitMessage(waitCtx(t), func(m slacktest.Message) bool {
		return m.Ephemeral && m.Recipient == "UBOB" && strings.Contains(m.Text, "only <@UALICE> can answer")
	}); err != nil {
		t.Fatalf("someone else's Answer… click got no private refusal: %v", err)
	}
	w.slack.Click("UALICE", q, 0)
	if _, err := w.slack.WaitCall(waitCtx(t), "views.open", nil); err != nil {
		t.Fatalf("the Answer… click opened no modal: %v\n%s", err, p.output.String())
	}
	views := w.slack.Views()
	if len(views) != 1 {
		t.Fatalf("modals opened = %d, want 1 (Bob's click must open none)", len(views))
	}
	v := views[0]
	initial := map[string]string{}
	for _, in := range v.Inputs {
		initial[in.BlockID] = in.Initial
	}
	if len(v.Inputs) != 3 || initial["name"] != "Ada" {
		t.Errorf("modal inputs = %+v, want name (pre-filled Ada), guests, email", v.Inputs)
	}

	ack, err := w.slack.WaitAck(waitCtx(t), w.slack.Submit("UALICE", v, map[string]string{"guests": "12"}))
	if err != nil || !strings.Contains(string(ack.Payload), `"response_action":"errors"`) || !strings.Contains(string(ack.Payload), "Guests must be at most 10") {
		t.Fatalf("submission with 12 guests acked %s (%v), want the modal kept open with the problem", ack.Payload, err)
	}
	if got := a.answers(t); len(got) != 0 {
		t.Fatalf("a refused submission reached the server: %+v", got)
	}
	ack, err = w.slack.WaitAck(waitCtx(t), w.slack.Submit("UALICE", v, map[string]string{"guests": "3", "name": ""}))
	if err != nil || strings.Contains(string(ack.Payload), "errors") {
		t.Fatalf("good submission acked %s (%v), want the modal closed", ack.Payload, err)
	}
	w.answerIn(t, "C0GENERAL", mention.TS, "Booked.")
	got := a.answers(t)
	if len(got) != 1 || got[0].Action != "accept" || got[0].Content["name"] != "Ada" || got[0].Content["guests"] != float64(3) {
		t.Errorf("the server heard %+v, want accept with name Ada (the default) and 3 guests", got)
	}
	if _, ok := got[0].Content["email"]; ok {
		t.Errorf("the server heard an email nobody gave: %+v", got[0].Content)
	}
	shown, _ := w.slack.MessageAt(q.Channel, q.TS)
	if !strings.Contains(shown.Rendered(), "Answered by <@UALICE>") {
		t.Errorf("question after the form = %q, want answered by Alice", shown.Rendered())
	}
	p.stop(t)
}

// questionMessages counts the question messages for text the bot posted
// (later edits not counted).
func questionMessages(w *slackWorld, text string) int {
	n := 0
	for _, c := range w.slack.Calls("chat.postMessage") {
		if strings.Contains(c.Params.Get("blocks"), text) {
			n++
		}
	}
	return n
}

// TestSlackQuestionAcrossRestart: neobot stops (or crashes) while a
// server's question waits. A call that only reads is made again by the
// resumed turn: the server asks again, the question already in the thread
// stands for it (not posted twice), and a click after the restart answers
// it. A call that writes is never made again: the question shows it was
// cancelled by the restart, and the model hears the outcome is unknown.
func TestSlackQuestionAcrossRestart(t *testing.T) {
	for _, db := range databases {
		for _, rs := range restarts {
			if db.name == "postgres" && rs.name != "graceful" {
				// Not after a crash on PostgreSQL: the resumed turn's
				// FindGate misses the posted message, because slacktest's
				// message timestamps count from the fake's start, not the
				// clock, and PostgreSQL's setup puts the gate's Created more
				// than a second after them.
				continue
			}
			questionAcrossRestart(t, db.name+"/"+rs.name, func(t *testing.T) (*slackWorld, *asker) {
				w, a := newQuestionWorld(t)
				db.use(t, w.env)
				return w, a
			}, rs.halt)
		}
	}
}

func questionAcrossRestart(t *testing.T, name string, world func(*testing.T) (*slackWorld, *asker), halt func(*testing.T, *process)) {
	{
		t.Run("read/"+name, func(t *testing.T) {
			w, a := world(t)
			scriptModel(t, w.model, askScript("pick_size", "You picked large.")...)
			p1 := w.start(t, 1)
			mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "order me a T-shirt"})
			q := w.waitGate(t, p1, mention.TS, "Which size")
			halt(t, p1)

			p2 := w.start(t, 2)
			waitAsked(t, a, "pick_size", 2, p2)
			w.slack.Click("UALICE", q, 2) // Large
			w.answerIn(t, "C0GENERAL", mention.TS, "You picked large.")
			got := a.answers(t)
			if len(got) == 0 || got[len(got)-1].Action != "accept" || got[len(got)-1].Content["size"] != "l" {
				t.Errorf("the server heard %+v, want the last answer accept with size l", got)
			}
			if n := questionMessages(w, "Which size"); n != 1 {
				t.Errorf("question posted %d times, want once: the restart must not ask twice", n)
			}
			p2.stop(t)
		})
	}
	{
		t.Run("write/"+name, func(t *testing.T) {
			w, a := world(t)
			scriptModel(t, w.model, askScript("book", "The booking may not have gone through.")...)
			p1 := w.start(t, 1)
			mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "book a table"})
			q := w.waitGate(t, p1, mention.TS, "Who is the table for?")
			halt(t, p1)

			p2 := w.start(t, 2)
			w.answerIn(t, "C0GENERAL", mention.TS, "The booking may not have gone through.")
			if n := a.asked(t, "book"); n != 1 {
				t.Errorf("book asked %d times, want once: a write is never made again after a restart", n)
			}
			for _, e := range a.answers(t) {
				if e.Action == "accept" {
					t.Errorf("the server heard an accept nobody gave: %+v", e)
				}
			}
			if res := lastToolResult(t, w); !strings.Contains(res, "was not run again") {
				t.Errorf("tool result = %q, want that it was not run again", res)
			}
			shown, _ := w.slack.MessageAt(q.Channel, q.TS)
			if len(shown.Buttons()) != 0 || !strings.Contains(shown.Rendered(), "neobot restarted while waiting for this answer") {
				t.Errorf("question after the restart = %q with %d buttons, want it cancelled by the restart", shown.Rendered(), len(shown.Buttons()))
			}
			p2.stop(t)
		})
	}
}

// waitAsked waits until tool has asked n questions.
func waitAsked(t *testing.T, a *asker, tool string, n int, p *process) {
	t.Helper()
	ctx := waitCtx(t)
	for a.asked(t, tool) < n {
		select {
		case <-ctx.Done():
			t.Fatalf("%s asked %d questions, want %d\n%s", tool, a.asked(t, tool), n, p.output.String())
		case <-time.After(10 * time.Millisecond): // polling the server's log, not timing the bot
		}
	}
}

// TestDiscordQuestionModal: in Discord, a form question's Answer… button
// is answered with a modal pre-filled with the defaults; someone else's
// click is refused in private; a value out of range is told in private and
// sends nothing; a good one updates the question's message and sends the
// values, defaults applied, to the server. A choice question is answered
// with a button.
func TestDiscordQuestionModal(t *testing.T) {
	w := newDiscordWorld(t)
	a := newAsker(t)
	w.env["NEO_MANIFEST"], w.env["NEOBOT_ASKER_LOG"] = a.manifest(t), a.log
	scriptModel(t, w.model,
		llmtest.Calls(llmtest.Call("c1", "asker__book", `{}`)), llmtest.Text("Booked for 4."),
		llmtest.Calls(llmtest.Call("c2", "asker__pick_size", `{}`)), llmtest.Text("Small it is."),
	)
	p := w.start(t, 1)
	mention := w.discord.Mention(discordtest.Msg{User: "111", Text: "book a table"})
	q, err := w.discord.WaitMessage(waitCtx(t), func(m discordtest.Message) bool {
		return m.FromBot() && len(m.Buttons()) == 3 && strings.Contains(m.Content, "Who is the table for?")
	})
	if err != nil {
		t.Fatalf("no question message: %v\n%s", err, p.output.String())
	}
	resp, err := w.discord.WaitResponse(waitCtx(t), w.discord.Click("222", q, 0))
	if err != nil || resp.Type == discordtest.ResponseModal || !strings.Contains(resp.Content, "only <@111> can answer") {
		t.Fatalf("someone else's Answer… click = %+v, %v; want a private refusal", resp, err)
	}
	modal, err := w.discord.WaitResponse(waitCtx(t), w.discord.Click("111", q, 0))
	if err != nil || modal.Type != discordtest.ResponseModal {
		t.Fatalf("Answer… click = %+v, %v; want a modal\n%s", modal, err, p.output.String())
	}
	inputs := map[string]discordtest.Input{}
	for _, in := range modal.Inputs() {
		inputs[in.CustomID] = in
	}
	if len(inputs) != 3 || inputs["name"].Value != "Ada" || !inputs["guests"].Required || inputs["email"].Required {
		t.Fatalf("modal inputs = %+v, want name (pre-filled Ada), guests (required), email", inputs)
	}
	resp, err = w.discord.WaitResponse(waitCtx(t), w.discord.SubmitModal("111", modal, map[string]string{"guests": "0"}))
	if err != nil || resp.Flags&discordtest.FlagEphemeral == 0 || !strings.Contains(resp.Content, "Guests must be at least 1") {
		t.Fatalf("submission of 0 guests = %+v, %v; want a private sentence saying what to fix", resp, err)
	}
	if got := a.answers(t); len(got) != 0 {
		t.Fatalf("a refused submission reached the server: %+v", got)
	}
	modal, err = w.discord.WaitResponse(waitCtx(t), w.discord.Click("111", q, 0))
	if err != nil || modal.Type != discordtest.ResponseModal {
		t.Fatalf("second Answer… click = %+v, %v; want the modal again", modal, err)
	}
	resp, err = w.discord.WaitResponse(waitCtx(t), w.discord.SubmitModal("111", modal, map[string]string{"guests": "4", "name": ""}))
	if err != nil || resp.Type != discordtest.ResponseUpdate || !strings.Contains(resp.Content, "Answered by <@111>") {
		t.Fatalf("good submission = %+v, %v; want the question updated to answered", resp, err)
	}
	w.answerIn(t, mention.ID, "Booked for 4.")
	got := a.answers(t)
	if len(got) != 1 || got[0].Action != "accept" || got[0].Content["name"] != "Ada" || got[0].Content["guests"] != float64(4) {
		t.Errorf("the server heard %+v, want accept with name Ada (the default) and 4 guests", got)
	}

	second := w.discord.Mention(discordtest.Msg{User: "111", Text: "and a T-shirt"})
	choice, err := w.discord.WaitMessage(waitCtx(t), func(m discordtest.Message) bool {
		return m.FromBot() && len(m.Buttons()) == 5 && strings.Contains(m.Content, "Which size")
	})
	if err != nil {
		t.Fatalf("no choice question: %v\n%s", err, p.output.String())
	}
	if resp, err := w.discord.WaitResponse(waitCtx(t), w.discord.Click("111", choice, 0)); err != nil || resp.Type != discordtest.ResponseUpdate {
		t.Fatalf("Small click = %+v, %v; want the message updated", resp, err)
	}
	w.answerIn(t, second.ID, "Small it is.")
	if got := a.answers(t); len(got) != 2 || got[1].Content["size"] != "s" {
		t.Errorf("the server heard %+v, want size s second", got)
	}
	p.stop(t)
}

// TestWebQuestionForm: on the web a server's question is a question.asked
// event carrying its form; someone else's answer is refused; a value that
// breaks the form is 422 with a sentence under its field; a good one is
// sent, defaults applied, and the question ends with gate.decided.
func TestWebQuestionForm(t *testing.T) {
	w := newWebWorld(t)
	a := newAsker(t)
	w.env["NEO_MANIFEST"], w.env["NEOBOT_ASKER_LOG"] = a.manifest(t), a.log
	// The web world asks before writes; the question, not an approval,
	// is what this test is about.
	w.env["NEO_CONFIG"] = writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{
		"default": map[string]any{"side_effects": map[string]string{"read": "allow", "write": "allow"}}}})
	scriptModel(t, w.model, llmtest.Calls(llmtest.Call("c1", "asker__book", `{}`)), llmtest.Text("Booked for 2."))
	p := w.start(t)
	var created struct{ ID string }
	w.call(t, w.alice, "POST", "/v1/conversations", map[string]any{}, &created)
	events := w.follow(t, w.alice, created.ID, "")
	w.call(t, w.alice, "POST", "/v1/conversations/"+created.ID+"/messages", map[string]string{"text": "book a table"}, nil)
	asked, _ := events.next(t, "question.asked")
	var q struct {
		Token   string
		Options []string
		Form    []struct {
			Name, Default string
			Required      bool
		}
	}
	if err := json.Unmarshal(asked.Data, &q); err != nil || len(q.Form) != 3 || strings.Join(q.Options, "|") != "Answer…|Decline|Cancel" {
		t.Fatalf("question.asked = %s (%v), want the form's three fields and its buttons", asked.Data, err)
	}
	if got := w.call(t, w.bob, "POST", "/v1/gates/"+q.Token+"/form", map[string]any{"values": map[string]any{"guests": 2}}, nil); got != http.StatusForbidden && got != http.StatusNotFound {
		t.Errorf("Bob answering Alice's question = %d, want refused", got)
	}
	if got := w.call(t, w.alice, "POST", "/v1/gates/"+q.Token+"/answer", map[string]int{"option": 0}, nil); got != http.StatusBadRequest {
		t.Errorf("Answer… at /answer = %d, want 400 pointing at /form", got)
	}
	var refused struct{ Problems map[string]string }
	if got := w.call(t, w.alice, "POST", "/v1/gates/"+q.Token+"/form", map[string]any{"values": map[string]any{"guests": 2, "email": "not-an-email"}}, &refused); got != http.StatusUnprocessableEntity || refused.Problems["email"] == "" {
		t.Errorf("a bad email = %d %+v, want 422 naming email", got, refused)
	}
	if got := w.call(t, w.alice, "POST", "/v1/gates/"+q.Token+"/form", map[string]any{"values": map[string]any{"guests": 2}}, nil); got != http.StatusOK {
		t.Fatalf("Alice's answer = %d, want 200", got)
	}
	if final, _ := events.next(t, "answer"); !strings.Contains(text(final), "Booked for 2.") {
		t.Errorf("answer = %q", text(final))
	}
	got := a.answers(t)
	if len(got) != 1 || got[0].Content["name"] != "Ada" || got[0].Content["guests"] != float64(2) {
		t.Errorf("the server heard %+v, want name Ada (the default) and 2 guests", got)
	}
	p.stop(t)
}

// TestWebQuestionLink: on the web a URL-mode question carries its page
// (url) and Done, Decline and Cancel; Done answers accept.
func TestWebQuestionLink(t *testing.T) {
	w := newWebWorld(t)
	a := newAsker(t)
	w.env["NEO_MANIFEST"], w.env["NEOBOT_ASKER_LOG"] = a.manifest(t), a.log
	scriptModel(t, w.model, llmtest.Calls(llmtest.Call("c1", "asker__link_account", `{}`)), llmtest.Text("Linked."))
	p := w.start(t)
	var created struct{ ID string }
	w.call(t, w.alice, "POST", "/v1/conversations", map[string]any{}, &created)
	events := w.follow(t, w.alice, created.ID, "")
	w.call(t, w.alice, "POST", "/v1/conversations/"+created.ID+"/messages", map[string]string{"text": "link my account"}, nil)
	asked, _ := events.next(t, "question.asked")
	var q struct {
		Token, URL string
		Options    []string
	}
	if err := json.Unmarshal(asked.Data, &q); err != nil || !strings.HasPrefix(q.URL, "https://example.com/link?session=s1") || strings.Contains(q.URL, "<") ||
		strings.Join(q.Options, "|") != "Done|Decline|Cancel" {
		t.Fatalf("question.asked = %s (%v), want the page's inert URL and Done|Decline|Cancel", asked.Data, err)
	}
	if got := w.call(t, w.alice, "POST", "/v1/gates/"+q.Token+"/answer", map[string]int{"option": 0}, nil); got != http.StatusOK {
		t.Fatalf("Done = %d, want 200", got)
	}
	if final, _ := events.next(t, "answer"); !strings.Contains(text(final), "Linked.") {
		t.Errorf("answer = %q", text(final))
	}
	if got := a.answers(t); len(got) != 1 || got[0].Action != "accept" {
		t.Errorf("the server heard %+v, want accept", got)
	}
	p.stop(t)
}
