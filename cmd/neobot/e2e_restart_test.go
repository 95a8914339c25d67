package main

import (
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm/llmtest"
	"github.com/neobot/neobot/store/postgres/pgtest"
)

// restarts are the two ways a neobot process ends before it is started
// again: asked to stop (SIGTERM, the deploy path), and killed (SIGKILL, a
// crash or an OOM kill), which skips every shutdown step.
var restarts = []struct {
	name string
	halt func(t *testing.T, p *process)
}{
	{"graceful", func(t *testing.T, p *process) { p.stop(t) }},
	{"crash", func(t *testing.T, p *process) { p.kill() }},
}

// heldModel is scriptModel with two additions for turns cut short: every
// main-model call is sent on calls as it arrives, and the first one's
// reply is held back until release is called (or the test ends), so the
// test decides what the process is doing while the model is thinking.
func heldModel(t *testing.T, srv *llmtest.Server, replies ...llmtest.Reply) (calls <-chan llmtest.Request, release func()) {
	t.Helper()
	ch := make(chan llmtest.Request, len(replies)+1)
	hold := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release) // before the model server's Close, which waits for the held call
	var mu sync.Mutex
	first := true
	srv.Handle(func(r llmtest.Request) llmtest.Reply {
		if r.Model == cheapModel {
			return llmtest.Text(`{"facts":[]}`)
		}
		mu.Lock()
		ch <- r
		held := first
		first = false
		var next llmtest.Reply
		if len(replies) == 0 {
			t.Errorf("model called once more than scripted; last message: %+v", r.Messages[len(r.Messages)-1])
			next = llmtest.Reply{Status: 500, Body: `{"error":{"message":"script exhausted"}}`}
		} else {
			next, replies = replies[0], replies[1:]
		}
		mu.Unlock()
		if held {
			<-hold
		}
		return next
	})
	return ch, release
}

// waitModelCall waits for the next main-model call reported by heldModel.
func waitModelCall(t *testing.T, calls <-chan llmtest.Request, p *process) llmtest.Request {
	t.Helper()
	select {
	case r := <-calls:
		return r
	case <-p.done:
		t.Fatalf("neobot exited before calling the model: %v\n%s", p.err, p.output.String())
	case <-waitCtx(t).Done():
		t.Fatalf("the model was never called\n%s", p.output.String())
	}
	return llmtest.Request{}
}

// waitStalled waits until the call a fake stalled arrives (arrived is
// closed), failing t if p exits first or it never comes; did says what
// the call does.
func waitStalled(t *testing.T, arrived <-chan struct{}, p *process, did string) {
	t.Helper()
	select {
	case <-arrived:
	case <-p.done:
		t.Fatalf("neobot exited before it %s: %v\n%s", did, p.err, p.output.String())
	case <-waitCtx(t).Done():
		t.Fatalf("neobot never %s\n%s", did, p.output.String())
	}
}

// userTurns counts the user messages of a model call that contain text.
func userTurns(r llmtest.Request, text string) int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "user" && strings.Contains(m.Content, text) {
			n++
		}
	}
	return n
}

// haltCase is one way a process ends while a turn waits on the model.
type haltCase struct {
	name string
	// halt ends p while its model call is held; release lets the call
	// answer.
	halt func(t *testing.T, p *process, release func())
	// resumed is whether the restarted process runs the turn again (a
	// second call of the model for the first message).
	resumed bool
}

// midTurn are the ways a process ends while a turn waits on the model.
var midTurn = []haltCase{
	{
		// SIGTERM, then the model answers: the process is within its
		// shutdown grace, finishes the turn, and exits; whichever of the
		// signal and the answer it sees first, the answer is posted by the
		// stopping process and the turn is done.
		name: "graceful",
		halt: func(t *testing.T, p *process, release func()) {
			p.cmd.Process.Signal(syscall.SIGTERM)
			release()
			select {
			case <-p.done:
				if p.err != nil {
					t.Errorf("neobot exited with %v after SIGTERM", p.err)
				}
			case <-waitCtx(t).Done():
				t.Fatalf("neobot did not stop after SIGTERM\n%s", p.output.String())
			}
		},
	},
	{
		// SIGKILL: the model's answer never reaches the process; the
		// journal has the message, and the restarted process resumes it.
		name:    "crash",
		halt:    func(t *testing.T, p *process, _ func()) { p.kill() },
		resumed: true,
	},
}

