package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// get fetches url and returns its status and body.
func get(url string) (int, string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// waitFor polls url until ok accepts its answer, and returns the body.
func waitFor(t *testing.T, p *process, url, what string, ok func(status int, body string) bool) string {
	t.Helper()
	ctx := waitCtx(t)
	var last string
	for {
		status, body, err := get(url)
		if err == nil && ok(status, body) {
			return body
		}
		last = body
		select {
		case <-ctx.Done():
			t.Fatalf("%s never showed %s; last answer:\n%s\nneobot output:\n%s", url, what, last, p.output.String())
		case <-p.done:
			t.Fatalf("neobot exited: %v\n%s", p.err, p.output.String())
		case <-time.After(20 * time.Millisecond): // polling an endpoint, not timing the bot
		}
	}
}

// metricLine reports whether a Prometheus text exposition has a sample
// named name whose labels include every one of labels with value want.
// metricValue returns the value of the series written exactly as series
// (name, or name{labels} in the exposition's order), 0 when absent.
func metricValue(body, series string) float64 {
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f
		}
	}
	return 0
}

func metricLine(body, name string, labels []string, want string) bool {
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 || line[i+1:] != want {
			continue
		}
		all := true
		for _, l := range labels {
			all = all && strings.Contains(line[:i], l)
		}
		if all {
			return true
		}
	}
	return false
}

