package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
	"github.com/neobot/neobot/store/postgres/pgtest"
)

// TestConfigPlaces: `neobot config set` records versions of a place's
// settings with who made each change; history lists them with what
// changed; export prints the newest of every place, and diff compares an
// earlier export with the store; a set with a bad field records nothing.
func TestConfigPlaces(t *testing.T) {
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			env := map[string]string{"NEO_DB_PATH": filepath.Join(t.TempDir(), "neobot.db"), "NEO_MODEL": "test-main", "NEO_MODELS": "test-small"}
			db.use(t, env)
			neobot := func(args ...string) (string, error) {
				t.Helper()
				out, errOut, err := run(t, env, "", append([]string{"config"}, args...)...)
				return out + errOut, err
			}
			must := func(args ...string) string {
				t.Helper()
				out, err := neobot(args...)
				if err != nil {
					t.Fatalf("neobot config %s = %v\n%s", strings.Join(args, " "), err, out)
				}
				return out
			}
			if out := must("set", "--by", "slack:T1/UALICE", "slack:T1/C1", "skill=reader", "approvers=UCAROL"); !strings.Contains(out, "Recorded version 1") ||
				!strings.Contains(out, `skill: (the file's) → "reader"`) || !strings.Contains(out, "applies from the next turn there") {
				t.Errorf("first set said:\n%s", out)
			}
			exported := filepath.Join(t.TempDir(), "places.json")
			if err := os.WriteFile(exported, []byte(must("export")), 0o600); err != nil {
				t.Fatal(err)
			}
			must("set", "--by", "cli:ops", "slack:T1/C1", "instructions=Answer in French.", "spend=false")
			if out, err := neobot("set", "slack:T1/C1", "skill=finance", "bogus=1"); err == nil || !strings.Contains(out, `"bogus" is not a field`) {
				t.Errorf("set with a bad field = %v\n%s\nwant a refusal naming it", err, out)
			}
			if out, err := neobot("set", "slack:T1/C1", "model=gpt-9", "daily_tokens=5000"); err == nil ||
				!strings.Contains(out, `model "gpt-9" is not one this bot serves; choose one of test-main, test-small`) {
				t.Errorf("set to a model the bot does not serve = %v\n%s\nwant a refusal listing the ones it does", err, out)
			}
			if out, err := neobot("set", "slack:dm", "daily_tokens=5000"); err == nil || !strings.Contains(out, "daily_tokens cannot be set on slack:dm") {
				t.Errorf("set a budget on direct messages = %v\n%s\nwant a refusal", err, out)
			}
			if out, err := neobot("set", "#general", "skill=reader"); err == nil || !strings.Contains(out, "not a place") {
				t.Errorf("set in a place written wrong = %v\n%s\nwant a refusal", err, out)
			}

			hist := strings.Split(strings.TrimSpace(must("history", "slack:T1/C1")), "\n")
			if len(hist) != 2 || !strings.Contains(hist[0], "slack:T1/UALICE") || !strings.Contains(hist[1], "cli:ops") ||
				!strings.Contains(hist[1], `instructions: (the file's) → "Answer in French."`) || strings.Contains(hist[1], "finance") {
				t.Errorf("history =\n%s\nwant two versions, by UALICE then ops, the refused set not among them", strings.Join(hist, "\n"))
			}
			out, err := neobot("diff", exported)
			if err == nil || !strings.Contains(out, "slack:T1/C1: version 1 in the file, 2 stored (last changed by cli:ops") ||
				!strings.Contains(out, "spend: (as the skill says) → false") || strings.Contains(out, "skill:") {
				t.Errorf("diff against the first export = %v\n%s\nwant the second change listed, and a failure", err, out)
			}
			if err := os.WriteFile(exported, []byte(must("export")), 0o600); err != nil {
				t.Fatal(err)
			}
			if out := must("diff", exported); !strings.Contains(out, "The stored settings are those of") {
				t.Errorf("diff against a fresh export said:\n%s", out)
			}
			if out := must("export"); !strings.Contains(out, `"slack:T1/C1"`) || !strings.Contains(out, `"version": 2`) || !strings.Contains(out, `"approvers": [`) {
				t.Errorf("export =\n%s\nwant slack:T1/C1 at version 2 with its approvers", out)
			}
		})
	}
}

