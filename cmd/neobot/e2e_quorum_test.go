package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/adapters/web"
	"github.com/neobot/neobot/store/postgres/pgtest"
)

// quorumSettings is a skill whose spends above 100 USDC need two of the
// treasury group (Ann, Ben, Cat), escalate to the CFO after escalate and
// expire after expire ("" for the defaults). treasury and cfo are the
// groups' members on the platform (by its key: slack, discord, web).
func quorumSettings(t *testing.T, platform string, treasury, cfo []string, escalate, expire string) string {
	top := map[string]any{"currency": "USDC", "group": "treasury", "quorum": 2}
	if escalate != "" {
		top["escalate_after"], top["escalate_to"] = escalate, "cfo"
	}
	if expire != "" {
		top["expire_after"] = expire
	}
	return writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{
		"pay": map[string]any{"spend": true, "places": []string{platform},
			"spend_limits": map[string]any{
				"USDC":            map[string]string{"per_call": "10000"},
				"wallet/transfer": map[string]string{"amount": "amount", "currency": "currency"},
			},
			"approvals": map[string]any{
				"groups": map[string]any{"treasury": map[string]any{platform: treasury}, "cfo": map[string]any{platform: cfo}},
				"tiers":  []any{map[string]any{"currency": "USDC", "up_to": "100"}, top},
			}},
	}})
}

// copyIn returns the bot's message in channel showing the approval
// whose thread message is gate (the same button values).
func copyIn(t *testing.T, w *slackWorld, channel string, gate slacktest.Message) slacktest.Message {
	t.Helper()
	value := gate.Buttons()[0].Value
	m, err := w.slack.WaitMessage(waitCtx(t), func(m slacktest.Message) bool {
		b := m.Buttons()
		return m.FromBot() && m.Channel == channel && len(b) > 0 && b[0].Value == value
	})
	if err != nil {
		t.Fatalf("no copy of the approval in %s: %v\nmessages: %+v", channel, err, w.slack.Messages())
	}
	return m
}

// shows waits until the bot's message at channel/ts renders want.
func shows(t *testing.T, w *slackWorld, channel, ts, want string) slacktest.Message {
	t.Helper()
	m, err := w.slack.WaitMessage(waitCtx(t), func(m slacktest.Message) bool {
		return m.Channel == channel && m.TS == ts && strings.Contains(m.Rendered(), want)
	})
	if err != nil {
		t.Fatalf("message %s/%s never showed %q: %v\nmessages: %+v", channel, ts, want, err, w.slack.Messages())
	}
	return m
}

// privately waits for a private reply to user containing want.
func privately(t *testing.T, w *slackWorld, user, want string) {
	t.Helper()
	if _, err := w.slack.WaitMessage(waitCtx(t), func(m slacktest.Message) bool {
		return m.Ephemeral && m.Recipient == user && strings.Contains(m.Text, want)
	}); err != nil {
		t.Fatalf("%s got no private %q: %v", user, want, err)
	}
}