// TestOpsMetricsAndReadiness: after a conversation that calls a real MCP
// tool, /metrics counts the turn, the model's tokens as the fake reported
// them, the tool call and the Slack API calls; /readyz is ready while
// Socket Mode is connected, not ready while Slack drops it and refuses to
// reconnect, and ready again once it reconnects.
func TestOpsMetricsAndReadiness(t *testing.T) {
	w := newSlackWorld(t)
	addr := freeAddr(t)
	w.env["NEO_HEALTH_ADDR"] = addr
	w.env["NEO_MANIFEST"] = fsManifest(t, t.TempDir())
	w.env["NEO_DAILY_TOKEN_BUDGET"] = "100000"
	call := llmtest.Calls(llmtest.Call("c1", "fs__list_allowed_directories", `{}`))
	call.Usage = llm.Usage{PromptTokens: 120, CompletionTokens: 7, TotalTokens: 127}
	answer := llmtest.Text("Done: one directory.")
	answer.Usage = llm.Usage{PromptTokens: 200, CompletionTokens: 5, TotalTokens: 205}
	scriptModel(t, w.model, call, answer)
	p := w.start(t, 1)
	base := "http://" + addr

	body := waitFor(t, p, base+"/readyz", "ready", func(s int, _ string) bool { return s == http.StatusOK })
	for _, want := range []string{"ok store: writable", "ok slack: connected", "ok conversations: running", "ok tools: fs up"} {
		if !strings.Contains(body, want) {
			t.Errorf("/readyz lacks %q:\n%s", want, body)
		}
	}

	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "which directories can you read?"})
	w.answerIn(t, "C0GENERAL", mention.TS, "Done: one directory.")

	metrics := waitFor(t, p, base+"/metrics", "the answered turn", func(s int, b string) bool {
		return s == http.StatusOK && metricLine(b, "neobot_turns_total", []string{`outcome="answered"`}, "1")
	})
	for _, m := range []struct {
		name   string
		labels []string
		want   string
	}{
		{"neobot_steps_total", nil, "2"},
		{"neobot_model_tokens_total", []string{`model="test-main"`, `kind="prompt"`}, "320"},
		{"neobot_model_tokens_total", []string{`model="test-main"`, `kind="completion"`}, "12"},
		{"neobot_model_calls_total", []string{`model="test-main"`, `outcome="ok"`}, "2"},
		{"neobot_tool_calls_total", []string{`server="fs"`, `tool="fs__list_allowed_directories"`, `outcome="ok"`}, "1"},
		{"neobot_mcp_server_up", []string{`server="fs"`}, "1"},
		{"neobot_platform_api_calls_total", []string{`platform="slack"`, `method="auth.test"`, `code="200"`}, "1"},
		{"neobot_gates_pending", nil, "0"},
		{"neobot_ready", nil, "1"},
		{"neobot_daily_token_budget", nil, "100000"},
	} {
		if !metricLine(metrics, m.name, m.labels, m.want) {
			t.Errorf("/metrics has no %s%v = %s", m.name, m.labels, m.want)
		}
	}
	// The workspace's tokens today: at least the main model's 332, which
	// are counted before the answer shows; the cheap model's write-back,
	// after the answer, may or may not be in yet.
	if most := metricValue(metrics, "neobot_daily_tokens_most"); most < 332 {
		t.Errorf("neobot_daily_tokens_most = %v, want at least the main model's 332 tokens", most)
	}
	if !strings.Contains(metrics, "neobot_store_write_seconds_count") {
		t.Errorf("/metrics lacks the store write latency")
	}
	if strings.Contains(metrics, "xoxb-") {
		t.Errorf("/metrics leaks a token")
	}

	// Slack drops the socket and refuses the next connections for a while.
	w.slack.Script("apps.connections.open", slacktest.Reply{Error: "internal_error"}, slacktest.Reply{Error: "internal_error"},
		slacktest.Reply{Error: "internal_error"}, slacktest.Reply{Error: "internal_error"})
	w.slack.Disconnect()
	body = waitFor(t, p, base+"/readyz", "not ready", func(s int, _ string) bool { return s == http.StatusServiceUnavailable })
	if !strings.Contains(body, "FAIL slack: not connected") {
		t.Errorf("/readyz while disconnected = %q, want it to name Slack", body)
	}
	if status, _, err := get(base + "/healthz"); err != nil || status != http.StatusOK {
		t.Errorf("/healthz while Slack is away = %d, %v; want 200: the process still serves", status, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := w.slack.WaitConnected(ctx); err != nil {
		t.Fatalf("neobot never reconnected: %v", err)
	}
	waitFor(t, p, base+"/readyz", "ready again", func(s int, _ string) bool { return s == http.StatusOK })
	p.stop(t)
}

// TestUsageAndBudget: the tokens the model reported are accounted to the
// workspace; once its daily budget is spent the next mention is declined
// in words without calling the model; `neobot usage` totals them and
// prices them.
func TestUsageAndBudget(t *testing.T) {
	w := newSlackWorld(t)
	w.env["NEO_DAILY_TOKEN_BUDGET"] = "300"
	w.env["NEO_MODEL_PRICES"] = "test-main=10000/20000"
	answer := llmtest.Text("Here is a long answer.")
	answer.Usage = llm.Usage{PromptTokens: 320, CompletionTokens: 12, TotalTokens: 332}
	scriptModel(t, w.model, answer) // a second main call fails the test
	p := w.start(t, 1)

	first := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "tell me everything"})
	w.answerIn(t, "C0GENERAL", first.TS, "Here is a long answer.")
	second := w.slack.Mention(slacktest.Msg{User: "UBOB", Text: "and now me"})
	// 332 from the answer, and whatever the cheap model's write-back
	// reported if it finished first.
	decline := w.answerIn(t, "C0GENERAL", second.TS, "today's token budget for this workspace (")
	var spent int
	if _, err := fmt.Sscanf(decline.Rendered()[strings.Index(decline.Rendered(), "workspace (")+len("workspace ("):], "%d of 300 tokens", &spent); err != nil || spent < 332 {
		t.Errorf("the decline says %q, want at least the 332 tokens the answer used, of 300", decline.Rendered())
	}
	if !strings.Contains(decline.Rendered(), "resets at 00:00 UTC") {
		t.Errorf("the decline does not say when the budget resets: %q", decline.Rendered())
	}
	p.stop(t)

	out, stderr, err := run(t, w.env, "", "usage", "--by", "model")
	if err != nil {
		t.Fatalf("neobot usage = %v\n%s", err, stderr)
	}
	var row string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "test-main") {
			row = strings.Join(strings.Fields(line), " ")
		}
	}
	if want := "test-main 1 320 12 332 $3.44"; row != want {
		t.Errorf("usage row for test-main = %q, want %q; whole table:\n%s", row, want, out)
	}
	if !strings.Contains(out, "total since") {
		t.Errorf("usage has no total line:\n%s", out)
	}
	if _, stderr, err := run(t, w.env, "", "usage", "--by", "planet"); err == nil || !strings.Contains(stderr, "workspace") {
		t.Errorf("usage --by planet = %v, %q; want an error listing the groupings", err, stderr)
	}
}