// TestConfigSetAppliesOnEveryInstance: a channel's instructions and skill
// changed with `neobot config set` against the shared PostgreSQL apply to
// the next turn on both of two running instances, without a restart.
func TestConfigSetAppliesOnEveryInstance(t *testing.T) {
	w := newClusterWorld(t)
	w.env["NEO_CONFIG"] = writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{
		"reader": map[string]any{"instructions": "You only read.", "side_effects": map[string]string{"read": "allow"}},
	}})
	var mu sync.Mutex
	systems := map[string][]string{} // model (one per instance) -> system blocks of its turns
	w.model.Handle(func(r llmtest.Request) llmtest.Reply {
		if r.Model == cheapModel {
			return llmtest.Text(`{"facts":[]}`)
		}
		mu.Lock()
		systems[r.Model] = append(systems[r.Model], r.Messages[0].Content)
		mu.Unlock()
		return llmtest.Text("Ahoy.")
	})
	w.env["NEO_MODEL"] = "test-main-1"
	p1 := w.start(t, 1)
	w.env["NEO_MODEL"] = "test-main-2"
	p2 := w.start(t, 2)

	w.slack.Via(1)
	before := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "hello"})
	w.answerIn(t, "C0GENERAL", before.TS, "Ahoy.")

	out, errOut, err := run(t, w.env, "", "config", "set", "--by", "cli:ops", "slack:"+slacktest.TeamID+"/C0GENERAL",
		"skill=reader", "instructions=Answer like a pirate.")
	if err != nil {
		t.Fatalf("config set = %v\n%s%s", err, out, errOut)
	}
	for _, p := range []*process{p1, p2} {
		waitOutput(t, p, "governance: stored place settings changed")
	}
	for n := 1; n <= 2; n++ {
		w.slack.Via(n)
		d := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "hello again"})
		w.answerIn(t, "C0GENERAL", d.TS, "Ahoy.")
	}
	mu.Lock()
	defer mu.Unlock()
	if first := systems["test-main-1"]; len(first) == 0 || strings.Contains(first[0], "pirate") {
		t.Errorf("the turn before the change was told %q", first)
	}
	for _, model := range []string{"test-main-1", "test-main-2"} {
		turns := systems[model]
		if len(turns) == 0 {
			t.Errorf("instance %s ran no turn after the change", model)
			continue
		}
		last := turns[len(turns)-1]
		if !strings.Contains(last, "You only read.") || !strings.Contains(last, "Answer like a pirate.") {
			t.Errorf("instance %s's turn after the change was told:\n%s\nwant the reader skill's instructions and the channel's", model, last)
		}
	}
}

// waitOutput waits until p has written want.
func waitOutput(t *testing.T, p *process, want string) {
	t.Helper()
	ctx := waitCtx(t)
	for !strings.Contains(p.output.String(), want) {
		select {
		case <-ctx.Done():
			t.Fatalf("neobot never wrote %q:\n%s", want, p.output.String())
		case <-p.done:
			t.Fatalf("neobot stopped before writing %q:\n%s", want, p.output.String())
		case <-time.After(10 * time.Millisecond): // polling the process's output, not timing it
		}
	}
}