// TestSlackQuorum: 500 USDC needs two of the treasury group. Each member
// gets a copy in their DM; the requester's click and a repeated click
// count nothing; the first approval shows "1 of 2 approvals" on every
// copy and survives neobot being killed (bbolt and PostgreSQL); the
// second distinct approval makes the transfer, once, and every copy
// shows the same final state.
func TestSlackQuorum(t *testing.T) {
	for _, db := range []string{"bbolt", "postgres"} {
		t.Run(db, func(t *testing.T) {
			w, wal := newSpendWorld(t)
			if db == "postgres" {
				w.env["NEO_DATABASE_URL"] = pgtest.Database(t)
				delete(w.env, "NEO_DB_PATH")
			}
			w.env["NEO_CONFIG"] = quorumSettings(t, "slack", []string{"UANN", "UBEN", "UALICE"}, []string{"UCFO"}, "", "")
			spendModel(t, w.model, "core_execute")
			p := w.start(t, 1)
			mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "send 500 USDC to alice"})
			gate := w.waitGate(t, p, mention.TS, "wallet/transfer")
			if !strings.Contains(gate.Rendered(), "2 different approvers") {
				t.Errorf("approval does not say two approvers are needed:\n%s", gate.Rendered())
			}
			annDM := copyIn(t, w, "DUANN", gate)
			copyIn(t, w, "DUBEN", gate)
			for _, m := range w.slack.Messages() {
				if m.Channel == "DUALICE" || m.Channel == "DUCAROL" {
					t.Errorf("a copy went to %s, who may not approve it", m.Channel)
				}
			}

			w.slack.Click("UALICE", gate, 0)
			privately(t, w, "UALICE", "can't")
			w.slack.Click("UANN", annDM, 0)
			shows(t, w, gate.Channel, gate.TS, "1 of 2 approvals: <@UANN>")
			shows(t, w, "DUBEN", copyIn(t, w, "DUBEN", gate).TS, "1 of 2 approvals: <@UANN>")
			w.slack.Click("UANN", gate, 0)
			privately(t, w, "UANN", "never counts twice")
			if n := total(wal.transfers(t)); n != 0 {
				t.Fatalf("%d transfers before the quorum, want none", n)
			}

			// neobot dies between the first and the second approval.
			p.kill()
			p = w.start(t, 2)
			w.slack.Click("UBEN", gate, 0)
			if got := w.answerIn(t, "C0GENERAL", mention.TS, "Outcome:"); !strings.Contains(got.Rendered(), "completed") {
				t.Errorf("answer = %q, want the transfer completed", got.Rendered())
			}
			if sent := wal.transfers(t); total(sent) != 1 {
				t.Errorf("transfers = %v, want exactly one", sent)
			}
			thread := shows(t, w, gate.Channel, gate.TS, "Approved (Approve) by <@UANN> and <@UBEN>")
			dm := shows(t, w, "DUANN", annDM.TS, "Approved (Approve) by <@UANN> and <@UBEN>")
			if len(thread.Buttons()) != 0 || len(dm.Buttons()) != 0 {
				t.Error("a decided approval still has buttons")
			}
			// A copy clicked after the end (a stale DM) approves nothing.
			w.slack.Click("UALICE", annDM, 0)
			w.slack.Click("UANN", annDM, 1)
			privately(t, w, "UANN", "already answered")
			if sent := wal.transfers(t); total(sent) != 1 {
				t.Errorf("transfers after a stale click = %v, want still one", sent)
			}
			p.stop(t)
		})
	}
}

// TestSlackQuorumDeny: after one approval, one deny ends the approval:
// nothing is sent, and the DM copy and the thread show the same denial.
// The denier is in the tier's group through a Slack user group, and got
// the copy as its member.
func TestSlackQuorumDeny(t *testing.T) {
	w, wal := newSpendWorld(t)
	// Ben and Cat are the treasury's Slack user group.
	w.slack.SetUserGroup("S0TREASURY", "UBEN", "UCAT")
	w.env["NEO_CONFIG"] = quorumSettings(t, "slack", []string{"UANN", "group:S0TREASURY"}, []string{"UCFO"}, "", "")
	spendModel(t, w.model, "core_execute")
	p := w.start(t, 1)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "send 500 USDC to alice"})
	gate := w.waitGate(t, p, mention.TS, "wallet/transfer")
	catDM := copyIn(t, w, "DUCAT", gate)
	w.slack.Click("UANN", gate, 0)
	shows(t, w, gate.Channel, gate.TS, "1 of 2 approvals")
	w.slack.Click("UCAT", catDM, 1)
	w.answerIn(t, "C0GENERAL", mention.TS, "<@UCAT> denied it")
	shows(t, w, gate.Channel, gate.TS, "Denied (Deny) by <@UCAT>")
	shows(t, w, "DUCAT", catDM.TS, "Denied (Deny) by <@UCAT>")
	if n := total(wal.transfers(t)); n != 0 {
		t.Errorf("%d transfers after a deny, want none", n)
	}
	p.stop(t)
}

// TestSlackQuorumEscalatesAndExpires: nobody answers; after the tier's
// escalate_after the CFO is asked in the thread and in a DM copy; after
// its expire_after the approval expires, the thread and the requester
// are told, and nothing runs.
func TestSlackQuorumEscalatesAndExpires(t *testing.T) {
	w, wal := newSpendWorld(t)
	w.env["NEO_CONFIG"] = quorumSettings(t, "slack", []string{"UANN", "UBEN", "UCAT"}, []string{"UCFO"}, "1s", "3s")
	spendModel(t, w.model, "core_execute")
	p := w.start(t, 1)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "send 500 USDC to alice"})
	gate := w.waitGate(t, p, mention.TS, "wallet/transfer")
	w.answerIn(t, "C0GENERAL", mention.TS, "escalated: <@UCFO> may now approve")
	cfoDM := copyIn(t, w, "DUCFO", gate)
	w.answerIn(t, "C0GENERAL", mention.TS, "<@UALICE>, the approval you asked for above expired")
	w.answerIn(t, "C0GENERAL", mention.TS, "Outcome:")
	shows(t, w, gate.Channel, gate.TS, "Expired")
	shows(t, w, "DUCFO", cfoDM.TS, "Expired")
	if n := total(wal.transfers(t)); n != 0 {
		t.Errorf("%d transfers after the expiry, want none", n)
	}
	p.stop(t)
}

