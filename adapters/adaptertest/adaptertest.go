// Package adaptertest is the conformance suite every chat adapter passes,
// as store/storetest is for the stores. [Run] drives an adapter through its
// platform's fake the way people use it (they write, click and say "stop")
// and checks what they would see: an answer in its thread, what was said
// in a private place kept there, a stop only from those who may stop a
// turn, shown in the thread, and an approval refused to the wrong person,
// accepted from the right one and shown on its message.
//
// Each adapter's tests implement [Driver] over its fake (slacktest,
// discordtest) in a small harness; what is the platform's own (button
// styles, markup, where a private note goes) stays in that adapter's tests.
package adaptertest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/internal/intake"
	"github.com/neobot/neobot/adapters/internal/intake/intaketest"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/memory"
	"github.com/neobot/neobot/core/memory/memorytest"
)

// Driver starts an adapter against its platform's fake for one test.
type Driver interface {
	// People are the platform's user IDs the suite acts as.
	People() People
	// Start runs a fresh adapter, with People().Approver among its
	// approvers, and stops it when t ends. The suite runs tests in
	// parallel.
	Start(t *testing.T) Chat
}

// Chat is one running adapter and its platform's fake, seen as the people
// in it see it. Threads are the harness's own references.
type Chat interface {
	// Reporter and Approver are the adapter's, as the hub uses them.
	Reporter(t core.Thread) core.Reporter
	Approver(t core.Thread, requester string) core.Approver
	// Hub is the fake hub the adapter submits to; the suite sets its turns.
	Hub() *intaketest.Hub
	// Public is a channel everyone in the workspace can read; Private are
	// the places whose words must stay in them (a DM among them).
	Public() Place
	Private() []Place
	// Post writes text as user in place so that it reaches Neo (with a
	// mention where the place needs one) and returns the thread Neo
	// answers in. Reply writes in a thread Neo is part of, without one.
	Post(place Place, user, text string) (thread string)
	Reply(thread, user, text string)
	// Messages are Neo's messages so far, as they show now; WaitMessage
	// waits for one that satisfies pred and returns it as it is then.
	Messages() []Message
	WaitMessage(ctx context.Context, pred func(Message) bool) (Message, error)
	// Click clicks button i of Neo's message m, as m shows it, as user
	// and waits for the platform's answer to the click.
	Click(ctx context.Context, user string, m Message, i int) error
	// WaitIdle waits until every accepted message has reached the hub.
	WaitIdle(ctx context.Context) error
}

// People are the user IDs the suite acts as.
type People struct {
	Requester string // asks Neo for a spend
	Approver  string // an approver in the adapter's options
	Stranger  string // in the thread, but neither
	// MayStop are others who may stop a turn that waits on an approval
	// (a Slack workspace admin, a Discord approver named by user ID).
	MayStop []string
}

// Place is somewhere people talk to Neo; ID is the harness's reference.
type Place struct {
	Name, ID string
}

// Message is one of Neo's messages as people see it.
type Message struct {
	Ref    string // the harness's reference, the same across edits
	Thread string // where it shows, as Post returns threads
	// To is the one person it is for: in their DM, or shown to them
	// alone in a place others see (Ephemeral). "" when it is for everyone
	// in Thread.
	To        string
	Ephemeral bool
	Text      string // as rendered
	Buttons   int
	Edits     int
	// Fake is the fake's own message as it was then, for Click: a person
	// may click a button the message no longer shows.
	Fake any
}