// TestConfigSetThroughRunningBot: with a bot holding the bbolt file,
// `neobot config` goes through its admin API, and a change applies to the
// next turn at once; a skill the settings file does not define is refused
// and nothing is recorded.
func TestConfigSetThroughRunningBot(t *testing.T) {
	w := newSlackWorld(t)
	w.env["NEO_CONFIG"] = writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{
		"reader": map[string]any{"instructions": "You only read.", "side_effects": map[string]string{"read": "allow"}},
	}})
	w.env["NEO_HEALTH_ADDR"], w.env["NEO_ADMIN_TOKEN"] = freeAddr(t), "admin-e2e-token-0123456789abcdef0123"
	systems := recordSystemBlocks(w.model)
	p := w.start(t, 1)
	waitHTTP(t, "http://"+w.env["NEO_HEALTH_ADDR"]+"/healthz", p)
	place := "slack:" + slacktest.TeamID + "/C0GENERAL"
	config := func(args ...string) (string, error) {
		out, errOut, err := run(t, w.env, "", append([]string{"config"}, args...)...)
		return out + errOut, err
	}
	if out, err := config("set", place, "skill=nope"); err == nil || !strings.Contains(out, `skill "nope" is not one the settings file defines`) {
		t.Errorf("set to an undefined skill = %v\n%s\nwant a refusal", err, out)
	}
	if out, err := config("set", place, "model=gpt-9"); err == nil || !strings.Contains(out, `model "gpt-9" is not one this bot serves`) {
		t.Errorf("set to a model the bot does not serve, through its admin API = %v\n%s\nwant the bot's refusal", err, out)
	}
	if out, err := config("set", "--by", "cli:ops", place, "skill=reader", "instructions=Answer like a pirate."); err != nil {
		t.Fatalf("config set through the running bot = %v\n%s", err, out)
	}
	d := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "hello"})
	w.answerIn(t, "C0GENERAL", d.TS, "Ahoy.")
	last := systems.last()
	if !strings.Contains(last, "You only read.") || !strings.Contains(last, "Answer like a pirate.") {
		t.Errorf("the turn after the change was told:\n%s\nwant the reader skill's instructions and the channel's", last)
	}
	if out, err := config("history", place); err != nil || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, "cli:ops") {
		t.Errorf("history through the running bot = %v\n%s\nwant the one change, by cli:ops", err, out)
	}
	p.stop(t)
}

// TestConfigSetAppliesEveryField: a channel's model, approvers and daily
// token budget, set with `neobot config set` against the shared
// PostgreSQL, apply to the next turn on another running instance without
// a restart: the turn calls the place's model; someone who is not a
// configured approver but the place's may approve its spend (the
// requester still may not); the turn, past the budget after its first
// model call, stops there naming the spend it made; and once the channel
// has used its budget, counted across both instances, a turn on the
// other instance is declined in words with when it resets. An unknown
// model is refused.
func TestConfigSetAppliesEveryField(t *testing.T) {
	w, wal := newSpendWorld(t)
	w.env["NEO_DATABASE_URL"] = pgtest.Database(t)
	delete(w.env, "NEO_DB_PATH")
	w.env["NEO_MODELS"] = "test-small"
	spendModel(t, w.model, "core_execute")
	p1 := w.start(t, 1)
	p2 := w.start(t, 2)
	place := "slack:" + slacktest.TeamID + "/C0PAY"

	config := func(args ...string) (string, error) {
		out, errOut, err := run(t, w.env, "", append([]string{"config", "set", "--by", "cli:ops", place}, args...)...)
		return out + errOut, err
	}
	if out, err := config("model=gpt-9"); err == nil || !strings.Contains(out, "choose one of test-main, test-small") {
		t.Errorf("config set model=gpt-9 = %v\n%s\nwant a refusal listing the models the bot serves", err, out)
	}
	if out, err := config("model=test-small", "approvers=UDAVE,UALICE", "daily_tokens=1"); err != nil {
		t.Fatalf("config set = %v\n%s", err, out)
	}
	for _, p := range []*process{p1, p2} {
		waitOutput(t, p, "governance: stored place settings changed")
	}

	// On instance 2: the spend turn runs on the place's model; Dave, whom
	// only the place lists, approves; Alice, who asked, may not.
	w.slack.Via(2)
	before := len(w.model.Requests())
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Channel: "C0PAY", Text: "send 5 USDC to alice"})
	gate := w.waitGate(t, p2, mention.TS, "wallet/transfer")
	w.slack.Click("UALICE", gate, 0)
	privately(t, w, "UALICE", "can't")
	w.slack.Click("UDAVE", gate, 0)
	// The turn's first call spent the channel's 1 token: it stops before
	// the next, saying so and naming the spend it made.
	stopped := w.answerIn(t, "C0PAY", mention.TS, "so I stopped before finishing")
	if !strings.Contains(stopped.Rendered(), "core_execute: done (") {
		t.Errorf("the turn stopped at the budget says:\n%s\nwant the spend it made named", stopped.Rendered())
	}
	if sent := wal.transfers(t); total(sent) != 1 {
		t.Errorf("transfers = %v, want the one Dave approved", sent)
	}
	for _, r := range w.model.Requests()[before:] {
		if r.Model != cheapModel && !onlyTool(r, "wallet__transfer") && r.Model != "test-small" {
			t.Errorf("a turn in %s called %s, want the place's test-small", place, r.Model)
		}
	}

	// On instance 1, which ran nothing there: the channel's budget is
	// spent by instance 2's turn, so the turn is declined.
	waitOutput(t, p2, "usage: a turn under a place's budget is counted in the store")
	w.slack.Via(1)
	calls := len(w.model.Requests())
	again := w.slack.Mention(slacktest.Msg{User: "UALICE", Channel: "C0PAY", Text: "hello again"})
	w.answerIn(t, "C0PAY", again.TS, "I've used today's token budget for this channel (")
	w.answerIn(t, "C0PAY", again.TS, "The budget resets at 00:00 UTC, in ")
	if n := len(w.model.Requests()); n != calls {
		t.Errorf("the declined turn called the model %d times", n-calls)
	}
	// Elsewhere nothing changed: the configured model answers.
	other := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "hello there"})
	w.answerIn(t, "C0GENERAL", other.TS, "")
	if last := w.model.Requests()[len(w.model.Requests())-1]; last.Model != "test-main" && last.Model != cheapModel {
		t.Errorf("a turn in C0GENERAL called %s, want test-main", last.Model)
	}
	p1.stop(t)
	p2.stop(t)
}