// newDiscordSpendWorld is a Discord world whose spends run in neobot's
// own executor under the quorum settings: 111 asks, 333 is the
// configured approver for small spends.
func newDiscordSpendWorld(t *testing.T, settings string) (*discordWorld, *wallet) {
	t.Helper()
	w := newDiscordWorld(t)
	wal := newWallet(t)
	w.env["NEO_MANIFEST"] = wal.manifest(t)
	wal.setEnv(w.env)
	for _, k := range []string{"NEO_DAEMON_URL", "NEO_DAEMON_TOKEN", "NEO_SELF_APPROVE"} {
		delete(w.env, k)
	}
	w.env["NEO_CONFIG"] = settings
	spendModel(t, w.model, "core_execute")
	return w, wal
}

// discordShows waits until a bot message in channel ("dm:<user>" for
// the user's DMs with Neo), the one with id unless id is "", reads want,
// and returns it.
func discordShows(t *testing.T, w *discordWorld, channel, id, want string) discordtest.Message {
	t.Helper()
	if user, ok := strings.CutPrefix(channel, "dm:"); ok {
		// The DM is opened before the copy is sent to it.
		if _, err := w.discord.WaitCall(waitCtx(t), "POST /users/@me/channels", func(c discordtest.Call) bool {
			return strings.Contains(string(c.Body), `"`+user+`"`)
		}); err != nil {
			t.Fatalf("no DM opened with %s: %v", user, err)
		}
		channel = w.discord.DMChannel(user)
	}
	m, err := w.discord.WaitMessage(waitCtx(t), func(m discordtest.Message) bool {
		return m.FromBot() && m.ChannelID == channel && (id == "" || m.ID == id) && strings.Contains(m.Content, want)
	})
	if err != nil {
		t.Fatalf("no message in %s reading %q: %v\nmessages: %+v", channel, want, err, w.discord.Messages())
	}
	return m
}

// TestDiscordQuorum: on Discord, 500 USDC needs two of 444, 555 and 666,
// each sent a copy in their DMs; the requester's click and a repeated
// click count nothing; the second distinct approval makes the transfer
// once, and the DM copies show the thread's final state. A second
// request nobody answers escalates to 777 and expires, sending nothing.
func TestDiscordQuorum(t *testing.T) {
	w, wal := newDiscordSpendWorld(t, quorumSettings(t, "discord", []string{"444", "555", "666"}, []string{"777"}, "", ""))
	p := w.start(t, 1)
	mention := w.discord.Mention(discordtest.Msg{User: "111", Text: "send 500 USDC to alice"})
	gate := discordShows(t, w, mention.ID, "", "2 different approvers")
	dm444 := discordShows(t, w, "dm:444", "", "wallet/transfer")
	discordShows(t, w, "dm:666", "", "wallet/transfer")

	if r, err := w.discord.WaitResponse(waitCtx(t), w.discord.Click("111", gate, 0)); err != nil || !strings.Contains(r.Content, "can't approve this") {
		t.Fatalf("the requester's click = %+v, %v; want refused", r, err)
	}
	if _, err := w.discord.WaitResponse(waitCtx(t), w.discord.Click("444", dm444, 0)); err != nil {
		t.Fatal(err)
	}
	discordShows(t, w, mention.ID, gate.ID, "1 of 2 approvals: <@444>")
	if r, err := w.discord.WaitResponse(waitCtx(t), w.discord.Click("444", gate, 0)); err != nil || !strings.Contains(r.Content, "never counts twice") {
		t.Fatalf("a repeated click = %+v, %v; want refused", r, err)
	}
	if n := total(wal.transfers(t)); n != 0 {
		t.Fatalf("%d transfers before the quorum", n)
	}
	if _, err := w.discord.WaitResponse(waitCtx(t), w.discord.Click("555", gate, 0)); err != nil {
		t.Fatal(err)
	}
	w.finishedAnswer(t, mention.ID, "Outcome: completed")
	final := "Approved (Approve) by <@444> and <@555>"
	discordShows(t, w, mention.ID, gate.ID, final)
	discordShows(t, w, "dm:444", dm444.ID, final)
	discordShows(t, w, "dm:666", "", final)
	if n := total(wal.transfers(t)); n != 1 {
		t.Errorf("transfers = %d, want 1", n)
	}
	p.stop(t)
}