// TestAdminWhileRunning: with the bot running (and holding the database),
// neobot memory list, usage and threads go through its admin API; without
// the token they say how to reach it; the API refuses a wrong token.
func TestAdminWhileRunning(t *testing.T) {
	w := newSlackWorld(t)
	addr := freeAddr(t)
	w.env["NEO_HEALTH_ADDR"] = addr
	w.env["NEO_ADMIN_TOKEN"] = "admin-e2e-token-0123456789abcdef0123"
	w.model.Handle(func(r llmtest.Request) llmtest.Reply {
		if r.Model == cheapModel {
			return llmtest.Text(`{"facts":[{"text":"Staging runs on kube-stg-2","kind":"fact","about":"shared","entities":["kube-stg-2"]}]}`)
		}
		reply := llmtest.Text("Noted: staging is kube-stg-2.")
		reply.Usage = llm.Usage{PromptTokens: 40, CompletionTokens: 6, TotalTokens: 46}
		return reply
	})
	p := w.start(t, 1)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "staging is kube-stg-2"})
	w.answerIn(t, "C0GENERAL", mention.TS, "Noted: staging is kube-stg-2.")
	key := "slack/" + slacktest.TeamID + "/C0GENERAL/" + mention.TS

	// The write-back runs after the answer: wait for the fact to be listed.
	ctx := waitCtx(t)
	var out string
	for !strings.Contains(out, "kube-stg-2") {
		var stderr string
		var err error
		out, stderr, err = run(t, w.env, "", "memory", "list", "--workspace", slacktest.TeamID)
		if err != nil {
			t.Fatalf("memory list while the bot runs = %v\n%s", err, stderr)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("memory list never showed the fact; last output:\n%s", out)
		case <-time.After(50 * time.Millisecond): // polling the bot's memory, not timing it
		}
	}

	threads, stderr, err := run(t, w.env, "", "threads", "list")
	if err != nil || !strings.Contains(threads, key) {
		t.Errorf("threads list = %v %s; want %s listed:\n%s", err, stderr, key, threads)
	}
	show, stderr, err := run(t, w.env, "", "threads", "show", key)
	if err != nil || !strings.Contains(show, "**User:** staging is kube-stg-2") || !strings.Contains(show, "**Neo:** Noted: staging is kube-stg-2.") {
		t.Errorf("threads show = %v %s:\n%s", err, stderr, show)
	}
	exported, _, err := run(t, w.env, "", "threads", "export", key, "--format", "json")
	var tr transcript
	if err != nil || json.Unmarshal([]byte(exported), &tr) != nil || len(tr.Messages) != 2 || tr.Thread != key {
		t.Errorf("threads export --format json = %v:\n%s", err, exported)
	}
	// Usage is flushed every few seconds: the running bot's answer may
	// still be in memory, so this only checks the API answers.
	if _, stderr, err := run(t, w.env, "", "usage"); err != nil {
		t.Errorf("usage while the bot runs = %v\n%s", err, stderr)
	}

	noToken := maps.Clone(w.env)
	delete(noToken, "NEO_ADMIN_TOKEN")
	if _, stderr, err := run(t, noToken, "", "memory", "list"); err == nil || !strings.Contains(stderr, "NEO_ADMIN_TOKEN") {
		t.Errorf("memory list without the token = %v, %q; want an error naming NEO_ADMIN_TOKEN", err, stderr)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/admin/v1/threads", nil)
	req.Header.Set("Authorization", "Bearer wrong")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("admin API with a wrong token = %v, %v; want 401", resp, err)
	} else {
		resp.Body.Close()
	}
	p.stop(t)
	if strings.Contains(p.output.String(), "admin-e2e-token-0123456789abcdef0123") {
		t.Errorf("neobot's log leaks the admin token")
	}
}