// TestFilePlacesStartVersions: the settings file's places are stored as
// their version 1, by "config file", when the bot starts (once, with two
// instances starting at once on PostgreSQL), so export and history show
// them before anyone edits; a place already stored is never overwritten
// by the file, and config diff with the settings file says how they
// differ.
func TestFilePlacesStartVersions(t *testing.T) {
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			w := newSlackWorld(t)
			db.use(t, w.env)
			place := "slack:" + slacktest.TeamID + "/C0GENERAL"
			settings := writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{
				"reader": map[string]any{"instructions": "You only read.", "side_effects": map[string]string{"read": "allow"}, "places": []string{place}},
			}})
			w.env["NEO_CONFIG"] = settings
			config := func(args ...string) (string, error) {
				t.Helper()
				out, errOut, err := run(t, w.env, "", append([]string{"config"}, args...)...)
				return out + errOut, err
			}
			if out, err := config("history", place); err != nil || !strings.Contains(out, "no stored settings") {
				t.Fatalf("history before the first start = %v\n%s\nwant nothing stored", err, out)
			}
			if out, err := config("diff", settings); err == nil || !strings.Contains(out, place+`: bound in the file to skill "reader", nothing stored`) {
				t.Errorf("diff with the settings file before the first start = %v\n%s\nwant the place listed as not stored yet", err, out)
			}
			procs := []*process{start(t, w.env)}
			if db.name == "postgres" {
				procs = append(procs, start(t, w.env)) // two instances starting at once
			}
			stored := 0
			for _, p := range procs {
				waitOutput(t, p, "conversation hub started") // started: a stop now is a clean one
				stored += strings.Count(p.output.String(), "the settings file's place stored as its version 1")
			}
			for _, p := range procs {
				p.stop(t)
			}
			if stored != 1 {
				t.Errorf("the file's place was stored %d times by %d instances, want once", stored, len(procs))
			}
			if out, err := config("history", place); err != nil || strings.Count(strings.TrimSpace(out), "\n") != 0 ||
				!strings.Contains(out, "config file") || !strings.Contains(out, `skill: (the file's) → "reader"`) {
				t.Errorf("history after the start = %v\n%s\nwant one version by config file", err, out)
			}
			if out, err := config("export"); err != nil || !strings.Contains(out, `"changed_by": "config file"`) {
				t.Errorf("export after the start = %v\n%s\nwant the file's place, by config file", err, out)
			}
			if out, err := config("diff", settings); err != nil || !strings.Contains(out, "The stored settings are those of") {
				t.Errorf("diff with the settings file after the start = %v\n%s\nwant no difference", err, out)
			}
			if out, err := config("set", "--by", "cli:ops", place, "skill=default", "daily_tokens=9000"); err != nil {
				t.Fatalf("config set = %v\n%s", err, out)
			}
			p := start(t, w.env)
			waitOutput(t, p, "conversation hub started")
			p.stop(t)
			if !strings.Contains(p.output.String(), "the settings file binds the place to another skill than its stored settings") {
				t.Errorf("a restart with the file binding the place otherwise logged nothing about it:\n%s", p.output.String())
			}
			if out, err := config("history", place); err != nil || strings.Count(strings.TrimSpace(out), "\n") != 1 {
				t.Errorf("history after a restart = %v\n%s\nwant the two versions, the file not stored again", err, out)
			}
			out, err := config("diff", settings)
			if err == nil || !strings.Contains(out, place+": bound in the file, version 2 stored, which applies (last changed by cli:ops") ||
				!strings.Contains(out, `skill: "reader" → "default"`) || !strings.Contains(out, "daily_tokens: (the file's) → 9000") {
				t.Errorf("diff with the settings file after a change = %v\n%s\nwant the change listed and a failure", err, out)
			}
		})
	}
}

