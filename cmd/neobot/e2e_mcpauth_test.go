package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm/llmtest"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/mcp/oauth/oauthtest"
)

// notesServer is a remote MCP server behind OAuth with one tool, note.
func notesServer(t *testing.T) *oauthtest.Server {
	t.Helper()
	return oauthtest.New(t, mcp.NewServer("notes", "1.0.0", mcp.ServerTool{
		Name: "note", Description: "Read the team's note.",
		Handle: func(context.Context, map[string]any) (mcp.Result, error) {
			return mcp.TextResult("the launch is on Tuesday"), nil
		},
	}).Handler())
}

// oauthWorld is a Slack world whose manifest has the notes server with
// auth, and the ops listener, admin API and sealing key that logins need.
func oauthWorld(t *testing.T, prot *oauthtest.Server, auth string) *slackWorld {
	t.Helper()
	w := newSlackWorld(t)
	w.env["NEO_MANIFEST"] = writeJSON(t, "manifest.json", map[string]any{
		"did": "did:web:neobot.test:agents:e2e", "servers": []any{map[string]any{
			"alias": "notes", "transport": "http", "url": prot.URL(), "auth": auth,
			"version": "1.0.0", "tools": []string{"note"}, "side_effects": "read",
		}}})
	w.env["NEO_HEALTH_ADDR"] = freeAddr(t)
	w.env["NEO_ADMIN_TOKEN"] = strings.Repeat("a1", 20)
	w.env["NEO_SECRET_KEY"] = strings.Repeat("5e", 32)
	return w
}

// TestMCPOAuthOperatorLogin: a remote server behind OAuth waits for the
// operator's login; `neobot mcp login` prints the authorization URL,
// opening it completes the login through the bot's callback, Neo then
// uses the server; a revoked token is refused; and no token is ever in
// the log or the database file in clear.
func TestMCPOAuthOperatorLogin(t *testing.T) {
	prot := notesServer(t)
	w := oauthWorld(t, prot, "oauth")
	scriptModel(t, w.model,
		llmtest.Calls(llmtest.Call("c1", "notes__note", `{}`)),
		llmtest.Text("The launch is on Tuesday."),
		llmtest.Calls(llmtest.Call("c2", "notes__note", `{}`)),
		llmtest.Text("I can't read the notes right now."),
	)
	p := w.start(t, 1)
	ops := "http://" + w.env["NEO_HEALTH_ADDR"]
	waitFor(t, p, ops+"/readyz", "the notes server waiting for its login", func(_ int, body string) bool {
		return strings.Contains(body, "neobot mcp login notes")
	})

	out, stderr, err := run(t, w.env, "", "mcp", "login", "notes")
	if err != nil {
		t.Fatalf("neobot mcp login notes: %v\n%s", err, stderr)
	}
	link := regexp.MustCompile(`https?://\S+/authorize\?\S+`).FindString(out)
	if link == "" {
		t.Fatalf("neobot mcp login printed no authorization URL:\n%s", out)
	}
	// The person opens it; the authorization server approves and sends
	// the browser to the bot's callback.
	resp, err := http.Get(link)
	if err != nil {
		t.Fatalf("open the login link: %v", err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "connected to notes") {
		t.Fatalf("the callback answered %d:\n%s", resp.StatusCode, page)
	}
	waitFor(t, p, ops+"/readyz", "the notes server up", func(status int, body string) bool {
		return status == http.StatusOK && !strings.Contains(body, "neobot mcp login notes")
	})

	m := w.slack.Mention(slacktest.Msg{User: "UALICE", Channel: "CNOTES", Text: "when is the launch?"})
	w.answerIn(t, "CNOTES", m.TS, "The launch is on Tuesday.")
	if got := toolResult(mainRequests(w.model)[1], "c1"); !strings.Contains(got, "the launch is on Tuesday") {
		t.Fatalf("the model was told %q for notes__note, want the server's note", got)
	}

	prot.RevokeAll()
	m2 := w.slack.Mention(slacktest.Msg{User: "UALICE", Channel: "CNOTES", Text: "and again?"})
	w.answerIn(t, "CNOTES", m2.TS, "I can't read the notes right now.")
	if got := toolResult(mainRequests(w.model)[3], "c2"); strings.Contains(got, "Tuesday") {
		t.Errorf("with the token revoked the model was told %q, want a refusal", got)
	}
	if prot.Refused() == 0 {
		t.Errorf("the server never refused the revoked token")
	}

	p.stop(t)
	db, err := os.ReadFile(w.env["NEO_DB_PATH"])
	if err != nil {
		t.Fatal(err)
	}
	issued := prot.Issued()
	if len(issued) == 0 {
		t.Fatal("the authorization server issued no token")
	}
	for _, tok := range issued {
		if strings.Contains(p.output.String(), tok) || strings.Contains(out, tok) {
			t.Errorf("a token issued by the authorization server is in neobot's output")
		}
		if strings.Contains(string(db), tok) {
			t.Errorf("a token issued by the authorization server is in the database file in clear")
		}
	}
}
