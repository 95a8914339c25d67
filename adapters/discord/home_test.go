package discord

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/adapters/internal/home/hometest"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/skill"
)

// neoPage types /neo as user and returns the private reply.
func (e *env) neoPage(user string) discordtest.Response {
	e.t.Helper()
	if _, err := e.discord.WaitCall(e.ctx, "PUT /applications/{app}/commands", nil); err != nil {
		e.t.Fatalf("/neo was never registered: %v", err)
	}
	r := e.response(e.discord.SlashCommand(user, discordtest.ChannelID, "neo"))
	if r.Type != discordtest.ResponseMessage || r.Flags&discordtest.FlagEphemeral == 0 {
		e.t.Fatalf("/neo response = %+v, want a private (ephemeral) reply", r)
	}
	return r
}

// TestNeoCommand: /neo is registered, and answers the person privately
// with what Neo may do here in words, their accounts with Connect and
// Disconnect, and their own spends only.
func TestNeoCommand(t *testing.T) {
	t.Parallel()
	specs, err := skill.Parse([]byte(`{"reader": {"side_effects": {"read": "allow"}, "places": ["discord:` +
		discordtest.GuildID + `/` + discordtest.ChannelID + `"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	set, err := skill.Compile(specs, nil)
	if err != nil {
		t.Fatal(err)
	}
	spends := coretest.NewSpends()
	for _, s := range []core.Spend{
		{ID: "i1/1", IntentID: "i1", Requester: "111", Summary: "Pay invoice 42", Amount: "12.50", Currency: "EUR", State: core.SpendCompleted},
		{ID: "i2/1", IntentID: "i2", Requester: "222", Summary: "Lunch for 222", State: core.SpendCompleted},
	} {
		s.Thread, s.Created = core.Thread{Platform: Platform, Workspace: discordtest.GuildID, Channel: discordtest.ChannelID, ID: discordtest.ChannelID}, time.Now()
		if _, err := spends.PlanSpends(context.Background(), s.IntentID, []core.Spend{s}); err != nil {
			t.Fatal(err)
		}
	}
	accts := hometest.NewAccounts("linear", mcp.Place{Platform: Platform, Workspace: discordtest.GuildID, User: "111"})
	e := start(t, func(o *Options) { o.Skills, o.Accounts, o.Spends = set, accts, spends })
	r := e.neoPage("111")
	if cmds := e.discord.Commands(); len(cmds) != 1 || cmds[0].Name != "neo" {
		t.Errorf("commands = %+v, want /neo", cmds)
	}
	for _, want := range []string{
		"**In <#" + discordtest.ChannelID + ">** (skill `reader`): Tools: every tool Neo has. May read things. May not change things",
		"**Everywhere else** (skill `default`)", "Nothing is waiting for your click.",
		"**linear**: connected", "Pay invoice 42 — 12.50 EUR (done,",
	} {
		if !strings.Contains(r.Content, want) {
			t.Errorf("/neo lacks %q:\n%s", want, r.Content)
		}
	}
	if strings.Contains(r.Content, "Lunch for 222") {
		t.Errorf("/neo shows someone else's spend:\n%s", r.Content)
	}
	page, err := e.discord.WaitMessage(e.ctx, func(m discordtest.Message) bool { return m.Ephemeral && m.Recipient == "111" })
	if err != nil {
		t.Fatal(err)
	}
	if b := page.Buttons(); len(b) != 1 || b[0].Label != "Disconnect linear" {
		t.Fatalf("buttons = %+v, want Disconnect linear", b)
	}
	r = e.response(e.discord.Click("111", page, 0))
	if r.Type != discordtest.ResponseUpdate || !strings.Contains(r.Content, "account is disconnected") || !strings.Contains(r.Content, "**linear**: not connected") {
		t.Errorf("after Disconnect: %+v, want the page updated, disconnected", r)
	}
}

// TestNeoApproval: /neo lists an approval only to whom may click it,
// with a link to its message and the gate's own buttons; a click there
// decides it, and the thread's message shows the outcome.
func TestNeoApproval(t *testing.T) {
	t.Parallel()
	store := hometest.NewPostedStore()
	e := start(t, func(o *Options) { o.Gates = core.NewGates(core.GatesOptions{Store: store, SelfApprove: true}) })
	askOnTurn(e)
	d := e.discord.Mention(discordtest.Msg{User: "111", Text: "pay bob"})
	msg := e.gateMessageIn(d.ID)
	<-store.Posted
	if r := e.neoPage("222"); !strings.Contains(r.Content, "Nothing is waiting") {
		t.Errorf("222's /neo:\n%s\nwant no approval: only 111 may answer", r.Content)
	}
	r := e.neoPage("111")
	link := "https://discord.com/channels/" + discordtest.GuildID + "/" + d.ID + "/" + msg.ID
	if !strings.Contains(r.Content, "Send **5 USDC** to bob?") || !strings.Contains(r.Content, link) {
		t.Errorf("111's /neo:\n%s\nwant the question and %s", r.Content, link)
	}
	page, err := e.discord.WaitMessage(e.ctx, func(m discordtest.Message) bool {
		return m.Ephemeral && m.Recipient == "111" && len(m.Buttons()) == 2
	})
	if err != nil {
		t.Fatal(err)
	}
	if b := page.Buttons(); b[0].CustomID != msg.Buttons()[0].CustomID {
		t.Fatalf("page buttons = %+v, want the gate's own", b)
	}
	e.response(e.discord.Click("111", page, 0))
	e.botReply(d.ID, "approved=true by 111")
	if _, err := e.discord.WaitMessage(e.ctx, func(m discordtest.Message) bool {
		return m.ID == msg.ID && len(m.Buttons()) == 0 && strings.Contains(m.Content, "Approved")
	}); err != nil {
		t.Errorf("the thread's approval message does not show the decision: %v", err)
	}
}