// TestEnterpriseOrgPlace: an Enterprise Grid organization's settings
// (slack:E…) set with config set apply to a turn in a workspace of the
// organization that sets none of its own, and not to a workspace outside
// it; export lists the organization; a daily budget on it is refused in
// words, and a channel written under it is not a place.
func TestEnterpriseOrgPlace(t *testing.T) {
	w := newSlackWorld(t)
	w.env["NEO_CONFIG"] = writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{
		"reader": map[string]any{"instructions": "You only read.", "side_effects": map[string]string{"read": "allow"}},
	}})
	config := func(args ...string) (string, error) {
		t.Helper()
		out, errOut, err := run(t, w.env, "", append([]string{"config"}, args...)...)
		return out + errOut, err
	}
	if out, err := config("set", "--by", "cli:ops", "slack:E0ORG", "skill=reader", "instructions=Answer like a pirate."); err != nil {
		t.Fatalf("config set slack:E0ORG = %v\n%s", err, out)
	}
	if out, err := config("set", "slack:E0ORG", "daily_tokens=5000"); err == nil || !strings.Contains(out, "daily_tokens cannot be set on an Enterprise Grid organization (E0ORG) yet") {
		t.Errorf("a budget on the organization = %v\n%s\nwant a refusal saying why", err, out)
	}
	if out, err := config("set", "slack:E0ORG/C0GENERAL", "skill=reader"); err == nil || !strings.Contains(out, "not a place") {
		t.Errorf("a channel under the organization = %v\n%s\nwant a refusal", err, out)
	}
	if out, err := config("export"); err != nil || !strings.Contains(out, `"slack:E0ORG"`) {
		t.Errorf("export = %v\n%s\nwant the organization listed", err, out)
	}
	var mu sync.Mutex
	systems := map[string]string{} // the question -> the system block of its turn
	w.model.Handle(func(r llmtest.Request) llmtest.Reply {
		if r.Model == cheapModel {
			return llmtest.Text(`{"facts":[]}`)
		}
		mu.Lock()
		defer mu.Unlock()
		systems[r.Messages[len(r.Messages)-1].Content] = r.Messages[0].Content
		return llmtest.Text("Ahoy.")
	})
	p := w.start(t, 1)
	payload, _ := json.Marshal(map[string]any{
		"token": slacktest.VerificationToken, "team_id": slacktest.TeamID, "enterprise_id": "E0ORG", "api_app_id": slacktest.AppID,
		"type": "event_callback", "event_id": "Ev0ORG1", "event_time": time.Now().Unix(),
		"authorizations": []map[string]any{{"enterprise_id": "E0ORG", "team_id": slacktest.TeamID, "user_id": slacktest.BotUserID, "is_bot": true}},
		"event": map[string]any{"type": "app_mention", "user": "UALICE", "text": "<@" + slacktest.BotUserID + "> in the org",
			"ts": "1700000000.000100", "channel": "C0GENERAL", "event_ts": "1700000000.000100"},
	})
	w.slack.Raw("events_api", payload)
	w.answerIn(t, "C0GENERAL", "1700000000.000100", "Ahoy.")
	outside := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "outside the org"})
	w.answerIn(t, "C0GENERAL", outside.TS, "Ahoy.")
	p.stop(t)
	mu.Lock()
	defer mu.Unlock()
	for question, want := range map[string]bool{"in the org": true, "outside the org": false} {
		var system string
		for q, s := range systems {
			if strings.Contains(q, question) {
				system = s
			}
		}
		if got := strings.Contains(system, "You only read.") && strings.Contains(system, "Answer like a pirate."); got != want || system == "" {
			t.Errorf("the turn %q was told the organization's settings: %v, want %v\n%s", question, got, want, system)
		}
	}
}