// midTurnReplies: the cut call's answer, the resumed call's (the same
// text, so a second post would be counted), a follow-up's.
var midTurnReplies = []llmtest.Reply{
	llmtest.Text("The answer is 4."),
	llmtest.Text("The answer is 4."),
	llmtest.Text("Yes, still 4."),
}

// TestSlackTurnAcrossRestart: a message is journaled and its turn is
// waiting on the model when neobot is stopped or killed; the thread gets
// the answer exactly once, from the stopping process or from the
// restarted one that resumes the turn.
func TestSlackTurnAcrossRestart(t *testing.T) {
	for _, db := range databases {
		for _, tc := range midTurn {
			t.Run(db.name+"/"+tc.name, func(t *testing.T) { slackTurnAcrossRestart(t, db.use, tc) })
		}
	}
}

// databases are the stores the restart tests run on: the bbolt file, and
// a throwaway PostgreSQL (skipped when PostgreSQL is not installed,
// outside CI).
var databases = []struct {
	name string
	use  func(t *testing.T, env map[string]string)
}{
	{"bbolt", func(*testing.T, map[string]string) {}},
	{"postgres", func(t *testing.T, env map[string]string) {
		env["NEO_DATABASE_URL"] = pgtest.Database(t)
		delete(env, "NEO_DB_PATH")
	}},
}

func slackTurnAcrossRestart(t *testing.T, useDB func(*testing.T, map[string]string), tc haltCase) {
	w := newSlackWorld(t)
	useDB(t, w.env)
	replies := midTurnReplies
	if !tc.resumed {
		replies = []llmtest.Reply{replies[0], replies[2]}
	}
	calls, release := heldModel(t, w.model, replies...)
	p1 := w.start(t, 1)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "what is 2+2?"})
	waitModelCall(t, calls, p1)
	tc.halt(t, p1, release)
	if !tc.resumed {
		if got := botAnswers(w, "The answer is 4."); got != 1 {
			t.Errorf("answers posted by the stopping process = %d, want 1", got)
		}
	}

	p2 := w.start(t, 2)
	if tc.resumed {
		resumed := waitModelCall(t, calls, p2)
		if n := userTurns(resumed, "what is 2+2?"); n != 1 {
			t.Errorf("resumed model call has the question %d times, want once:\n%+v", n, resumed.Messages)
		}
	}
	w.answerIn(t, "C0GENERAL", mention.TS, "The answer is 4.")
	w.noStatusLeft(t, "C0GENERAL", mention.TS)

	// The thread's turns run one at a time, in order, resumed ones
	// first: once the follow-up is answered, any second run of the
	// first message would have posted already.
	w.slack.Message(slacktest.Msg{User: "UALICE", Text: "sure?", ThreadTS: mention.TS})
	w.answerIn(t, "C0GENERAL", mention.TS, "Yes, still 4.")
	if got := botAnswers(w, "The answer is 4."); got != 1 {
		t.Errorf("answer posted %d times, want once", got)
	}
	reqs := mainRequests(w.model)
	if got, want := len(reqs), len(replies); got != want {
		t.Errorf("model calls = %d, want %d", got, want)
	}
	// The first message is in the transcript once, whether its entry
	// was stored before the halt or only by the resumed turn (the entry
	// of a turn's message commits with its next step: see
	// docs/scaling.md).
	if n := userTurns(reqs[len(reqs)-1], "what is 2+2?"); n != 1 {
		t.Errorf("the follow-up's model call has the first question %d times, want once:\n%+v", n, reqs[len(reqs)-1].Messages)
	}
}