// Run runs the suite against the adapter d starts.
func Run(t *testing.T, d Driver) {
	t.Run("Answer", func(t *testing.T) { t.Parallel(); testAnswer(t, d) })
	t.Run("PrivatePlacesStayPrivate", func(t *testing.T) { t.Parallel(); testPrivacy(t, d) })
	t.Run("Stop", func(t *testing.T) { t.Parallel(); testStop(t, d) })
	t.Run("ApprovalByRequester", func(t *testing.T) { t.Parallel(); testApprovalByRequester(t, d) })
	t.Run("ApprovalByAnother", func(t *testing.T) { t.Parallel(); testApprovalByAnother(t, d) })
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitVisible waits for a message of Neo's in thread that everyone there
// sees and that contains want.
func waitVisible(ctx context.Context, t *testing.T, c Chat, thread, want string) Message {
	t.Helper()
	m, err := c.WaitMessage(ctx, func(m Message) bool { return m.Thread == thread && !m.Ephemeral && strings.Contains(m.Text, want) })
	if err != nil {
		t.Fatalf("nothing visible in the thread says %q: %v\nvisible: %q", want, err, visible(c, thread))
	}
	return m
}

// visible is what Neo posted in thread that everyone there sees.
func visible(c Chat, thread string) []string {
	var out []string
	for _, m := range c.Messages() {
		if m.Thread == thread && !m.Ephemeral {
			out = append(out, m.Text)
		}
	}
	return out
}

// notes is what Neo told user alone: in their DM, or shown to them only.
func notes(c Chat, user string) []string {
	var out []string
	for _, m := range c.Messages() {
		if m.To == user {
			out = append(out, m.Text)
		}
	}
	return out
}

// waitNote waits for a message to user alone that contains want, in
// their DM or, shown to them only, in thread.
func waitNote(ctx context.Context, t *testing.T, c Chat, user, want, thread string) {
	t.Helper()
	m, err := c.WaitMessage(ctx, func(m Message) bool { return m.To == user && strings.Contains(m.Text, want) })
	if err != nil {
		t.Fatalf("no note to %s alone says %q: %v\nnotes: %q", user, want, err, notes(c, user))
	}
	if m.Ephemeral && m.Thread != thread {
		t.Errorf("note %q to %s shows in %s, want it in the thread %s", m.Text, user, m.Thread, thread)
	}
}

// waitGate waits for the approval message in thread.
func waitGate(ctx context.Context, t *testing.T, c Chat, thread string) Message {
	t.Helper()
	m, err := c.WaitMessage(ctx, func(m Message) bool { return m.Thread == thread && !m.Ephemeral && m.Buttons > 0 })
	if err != nil {
		t.Fatalf("no approval message in the thread: %v\nvisible: %q", err, visible(c, thread))
	}
	return m
}

// now returns Neo's message m as it shows now.
func now(c Chat, m Message) Message {
	for _, n := range c.Messages() {
		if n.Ref == m.Ref {
			return n
		}
	}
	return Message{}
}

// waitGateShows waits for the approval message to say want, its buttons
// gone.
func waitGateShows(ctx context.Context, t *testing.T, c Chat, g Message, want string) {
	t.Helper()
	if _, err := c.WaitMessage(ctx, func(m Message) bool {
		return m.Ref == g.Ref && strings.Contains(m.Text, want) && m.Buttons == 0
	}); err != nil {
		n := now(c, g)
		t.Fatalf("approval message = %q with %d buttons, want it to say %q without buttons: %v", n.Text, n.Buttons, want, err)
	}
}

func click(ctx context.Context, t *testing.T, c Chat, user string, m Message, i int) {
	t.Helper()
	if err := c.Click(ctx, user, m, i); err != nil {
		t.Fatalf("click by %s: %v", user, err)
	}
}

// askOnTurn makes every turn but a stop ask for approval of a spend and
// say the outcome; a stop's turn says it stopped.
func askOnTurn(c Chat) {
	c.Hub().OnTurn(func(ctx context.Context, in core.Inbound) {
		if core.IsStop(in.Text) {
			_ = c.Reporter(in.Thread).Notice(ctx, "Stopped by "+in.User+".")
			return // the hub stops the running turn: not this fake's part
		}
		ans := core.Ask(ctx, c.Approver(in.Thread, in.User), core.GateRequest{
			IntentID: "intent-" + in.EventID, NodeID: "n1",
			Question: "Send **5 USDC** to bob?", Options: []core.Option{{Label: "approve", Approves: true}, {Label: "deny"}},
		})
		_ = c.Reporter(in.Thread).Say(ctx, fmt.Sprintf("approved=%v by %s", ans.Approved, ans.By))
	})
}

// testAnswer: a message to Neo is answered in its thread, in public and
// in private places alike.
func testAnswer(t *testing.T, d Driver) {
	c := d.Start(t)
	ctx := testContext(t)
	c.Hub().OnTurn(func(ctx context.Context, in core.Inbound) {
		_ = c.Reporter(in.Thread).Say(ctx, "echo: "+in.Text)
	})
	for _, p := range append([]Place{c.Public()}, c.Private()...) {
		thread := c.Post(p, d.People().Requester, "hello from "+p.Name)
		waitVisible(ctx, t, c, thread, "hello from "+p.Name)
	}
}

// testPrivacy: what someone says about themself in a private place (a
// private channel or thread, a group DM, a DM) is recalled there, and
// never in a public channel, where it would come back as their profile.
func testPrivacy(t *testing.T, d Driver) {
	c := d.Start(t)
	ctx := testContext(t)
	user := d.People().Requester
	n := 0
	next := func(p Place, text string) core.Inbound {
		t.Helper()
		c.Post(p, user, text)
		n++
		return c.Hub().Wait(ctx, t, n)
	}
	places := append(c.Private(), c.Public())
	for i, p := range places {
		public := i == len(places)-1 // a public place: the fact follows its author
		fact := "Alice is interviewing at Initech"
		said := next(p, "keep this quiet: I am interviewing at Initech")
		elsewhere := next(c.Public(), "where am I interviewing? Initech?")
		if got := recalled(t, said, elsewhere, fact); strings.Contains(got, fact) != public {
			t.Errorf("in a public channel after the %s, memory shows:\n%s\nwant %q shown: %v", p.Name, got, fact, public)
		}
		again := next(p, "where am I interviewing?")
		if got := recalled(t, said, again, fact); !strings.Contains(got, fact) {
			t.Errorf("back in the %s, memory shows:\n%s\nwant %q", p.Name, got, fact)
		}
	}
}

// recalled returns what memory shows the author of asked, in asked's
// conversation, once the turn of said, whose author stated fact about
// themself, is written back.
func recalled(t *testing.T, said, asked core.Inbound, fact string) string {
	t.Helper()
	ctx := context.Background()
	c, err := memory.New(ctx, memory.Options{Store: &memorytest.Store{}, Model: memorytest.AboutAuthor{fact}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WriteBack(ctx, said, []llm.Message{llm.AssistantMessage("Noted.")}); err != nil {
		t.Fatalf("WriteBack = %v", err)
	}
	return memorytest.Shown(t, c, asked, "interviewing Initech")
}

// testStop: a turn waiting on an approval is stopped only by the person
// who asked, an approver, or whoever else the platform lets (MayStop); the
// stop shows in the thread. Anyone else's "stop" never reaches the hub,
// is refused to them alone, and the approval stays open.
func testStop(t *testing.T, d Driver) {
	probe := d.People()
	type stopper struct {
		name, user string
		stopped    bool
	}
	tests := []stopper{{"the requester", probe.Requester, true}, {"an approver", probe.Approver, true}}
	for _, u := range probe.MayStop {
		tests = append(tests, stopper{"who may also stop (" + u + ")", u, true})
	}
	tests = append(tests, stopper{"someone else in the thread", probe.Stranger, false})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := d.Start(t)
			ctx := testContext(t)
			askOnTurn(c)
			thread := c.Post(c.Public(), probe.Requester, "pay bob")
			gate := waitGate(ctx, t, c, thread)

			c.Reply(thread, tt.user, "stop")
			if tt.stopped {
				waitVisible(ctx, t, c, thread, "Stopped by "+tt.user+".")
			} else {
				waitNote(ctx, t, c, tt.user, intake.RefuseStop, thread)
			}
			if err := c.WaitIdle(ctx); err != nil {
				t.Fatal(err)
			}
			var stops []core.Inbound
			for _, in := range c.Hub().Journaled() {
				if core.IsStop(in.Text) {
					stops = append(stops, in)
				}
			}
			if tt.stopped {
				if len(stops) != 1 || stops[0].User != tt.user {
					t.Fatalf("stops handed to the hub = %+v, want %s's", stops, tt.user)
				}
				if got := notes(c, tt.user); len(got) != 0 {
					t.Errorf("notes to %s = %q, want no refusal", tt.user, got)
				}
				return
			}
			if len(stops) != 0 {
				t.Fatalf("stops handed to the hub = %+v, want none from %s", stops, tt.user)
			}
			for _, m := range visible(c, thread) {
				if strings.Contains(m, intake.RefuseStop) || strings.Contains(m, "Stopped") {
					t.Errorf("visible in the thread: %q, want the refusal to %s alone and nothing stopped", m, tt.user)
				}
			}
			// The approval is still open: an approver answers it.
			click(ctx, t, c, probe.Approver, gate, 0)
			waitVisible(ctx, t, c, thread, "approved=true by "+probe.Approver)
		})
	}
}