// TestBudgetRunsOutMidTurn: a channel's daily token budget is checked
// before every model call of a turn, not only when it starts: a turn
// whose model keeps asking for tools stops at the call that would run
// past the budget, and the thread is told which budget ran out, when it
// resets, who can raise it and what the turn did.
func TestBudgetRunsOutMidTurn(t *testing.T) {
	w := newSlackWorld(t)
	w.env["NEO_WEB_ADMINS"] = "ada"
	place := "slack:" + slacktest.TeamID + "/C0GENERAL"
	if out, errOut, err := run(t, w.env, "", "config", "set", "--by", "cli:ops", place, "daily_tokens=1000"); err != nil {
		t.Fatalf("config set = %v\n%s%s", err, out, errOut)
	}
	var mu sync.Mutex
	mainCalls := 0
	w.model.Handle(func(r llmtest.Request) llmtest.Reply {
		if r.Model == cheapModel {
			facts := llmtest.Text(`{"facts":[]}`)
			facts.Usage = llm.Usage{PromptTokens: 1, TotalTokens: 1}
			return facts
		}
		mu.Lock()
		defer mu.Unlock()
		mainCalls++
		// 400 tokens a call: 400, 800, then 1,200 of the channel's 1,000.
		more := llmtest.Calls(llmtest.Call(fmt.Sprintf("r%d", mainCalls), "memory_recall", fmt.Sprintf(`{"query":"step %d"}`, mainCalls)))
		more.Usage = llm.Usage{PromptTokens: 380, CompletionTokens: 20, TotalTokens: 400}
		return more
	})
	p := w.start(t, 1)
	d := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "dig through everything"})
	stop := w.answerIn(t, "C0GENERAL", d.TS, "I've used today's token budget for this channel (1200 of 1000 tokens), so I stopped before finishing.")
	for _, want := range []string{
		"The budget resets at 00:00 UTC, in ",
		"My admins can raise it on my admin page, and whoever runs me with neobot config set " + place + " daily_tokens=…",
		"What I did so far:",
		"memory_recall: done",
	} {
		if !strings.Contains(stop.Rendered(), want) {
			t.Errorf("the stopping answer says:\n%s\nwant %q in it", stop.Rendered(), want)
		}
	}
	p.stop(t)
	mu.Lock()
	defer mu.Unlock()
	if mainCalls != 3 {
		t.Errorf("the main model was called %d times, want 3: none once the budget was spent", mainCalls)
	}
}