// TestSlackAnswerStoredNeverShown: neobot is killed after storing a
// turn's answer, while the edit that shows it (chat.update of the
// "Thinking…" line) is on its way. The restarted process finds the line
// still there, so it knows the answer was never shown, and says the stored
// answer in its place: once, without asking the model again.
func TestSlackAnswerStoredNeverShown(t *testing.T) {
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			w := newSlackWorld(t)
			db.use(t, w.env)
			scriptModel(t, w.model, llmtest.Text("The answer is 4."), llmtest.Text("Yes, still 4."))
			edit := w.slack.Stall("chat.update")
			p1 := w.start(t, 1)
			mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "what is 2+2?"})
			waitStalled(t, edit, p1, "edited its status line into the answer")
			p1.kill()

			w.start(t, 2)
			w.answerIn(t, "C0GENERAL", mention.TS, "The answer is 4.")
			w.noStatusLeft(t, "C0GENERAL", mention.TS)
			w.slack.Message(slacktest.Msg{User: "UALICE", Text: "sure?", ThreadTS: mention.TS})
			w.answerIn(t, "C0GENERAL", mention.TS, "Yes, still 4.")
			if got := botAnswers(w, "The answer is 4."); got != 1 {
				t.Errorf("answer shown %d times, want once", got)
			}
			if got := len(mainRequests(w.model)); got != 2 {
				t.Errorf("model calls = %d, want 2: the stored answer is not asked for again", got)
			}
		})
	}
}

// TestSlackLongAnswerCutAfterItsFirstPart: an answer too long for one
// message is killed after its first part reached the thread; after the
// restart the thread shows the whole answer, every line of it once, and
// nothing marked as still being written. The first part alone used to
// stay, looking like the whole answer.
func TestSlackLongAnswerCutAfterItsFirstPart(t *testing.T) {
	w := newSlackWorld(t)
	var lines []string
	for i := range 300 {
		lines = append(lines, fmt.Sprintf("Line %03d of the long answer.", i))
	}
	calls, release := heldModel(t, w.model, llmtest.Text(strings.Join(lines, "\n")))
	w.model.RefuseStreaming() // said whole, in parts: the cut between parts is what this checks
	p1 := w.start(t, 1)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "tell me everything"})
	waitModelCall(t, calls, p1)
	if _, err := w.slack.WaitMessage(waitCtx(t), func(m slacktest.Message) bool {
		return m.FromBot() && m.ThreadTS == mention.TS && strings.Contains(string(m.Blocks), `"block_id":"status"`)
	}); err != nil {
		t.Fatalf("no status line in the thread: %v", err)
	}
	second := w.slack.Stall("chat.postMessage") // the answer's second part
	release()
	waitStalled(t, second, p1, "posted the answer's second part")
	p1.kill()

	w.start(t, 2)
	var shown strings.Builder
	for _, m := range w.answerWhole(t, "C0GENERAL", mention.TS, lines[len(lines)-1]) {
		shown.WriteString(m.Text + "\n")
	}
	w.noStatusLeft(t, "C0GENERAL", mention.TS)
	for _, l := range lines {
		if n := strings.Count(shown.String(), l); n != 1 {
			t.Errorf("%q shown %d times, want once", l, n)
		}
	}
}