// TestDiscordQuorumEscalatesAndExpires: nobody answers; the CFO (777)
// is asked after escalate_after, in the thread and in a DM copy; after
// expire_after the approval expires, the requester is told, nothing runs.
func TestDiscordQuorumEscalatesAndExpires(t *testing.T) {
	w, wal := newDiscordSpendWorld(t, quorumSettings(t, "discord", []string{"444", "555", "666"}, []string{"777"}, "1s", "3s"))
	p := w.start(t, 1)
	mention := w.discord.Mention(discordtest.Msg{User: "111", Text: "send 500 USDC to alice"})
	discordShows(t, w, mention.ID, "", "2 different approvers")
	discordShows(t, w, mention.ID, "", "escalated: <@777> may now approve")
	cfo := discordShows(t, w, "dm:777", "", "wallet/transfer")
	discordShows(t, w, mention.ID, "", "<@111>, the approval you asked for above expired")
	discordShows(t, w, "dm:777", cfo.ID, "Expired")
	w.finishedAnswer(t, mention.ID, "Outcome:")
	if n := total(wal.transfers(t)); n != 0 {
		t.Errorf("transfers = %d after the expiry, want none", n)
	}
	p.stop(t)
}

// newWebSpendWorld is a web world whose spends run in neobot's own
// executor under settings: Alice asks; Bob, Carol and Dave approve as
// the settings say. It returns the world, the wallet and the tokens of
// Carol and Dave.
func newWebSpendWorld(t *testing.T, settings string) (*webWorld, *wallet, map[string]string) {
	t.Helper()
	w := newWebWorld(t)
	wal := newWallet(t)
	w.env["NEO_MANIFEST"] = wal.manifest(t)
	wal.setEnv(w.env)
	delete(w.env, "NEO_SELF_APPROVE")
	tokens := map[string]string{"alice": w.alice, "bob": w.bob}
	for _, name := range []string{"carol", "dave"} {
		token, hash, err := web.NewToken()
		if err != nil {
			t.Fatal(err)
		}
		tokens[name] = token
		w.env["NEO_WEB_USERS"] += "," + name + "=" + hash
	}
	w.env["NEO_WEB_SPEND_USERS"], w.env["NEO_WEB_APPROVERS"] = "alice", "bob"
	w.env["NEO_CONFIG"] = settings
	spendModel(t, w.model, "core_execute")
	return w, wal, tokens
}

// waitingApprovals lists the tokens of the approvals waiting for token's user.
func waitingApprovals(t *testing.T, w *webWorld, token string) []string {
	t.Helper()
	var list struct {
		Approvals []struct {
			Token    string
			Need     int
			Progress string
		}
	}
	w.call(t, token, "GET", "/v1/approvals", nil, &list)
	var out []string
	for _, a := range list.Approvals {
		out = append(out, a.Token)
	}
	return out
}