// testApprovalByRequester: the requester's click approves, the message
// says who approved and loses its buttons; a second click on it changes
// nothing and says so to the clicker alone.
func testApprovalByRequester(t *testing.T, d Driver) {
	c := d.Start(t)
	ctx := testContext(t)
	askOnTurn(c)
	req := d.People().Requester
	thread := c.Post(c.Public(), req, "pay bob")
	gate := waitGate(ctx, t, c, thread)
	if gate.Buttons != 2 {
		t.Fatalf("approval message has %d buttons, want approve and deny", gate.Buttons)
	}

	click(ctx, t, c, req, gate, 0)
	waitVisible(ctx, t, c, thread, "approved=true by "+req)
	waitGateShows(ctx, t, c, gate, "Approved (approve) by <@"+req+">")

	click(ctx, t, c, req, gate, 1)
	waitNote(ctx, t, c, req, "already answered", thread)
	if n := now(c, gate); !strings.Contains(n.Text, "Approved") {
		t.Errorf("approval message after a stale click = %q, want it still approved", n.Text)
	}
}

// testApprovalByAnother: a click by someone who may not answer is refused
// to them alone and leaves the message as it was; an approver's click
// then decides, shown on the message.
func testApprovalByAnother(t *testing.T, d Driver) {
	c := d.Start(t)
	ctx := testContext(t)
	askOnTurn(c)
	p := d.People()
	thread := c.Post(c.Public(), p.Requester, "pay bob")
	gate := waitGate(ctx, t, c, thread)

	click(ctx, t, c, p.Stranger, gate, 0)
	waitNote(ctx, t, c, p.Stranger, "can't approve this", thread)
	if n := now(c, gate); n.Edits != gate.Edits || n.Buttons != gate.Buttons || n.Text != gate.Text {
		t.Errorf("approval message after a refused click: %q, %d edits, %d buttons; want it unchanged", n.Text, n.Edits, n.Buttons)
	}
	for _, m := range visible(c, thread) {
		if strings.Contains(m, "can't approve") {
			t.Errorf("visible in the thread: %q, want the refusal to %s alone", m, p.Stranger)
		}
	}

	click(ctx, t, c, p.Approver, gate, 1)
	waitVisible(ctx, t, c, thread, "approved=false by "+p.Approver)
	waitGateShows(ctx, t, c, gate, "Denied (deny) by <@"+p.Approver+">")
}