// TestDiscordTurnAcrossRestart: as TestSlackTurnAcrossRestart, on Discord:
// the mention's thread gets the answer exactly once.
func TestDiscordTurnAcrossRestart(t *testing.T) {
	for _, tc := range midTurn {
		t.Run(tc.name, func(t *testing.T) {
			w := newDiscordWorld(t)
			replies := midTurnReplies
			if !tc.resumed {
				replies = []llmtest.Reply{replies[0], replies[2]}
			}
			calls, release := heldModel(t, w.model, replies...)
			p1 := w.start(t, 1)
			mention := w.discord.Mention(discordtest.Msg{User: "111", Text: "what is 2+2?"})
			waitModelCall(t, calls, p1)
			tc.halt(t, p1, release)
			if !tc.resumed {
				if got := discordAnswers(w, "The answer is 4."); got != 1 {
					t.Errorf("answers posted by the stopping process = %d, want 1", got)
				}
			}

			p2 := w.start(t, 2)
			if tc.resumed {
				resumed := waitModelCall(t, calls, p2)
				if n := userTurns(resumed, "what is 2+2?"); n != 1 {
					t.Errorf("resumed model call has the question %d times, want once:\n%+v", n, resumed.Messages)
				}
			}
			w.answerIn(t, mention.ID, "The answer is 4.")
			for _, m := range w.discord.In(mention.ID) {
				if m.FromBot() && strings.HasPrefix(m.Content, "-# ⏳") {
					t.Errorf("a status line is left in the thread after the answer: %q", m.Content)
				}
			}

			w.discord.Message(discordtest.Msg{User: "111", Channel: mention.ID, Text: "sure?"})
			w.answerIn(t, mention.ID, "Yes, still 4.")
			if got := discordAnswers(w, "The answer is 4."); got != 1 {
				t.Errorf("answer posted %d times, want once", got)
			}
			if got, want := len(mainRequests(w.model)), len(replies); got != want {
				t.Errorf("model calls = %d, want %d", got, want)
			}
			if n := len(w.discord.Calls("POST /channels/{channel}/messages/{message}/threads")); n != 1 {
				t.Errorf("threads started = %d, want 1: every answer goes to the mention's thread", n)
			}
		})
	}
}

// TestDiscordApprovalAcrossRestart: a spend's gate is pending when neobot
// stops or dies; after the restart the requester's click on the old
// button completes the spend, once.
func TestDiscordApprovalAcrossRestart(t *testing.T) {
	for _, rs := range restarts {
		t.Run(rs.name, func(t *testing.T) {
			w := newDiscordWorld(t)
			p1, mention, gate := w.askSpend(t)
			rs.halt(t, p1)

			p2 := w.start(t, 2)
			resp, err := w.discord.WaitResponse(waitCtx(t), w.discord.Click("111", gate, 0))
			if err != nil {
				t.Fatalf("click after the restart got no response: %v\n%s", err, p2.output.String())
			}
			if resp.Flags&discordtest.FlagEphemeral != 0 {
				t.Errorf("response to the requester's click = %+v, want the message updated, not a private reply", resp)
			}
			w.answerIn(t, mention.ID, "Done: 5 PAX sent (tx 0xfeed).")
			p2.stop(t)

			answers := w.daemon.Answers()
			if len(answers) != 1 || !answers[0].Approved {
				t.Errorf("daemon answers = %+v, want one approval", answers)
			}
			if n := len(w.daemon.Intents()); n != 1 {
				t.Errorf("daemon got %d intents, want 1: the restart must resume, not resubmit", n)
			}
			if got := discordAnswers(w, "Done: 5 PAX sent"); got != 1 {
				t.Errorf("final answer posted %d times, want once", got)
			}
			// Even a crash between posting the request and recording where
			// it is must not ask twice: the resumed turn finds the message.
			if n := approvalMessages(w); n != 1 {
				t.Errorf("approval messages = %d, want 1: the restart must not ask again", n)
			}
			decided, ok := w.discord.MessageByID(gate.ID)
			if !ok || len(decided.Buttons()) != 0 || !strings.Contains(decided.Content, "Approved (approve) by <@111>") {
				t.Errorf("approval message after the click = %q with %d buttons, want who decided and no buttons", decided.Content, len(decided.Buttons()))
			}
		})
	}
}

// discordAnswers counts the visible bot messages containing want.
func discordAnswers(w *discordWorld, want string) int {
	n := 0
	for _, m := range w.discord.Messages() {
		if m.FromBot() && !m.Ephemeral && strings.Contains(m.Content, want) {
			n++
		}
	}
	return n
}

// approvalMessages counts the approval requests for the scripted spend the
// bot posted (later edits to a request are not counted).
func approvalMessages(w *discordWorld) int {
	n := 0
	for _, c := range w.discord.Calls("POST /channels/{channel}/messages") {
		if strings.Contains(string(c.Body), "Approve spend of 5 PAX") {
			n++
		}
	}
	return n
}