// TestWebQuorum: on the web, 500 USDC needs two of Bob, Carol and Alice
// (who asked, and never counts); the approvals list is each approver's
// copy; Bob's approval is recorded with its progress and his second
// click counts nothing; Carol's makes the transfer, once.
func TestWebQuorum(t *testing.T) {
	w, wal, tok := newWebSpendWorld(t, quorumSettings(t, "web", []string{"bob", "carol", "alice"}, []string{"dave"}, "", ""))
	p := w.start(t)
	var created struct{ ID string }
	w.call(t, w.alice, "POST", "/v1/conversations", map[string]any{}, &created)
	events := w.follow(t, w.alice, created.ID, "")
	w.call(t, w.alice, "POST", "/v1/conversations/"+created.ID+"/messages", map[string]string{"text": "send 500 USDC to alice"}, nil)
	invoked, _ := events.next(t, "gate.invoked")
	var gate struct {
		Token string
		Need  int
	}
	_ = json.Unmarshal(invoked.Data, &gate)
	if gate.Need != 2 {
		t.Errorf("gate.invoked need = %d, want 2", gate.Need)
	}
	for user, want := range map[string]bool{"bob": true, "carol": true, "alice": false, "dave": false} {
		if got := slices.Contains(waitingApprovals(t, w, tok[user]), gate.Token); got != want {
			t.Errorf("%s's approvals list has it: %v, want %v", user, got, want)
		}
	}
	answer := func(user string) (int, map[string]any) {
		var out map[string]any
		code := w.call(t, tok[user], "POST", "/v1/gates/"+gate.Token+"/answer", map[string]int{"option": 0}, &out)
		return code, out
	}
	if code, _ := answer("alice"); code != http.StatusForbidden {
		t.Errorf("Alice approving her own spend = %d, want 403", code)
	}
	if code, out := answer("bob"); code != http.StatusOK || out["state"] != "pending" || out["progress"] != "1 of 2 approvals: @bob" {
		t.Errorf("Bob's approval = %d %v, want recorded, 1 of 2", code, out)
	}
	if updated, _ := events.next(t, "gate.updated"); !strings.Contains(string(updated.Data), "1 of 2 approvals: @bob") {
		t.Errorf("gate.updated = %s", updated.Data)
	}
	if code, out := answer("bob"); code != http.StatusConflict || !strings.Contains(fmt.Sprint(out), "never counts twice") {
		t.Errorf("Bob's second approval = %d %v, want refused", code, out)
	}
	if n := total(wal.transfers(t)); n != 0 {
		t.Fatalf("%d transfers before the quorum", n)
	}
	if code, out := answer("carol"); code != http.StatusOK || out["state"] != "approved" {
		t.Errorf("Carol's approval = %d %v, want approved", code, out)
	}
	if final, _ := events.next(t, "answer"); !strings.Contains(text(final), "Outcome: completed") {
		t.Errorf("answer = %q, want the completed transfer", text(final))
	}
	if n := total(wal.transfers(t)); n != 1 {
		t.Errorf("transfers = %d, want 1", n)
	}
	if got := waitingApprovals(t, w, tok["bob"]); len(got) != 0 {
		t.Errorf("Bob's approvals list after the decision = %v, want empty", got)
	}
	p.stop(t)
}

// TestWebQuorumEscalatesAndExpires: nobody answers; after escalate_after
// Dave is told and finds it in his approvals list; after expire_after it
// expires, the conversation is told, and nothing runs.
func TestWebQuorumEscalatesAndExpires(t *testing.T) {
	w, wal, tok := newWebSpendWorld(t, quorumSettings(t, "web", []string{"bob", "carol"}, []string{"dave"}, "1s", "3s"))
	p := w.start(t)
	var created struct{ ID string }
	w.call(t, w.alice, "POST", "/v1/conversations", map[string]any{}, &created)
	events := w.follow(t, w.alice, created.ID, "")
	w.call(t, w.alice, "POST", "/v1/conversations/"+created.ID+"/messages", map[string]string{"text": "send 500 USDC to alice"}, nil)
	invoked, _ := events.next(t, "gate.invoked")
	var gate struct{ Token string }
	_ = json.Unmarshal(invoked.Data, &gate)
	if slices.Contains(waitingApprovals(t, w, tok["dave"]), gate.Token) {
		t.Error("Dave sees the approval before the escalation")
	}
	if n, _ := events.next(t, "notice"); !strings.Contains(text(n), "escalated: @dave may now approve") {
		t.Fatalf("notice = %q, want the escalation", text(n))
	}
	if !slices.Contains(waitingApprovals(t, w, tok["dave"]), gate.Token) {
		t.Error("Dave's approvals list lacks the escalated approval")
	}
	if d, _ := events.next(t, "gate.decided"); !strings.Contains(string(d.Data), `"expired"`) {
		t.Errorf("gate.decided = %s, want expired", d.Data)
	}
	if n, _ := events.next(t, "notice"); !strings.Contains(text(n), "@alice, the approval you asked for above expired") {
		t.Errorf("notice = %q, want the requester told of the expiry", text(n))
	}
	if n := total(wal.transfers(t)); n != 0 {
		t.Errorf("transfers = %d after the expiry, want none", n)
	}
	p.stop(t)
}

