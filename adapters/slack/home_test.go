package slack

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/internal/home/hometest"
	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/skill"
)

// TestHomeTab: the Home tab shows the person what Neo may do here, in
// words, their connected accounts with Connect and Disconnect, and their
// own recent spends only.
func TestHomeTab(t *testing.T) {
	specs, err := skill.Parse([]byte(`{"reader": {"side_effects": {"read": "allow", "write": "ask"}, "places": ["slack:` +
		slacktest.TeamID + `/C0DOCS"]}, "default": {"spend": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	set, err := skill.Compile(specs, nil)
	if err != nil {
		t.Fatal(err)
	}
	accts := hometest.NewAccounts("linear", mcp.Place{Platform: Platform, Workspace: slacktest.TeamID, User: "UALICE"})
	spends := coretest.NewSpends()
	mine := core.Spend{ID: "i1/1", IntentID: "i1", Requester: "UALICE", Summary: "Pay invoice 42", Amount: "12.50", Currency: "EUR",
		Thread: core.Thread{Platform: "slack", Workspace: slacktest.TeamID, Channel: "C0FIN", ID: "1700000001.000001"},
		State:  core.SpendCompleted, Created: time.Now()}
	theirs := mine
	theirs.ID, theirs.IntentID, theirs.Requester, theirs.Summary = "i2/1", "i2", "UBOB", "Bob's lunch"
	if _, err := spends.PlanSpends(context.Background(), "i1", []core.Spend{mine}); err != nil {
		t.Fatal(err)
	}
	if _, err := spends.PlanSpends(context.Background(), "i2", []core.Spend{theirs}); err != nil {
		t.Fatal(err)
	}
	if err := set.Govern(map[string]skill.Placed{"slack:" + slacktest.TeamID: {Instructions: "<!channel> Be kind.", Approvers: []string{"UDAVE"}}}); err != nil {
		t.Fatal(err)
	}
	e := start(t, func(o *Options) {
		o.Skills, o.Accounts, o.Spends, o.Model, o.Approvers = set, accts, spends, "big-model", []string{"UCAROL"}
	})
	e.ack(e.slack.AppHomeOpened("UALICE", "D0ALICE", "home"))
	h, err := e.slack.WaitHome(e.ctx, "UALICE", nil)
	if err != nil {
		t.Fatal(err)
	}
	page := h.Rendered()
	for _, want := range []string{
		"How Neo is set up in this workspace", "In this workspace Neo follows the default skill.",
		`Its instructions here: "&lt;!channel&gt; Be kind.".`, "Neo answers here with the model big-model.",
		"They are approved by <@UCAROL>, and here also by <@UDAVE>, whom this place's settings name.",
		"In <#C0DOCS>* (skill `reader`)", "May read things.", "Asks in the thread before it may change things",
		"May not act outside", "May not spend.",
		"Everywhere else* (skill `default`)", "May spend, each spend approved by a person's click.",
		"Nothing is waiting for your click.",
		"*linear*: connected", "Pay invoice 42 — 12.50 EUR (done,",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("Alice's Home tab lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "Bob's lunch") {
		t.Errorf("Alice's Home tab shows Bob's spend:\n%s", page)
	}
	b := h.Buttons()
	if len(b) != 1 || b[0].Text != "Disconnect linear" {
		t.Fatalf("buttons = %+v, want Disconnect linear", b)
	}
	e.ack(e.slack.ClickHome("UALICE", 0))
	h, err = e.slack.WaitHome(e.ctx, "UALICE", func(h slacktest.Home) bool { return h.Publishes == 2 })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.Rendered(), "account is disconnected") || !strings.Contains(h.Rendered(), "*linear*: not connected") ||
		len(h.Buttons()) != 1 || h.Buttons()[0].Text != "Connect linear" {
		t.Errorf("after Disconnect the tab says:\n%s\nwith %+v; want it disconnected, with a Connect button", h.Rendered(), h.Buttons())
	}
	e.ack(e.slack.ClickHome("UALICE", 0))
	h, err = e.slack.WaitHome(e.ctx, "UALICE", func(h slacktest.Home) bool { return h.Publishes == 3 })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.Rendered(), "https://auth.example/authorize?server=linear&amp;for=slack.T0TEAM.UALICE") {
		t.Errorf("after Connect the tab says:\n%s\nwant Alice's own link", h.Rendered())
	}
}

// TestHomeApproval: an approval waiting for a person shows on their Home
// tab with a link to its thread and its buttons; a click there decides it
// as a click in the thread does, and the tab no longer lists it.
func TestHomeApproval(t *testing.T) {
	store := hometest.NewPostedStore()
	e := start(t, func(o *Options) { o.Gates = core.NewGates(core.GatesOptions{Store: store, SelfApprove: true}) })
	askOnTurn(e)
	d := e.slack.Mention(slacktest.Msg{User: "UALICE", Text: "pay bob"})
	msg := e.gateMessageIn("C0GENERAL", d.TS)
	<-store.Posted
	e.ack(e.slack.AppHomeOpened("UBOB", "D0BOB", "home"))
	if h, err := e.slack.WaitHome(e.ctx, "UBOB", nil); err != nil || !strings.Contains(h.Rendered(), "Nothing is waiting") {
		t.Errorf("Bob's Home tab = %q (%v), want no approval: he may not answer Alice's", h.Rendered(), err)
	}
	e.ack(e.slack.AppHomeOpened("UALICE", "D0ALICE", "home"))
	h, err := e.slack.WaitHome(e.ctx, "UALICE", nil)
	if err != nil {
		t.Fatal(err)
	}
	link := "https://fake.slack.test/archives/C0GENERAL/p" + strings.Replace(msg.TS, ".", "", 1) + "?thread_ts=" + d.TS + "&amp;cid=C0GENERAL"
	if !strings.Contains(h.Rendered(), "Send *5 USDC* to bob?") || !strings.Contains(h.Rendered(), link) {
		t.Errorf("Alice's Home tab:\n%s\nwant the question and a link to its message %s", h.Rendered(), link)
	}
	if b := h.Buttons(); len(b) != 2 || b[0].Text != "approve" || b[0].Value != msg.Buttons()[0].Value {
		t.Fatalf("Home buttons = %+v, want the gate's own", b)
	}
	e.ack(e.slack.ClickHome("UALICE", 0))
	e.botReply("C0GENERAL", d.TS, "approved=true by UALICE")
	if got := e.edited(msg); len(got.Buttons()) != 0 {
		t.Errorf("the thread's approval message still has buttons after the Home click")
	}
	if _, err := e.slack.WaitHome(e.ctx, "UALICE", func(h slacktest.Home) bool {
		return h.Publishes == 2 && strings.Contains(h.Rendered(), "Nothing is waiting")
	}); err != nil {
		t.Errorf("the Home tab still lists the decided approval: %v", err)
	}
}
