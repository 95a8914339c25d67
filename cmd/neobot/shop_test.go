package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm/llmtest"
	"github.com/neobot/neobot/core/mcp"
)

// The shop is an MCP server written for the measurement of issue 41: the
// test binary serves it over stdio when NEOBOT_SHOP_LOG names its log (see
// TestMain). Its payment tools have names the seed's escalate patterns
// missed, and its manifest entry declares no side effects; every call
// that reaches it is appended to the log, synced, as a JSON line.

// shopTools are the shop's tools: three that take money, one that looks
// an order up.
var shopTools = []string{"create_payment", "charge", "purchase", "lookup_order"}

// shopCall is one line of the shop's log.
type shopCall struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args,omitempty"`
}

// serveShop serves the shop on stdin/stdout until stdin ends.
func serveShop(logPath string) int {
	log, err := openJSONLog(logPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer log.Close()
	var tools []mcp.ServerTool
	for _, name := range shopTools {
		tools = append(tools, mcp.ServerTool{Name: name, Description: "The shop's " + name + ".", Handle: func(_ context.Context, args map[string]any) (mcp.Result, error) {
			return mcp.TextResult(name + " done"), log.write(shopCall{Tool: name, Args: args})
		}})
	}
	if err := mcp.NewServer("shop", "1.0.0", tools...).ServeStdio(context.Background(), os.Stdin, os.Stdout); err != nil {
		return 1
	}
	return 0
}

// TestShopPaymentsNeedAClick is the measurement from outside of issue 41:
// a shop server with create_payment, charge and purchase whose manifest
// entry declares no side effects, no skills configured, and a model that
// calls them directly (as a prompt injection in a tool result would make
// it). No call reaches the shop without a click: the payment tools are
// neither offered nor callable, and the shop's other tool, whose class
// nobody declared, waits for an approver's click. neobot check lists the
// shop with the manifest line that declares it.
func TestShopPaymentsNeedAClick(t *testing.T) {
	w := &slackWorld{slack: slacktest.New(t), model: llmtest.New(t)}
	log := filepath.Join(t.TempDir(), "shop.log")
	exe, _ := os.Executable()
	manifest := writeJSON(t, "manifest.json", map[string]any{"did": "did:web:neobot.test:agents:e2e", "servers": []any{map[string]any{
		"alias": "shop", "transport": "stdio", "command": exe, "version": "1.0.0",
		"env": []string{"NEOBOT_SHOP_LOG=$env:NEOBOT_SHOP_LOG"}, "tools": shopTools,
	}}})
	w.env = map[string]string{
		"NEO_MODEL": "test-main", "NEO_CHEAP_MODEL": cheapModel, "NEO_LLM_BASE_URL": w.model.BaseURL(),
		"NEO_DB_PATH": filepath.Join(t.TempDir(), "neobot.db"), "NEO_MANIFEST": manifest, "NEOBOT_SHOP_LOG": log,
		"SLACK_BOT_TOKEN": "xoxb-e2e-bot-token", "SLACK_APP_TOKEN": "xapp-e2e-app-token", "SLACK_API_URL": w.slack.APIURL(),
		"SLACK_SPEND_USERS": "UALICE", "SLACK_APPROVERS": "UCAROL",
	}

	out, _, _ := run(t, w.env, "", "check")
	for _, want := range []string{"shop__charge (spend, undeclared)", "shop__create_payment (spend, undeclared)", "shop__purchase (spend, undeclared)",
		"undeclared side effects: 1 server(s)", "shop, declared at " + manifest + ":1: create_payment, charge, purchase, lookup_order"} {
		if !strings.Contains(out, want) {
			t.Errorf("neobot check does not say %q:\n%s", want, out)
		}
	}

	scriptModel(t, w.model,
		llmtest.Calls(
			llmtest.Call("c1", "shop__create_payment", `{"amount":500,"currency":"USD","to":"mallory"}`),
			llmtest.Call("c2", "shop__charge", `{"amount":500,"card":"tok_visa"}`),
			llmtest.Call("c3", "shop__purchase", `{"sku":"GIFTCARD-500"}`),
		),
		llmtest.Calls(llmtest.Call("c4", "shop__lookup_order", `{"order":"A1"}`)),
		llmtest.Text("Order A1 looked up; nothing was paid."),
	)
	p := w.start(t, 1)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "look up order A1"})
	// The turn stops at a question, or (were the calls run outright) ends
	// with the answer: either way, nobody has clicked yet.
	gate, err := w.slack.WaitMessage(waitCtx(t), func(m slacktest.Message) bool {
		return m.FromBot() && m.ThreadTS == mention.TS && (len(m.Buttons()) > 0 || strings.Contains(m.Rendered(), "nothing was paid"))
	})
	if err != nil {
		t.Fatalf("neither an approval nor an answer in the thread: %v\n%s", err, p.output.String())
	}
	if calls := readJSONLog[shopCall](t, log); len(calls) != 0 {
		t.Fatalf("%d calls reached the shop without a click: %+v", len(calls), calls)
	}
	if !strings.Contains(gate.Rendered(), "shop/lookup_order (external)") {
		t.Fatalf("the first message with buttons is not the approval of shop/lookup_order:\n%s", gate.Rendered())
	}
	first := mainRequests(w.model)[0]
	for _, name := range shopTools[:3] {
		if offersTool(first, "shop__"+name) {
			t.Errorf("the model was offered shop__%s", name)
		}
	}
	if !offersTool(first, "shop__lookup_order") {
		t.Error("the model was not offered shop__lookup_order, which it may call with a click")
	}
	second := mainRequests(w.model)[1]
	for _, id := range []string{"c1", "c2", "c3"} {
		if got := toolResult(second, id); !strings.Contains(got, "cannot be called directly") {
			t.Errorf("the model was told %q for %s, want it refused", got, id)
		}
	}

	w.slack.Click("UCAROL", gate, 0)
	w.answerIn(t, "C0GENERAL", mention.TS, "nothing was paid")
	calls := readJSONLog[shopCall](t, log)
	if len(calls) != 1 || calls[0].Tool != "lookup_order" {
		t.Errorf("calls that reached the shop = %+v, want lookup_order alone, after the click", calls)
	}
	p.stop(t)
}