// TestQuorumStartupErrors: a tier nobody may approve on a platform neobot
// runs on stops start-up and neobot check, naming the skill, the tier and
// the fix; so does a malformed policy.
func TestQuorumStartupErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings func(t *testing.T) string
		want     []string
	}{
		{"nobody on slack", func(t *testing.T) string {
			return writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{"pay": map[string]any{"spend": true, "places": []string{"slack"},
				"approvals": map[string]any{"groups": map[string]any{"treasury": map[string]any{"discord": []string{"444"}}},
					"tiers": []any{map[string]any{"currency": "USDC", "up_to": "100"}, map[string]any{"currency": "USDC", "group": "treasury"}}}}}})
		}, []string{`skill "pay"`, "approvals.tiers[1]", `group "treasury" lists no slack approver`, "approvals.groups.treasury.slack"}},
		{"undefined group", func(t *testing.T) string {
			return writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{"pay": map[string]any{"spend": true, "places": []string{"slack"},
				"approvals": map[string]any{"tiers": []any{map[string]any{"currency": "USDC", "group": "ops"}}}}}})
		}, []string{`skill "pay"`, `approvals.tiers[0].group: "ops" is not among approvals.groups`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, _ := newSpendWorld(t)
			w.env["NEO_CONFIG"] = tc.settings(t)
			for _, args := range [][]string{{"check"}, {}} {
				out, stderr, err := run(t, w.env, "", args...)
				if err == nil {
					t.Fatalf("neobot %v started with the policy:\n%s", args, out)
				}
				for _, want := range tc.want {
					if !strings.Contains(stderr+out, want) {
						t.Errorf("neobot %v said %q, want %q", args, stderr+out, want)
					}
				}
			}
		})
	}
}

// TestQuorumCheck: neobot check prints each skill's approval tiers.
func TestQuorumCheck(t *testing.T) {
	w, _ := newSpendWorld(t)
	w.env["NEO_CONFIG"] = quorumSettings(t, "slack", []string{"UANN", "UBEN"}, []string{"UCFO"}, "1h", "")
	out, stderr, err := run(t, w.env, "", "check")
	if err != nil {
		t.Fatalf("neobot check: %v\n%s", err, stderr)
	}
	for _, want := range []string{"approval tier: up to 100 USDC: any configured approver", "approval tier: over 100 USDC: 2 of group treasury, escalate to cfo after 1h"} {
		if !strings.Contains(out, want) {
			t.Errorf("neobot check lacks %q:\n%s", want, out)
		}
	}
}

// TestClusterQuorum: two instances share PostgreSQL; the spend's turn
// runs on instance 1; the first approval is clicked through instance 1's
// connection on a DM copy, the second through instance 2's in the
// thread: each click counts once, instance 2's wakes the turn on
// instance 1, the transfer is made once, and every copy shows the end.
func TestClusterQuorum(t *testing.T) {
	w, wal := newSpendWorld(t)
	w.env["NEO_DATABASE_URL"] = pgtest.Database(t)
	delete(w.env, "NEO_DB_PATH")
	w.env["NEO_CONFIG"] = quorumSettings(t, "slack", []string{"UANN", "UBEN", "UCAT"}, []string{"UCFO"}, "", "")
	spendModel(t, w.model, "core_execute")
	p1 := w.start(t, 1)
	p2 := w.start(t, 2)
	w.slack.Via(1)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "send 500 USDC to alice"})
	gate := w.waitGate(t, p1, mention.TS, "wallet/transfer")
	annDM, catDM := copyIn(t, w, "DUANN", gate), copyIn(t, w, "DUCAT", gate)
	w.slack.Click("UANN", annDM, 0)
	shows(t, w, gate.Channel, gate.TS, "1 of 2 approvals: <@UANN>")
	w.slack.Via(2)
	if ack, err := w.slack.WaitAck(waitCtx(t), w.slack.Click("UBEN", gate, 0)); err != nil || ack.Conn != 2 {
		t.Fatalf("the second click's ack = %+v, %v; want it from instance 2", ack, err)
	}
	w.answerIn(t, "C0GENERAL", mention.TS, "Outcome:")
	final := "Approved (Approve) by <@UANN> and <@UBEN>"
	shows(t, w, gate.Channel, gate.TS, final)
	shows(t, w, "DUANN", annDM.TS, final)
	shows(t, w, "DUCAT", catDM.TS, final)
	p1.stop(t)
	p2.stop(t)
	if sent := wal.transfers(t); total(sent) != 1 {
		t.Errorf("transfers = %v, want exactly one", sent)
	}
}