// TestDiscordGuildsGoverned: with the bot in two Discord servers, each
// server's (and channel's) stored settings apply only there: a turn in
// the first server follows its stored skill and instructions, a turn in
// the second server's channel its own instructions and not the first's;
// /neo in each channel says in words how Neo is set up there.
func TestDiscordGuildsGoverned(t *testing.T) {
	w := newDiscordWorld(t)
	w.env["NEO_CONFIG"] = writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{
		"reader": map[string]any{"instructions": "You only read.", "side_effects": map[string]string{"read": "allow"}},
	}})
	ops := w.discord.AddGuildChannel("G0SECOND", "ops")
	for _, set := range [][]string{
		{"discord:" + discordtest.GuildID, "skill=reader", "instructions=Answer like a pirate."},
		{"discord:G0SECOND/" + ops.ID, "instructions=Answer in French."},
	} {
		if out, errOut, err := run(t, w.env, "", append([]string{"config", "set", "--by", "cli:ops"}, set...)...); err != nil {
			t.Fatalf("config set %v = %v\n%s%s", set, err, out, errOut)
		}
	}
	var mu sync.Mutex
	systems := map[string]string{} // the user's words -> the system block of their turn
	w.model.Handle(func(r llmtest.Request) llmtest.Reply {
		if r.Model == cheapModel {
			return llmtest.Text(`{"facts":[]}`)
		}
		mu.Lock()
		systems[r.Messages[len(r.Messages)-1].Content] = r.Messages[0].Content
		mu.Unlock()
		return llmtest.Text("Ahoy.")
	})
	p := w.start(t, 1)
	first := w.discord.Mention(discordtest.Msg{User: "111", Text: "hello first"})
	w.answerIn(t, first.ID, "Ahoy.")
	second := w.discord.Mention(discordtest.Msg{User: "111", Channel: ops.ID, Text: "hello second"})
	w.answerIn(t, second.ID, "Ahoy.")
	mu.Lock()
	for words, want := range map[string][]string{
		"hello first":  {"You only read.", "Answer like a pirate."},
		"hello second": {"Answer in French."},
	} {
		var sys string
		for k, v := range systems {
			if strings.Contains(k, words) {
				sys = v
			}
		}
		for _, w := range want {
			if !strings.Contains(sys, w) {
				t.Errorf("the turn %q was told:\n%s\nwant %q", words, sys, w)
			}
		}
		other := map[string]string{"hello first": "Answer in French.", "hello second": "pirate"}[words]
		if strings.Contains(sys, other) || words == "hello second" && strings.Contains(sys, "You only read.") {
			t.Errorf("the turn %q was told another server's settings:\n%s", words, sys)
		}
	}
	mu.Unlock()

	for channel, want := range map[string][]string{
		discordtest.ChannelID: {`In this channel Neo follows the skill "reader".`, `"You only read. Answer like a pirate."`, "Neo may not delegate spends here."},
		ops.ID:                {"In this channel Neo follows the default skill.", `"Answer in French."`, "with the model test-main."},
	} {
		r, err := w.discord.WaitResponse(waitCtx(t), w.discord.SlashCommand("111", channel, "neo"))
		if err != nil {
			t.Fatalf("no answer to /neo in %s: %v\n%s", channel, err, p.output.String())
		}
		for _, s := range want {
			if !strings.Contains(r.Content, s) {
				t.Errorf("/neo in %s lacks %q:\n%s", channel, s, r.Content)
			}
		}
	}
	p.stop(t)
}

// TestDiscordPlaceApprovers: a channel's stored approvers may approve a
// spend the execution daemon asks there on Discord, besides the
// configured ones; the requester, listed too, may not approve her own
// while self-approval is off.
func TestDiscordPlaceApprovers(t *testing.T) {
	w := newDiscordWorld(t)
	w.env["NEO_SELF_APPROVE"] = "false"
	if out, errOut, err := run(t, w.env, "", "config", "set", "discord:"+discordtest.GuildID+"/"+discordtest.ChannelID, "approvers=222,111"); err != nil {
		t.Fatalf("config set = %v\n%s%s", err, out, errOut)
	}
	_, mention, gate := w.askSpend(t)
	refused, err := w.discord.WaitResponse(waitCtx(t), w.discord.Click("111", gate, 0))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(refused.Content, "can't approve this") || len(w.daemon.Answers()) != 0 {
		t.Errorf("the requester's click = %+v, daemon answers %+v; want a private refusal and nothing answered", refused, w.daemon.Answers())
	}
	if _, err := w.discord.WaitResponse(waitCtx(t), w.discord.Click("222", gate, 0)); err != nil {
		t.Fatal(err)
	}
	w.answerIn(t, mention.ID, "Done: 5 PAX sent (tx 0xfeed).")
	if answers := w.daemon.Answers(); len(answers) != 1 || !answers[0].Approved {
		t.Errorf("daemon answers = %+v, want the approval of 222, whom the channel names", answers)
	}
}