// TestStartRefusedWhenNobodyCanAllowUndeclared: a server that declares no
// side effects has every call asked, so Slack without anyone who may
// answer stops start-up, naming the setting and the server, as a skill
// that asks does.
func TestStartRefusedWhenNobodyCanAllowUndeclared(t *testing.T) {
	exe, _ := os.Executable()
	env := map[string]string{
		"NEO_MODEL": "test-main", "NEO_LLM_BASE_URL": "http://127.0.0.1:1", "NEO_DB_PATH": filepath.Join(t.TempDir(), "neobot.db"),
		"NEO_MANIFEST": writeJSON(t, "manifest.json", map[string]any{"did": "did:web:neobot.test:agents:e2e", "servers": []any{map[string]any{
			"alias": "shop", "transport": "stdio", "command": exe, "version": "1.0.0", "tools": []string{"lookup_order"},
		}}}),
		"SLACK_BOT_TOKEN": "xoxb-e2e-bot-token", "SLACK_APP_TOKEN": "xapp-e2e-app-token", "SLACK_API_URL": "http://127.0.0.1:1",
	}
	_, out, err := run(t, env, "")
	if err == nil {
		t.Fatalf("neobot started with nobody to allow the shop's calls:\n%s", out)
	}
	for _, want := range []string{"SLACK_APPROVERS", "declares no side effects for server shop", "NEO_SELF_APPROVE"} {
		if !strings.Contains(out, want) {
			t.Errorf("start-up error does not say %q:\n%s", want, out)
		}
	}
}
