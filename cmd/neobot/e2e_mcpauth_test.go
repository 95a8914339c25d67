package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/neobot/neobot/adapters/discord/discordtest"
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
	w.env["SLACK_CLIENT_ID"], w.env["SLACK_CLIENT_SECRET"] = "e2e.slack-client", "e2e-slack-client-secret"
	w.slack.SetOIDCClient("e2e.slack-client", "e2e-slack-client-secret")
	return w
}

// connectLinkRe finds a person's connect link.
var connectLinkRe = regexp.MustCompile(`https?://[^\s>|]+/mcp/connect/[A-Za-z0-9_-]+`)

// newBrowser is a web browser: it keeps cookies and follows redirects.
func newBrowser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar}
}

// visitPage opens u in b and returns the status, the page and where b ended
// up.
func visitPage(t *testing.T, b *http.Client, u string) (int, string, *url.URL) {
	t.Helper()
	resp, err := b.Get(u)
	if err != nil {
		t.Fatalf("open %s: %v", u, err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(page), resp.Request.URL
}

// authorizationURL opens a connect link in b and returns the address it
// sends b to at the authorization server prot, without going there.
func authorizationURL(t *testing.T, b *http.Client, link string, prot *oauthtest.Server) string {
	t.Helper()
	as, _ := url.Parse(prot.URL())
	stop := *b
	stop.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if req.URL.Host == as.Host {
			return http.ErrUseLastResponse
		}
		return nil
	}
	resp, err := stop.Get(link)
	if err != nil {
		t.Fatalf("open %s: %v", link, err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if next, err := url.Parse(loc); err != nil || resp.StatusCode != http.StatusSeeOther || next.Host != as.Host {
		t.Fatalf("the link did not lead to the authorization server: %d %s\n%s", resp.StatusCode, loc, page)
	}
	return loc
}

// forwardedLinkRefused checks that a person other than the link's, signed
// in as themselves in browser other, is refused and that nothing reached
// the authorization server; then that the authorization URL the right
// person's browser is sent to connects nobody when forwarded; then that
// the right person connects in their own browser, after which the link
// is used up. It returns the connected page.
func forwardedLinkRefused(t *testing.T, link string, prot *oauthtest.Server, owner, other *http.Client) string {
	t.Helper()
	status, page, _ := visitPage(t, other, link)
	if status != http.StatusForbidden || !strings.Contains(page, "made for someone else") || !strings.Contains(page, "ask Neo in the chat") {
		t.Errorf("a forwarded link opened by someone else answered %d:\n%s\nwant a refusal saying it was made for someone else and how to get one's own", status, page)
	}
	if n := len(prot.Issued()); n != 0 {
		t.Fatalf("the authorization server issued %d tokens on a link opened by someone else", n)
	}
	auth := authorizationURL(t, owner, link, prot)
	status, page, _ = visitPage(t, other, auth)
	if status != http.StatusForbidden || !strings.Contains(page, "not started from your link in this browser") {
		t.Errorf("the owner's authorization URL, forwarded, answered %d:\n%s\nwant a refusal", status, page)
	}
	if n := len(prot.Issued()); n != 0 {
		t.Fatalf("a forwarded authorization URL connected an account (%d tokens issued)", n)
	}
	status, page, _ = visitPage(t, owner, auth)
	if status != http.StatusOK || !strings.Contains(page, "connected to notes") {
		t.Fatalf("the right person's callback answered %d:\n%s", status, page)
	}
	if again, used, _ := visitPage(t, owner, link); again != http.StatusBadRequest || !strings.Contains(used, "expired or was already used") {
		t.Errorf("the link opened again after connecting answered %d:\n%s\nwant it used up", again, used)
	}
	return page
}

// noSecretsIn checks that none of secrets is in neobot's output.
func noSecretsIn(t *testing.T, output string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if s != "" && strings.Contains(output, s) {
			t.Errorf("a sign-in code, token or link secret is in neobot's output")
		}
	}
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

	// The login outlives a restart: the grant is read back from the store.
	p.stop(t)
	p = w.start(t, 2)
	waitFor(t, p, ops+"/readyz", "the notes server up after a restart, without a new login", func(status int, body string) bool {
		return status == http.StatusOK && strings.Contains(body, "notes up")
	})

	prot.RevokeAll()
	m2 := w.slack.Mention(slacktest.Msg{User: "UALICE", Channel: "CNOTES", Text: "and again?"})
	w.answerIn(t, "CNOTES", m2.TS, "I can't read the notes right now.")
	if got := toolResult(mainRequests(w.model)[3], "c2"); strings.Contains(got, "Tuesday") || !strings.Contains(got, "neobot mcp login notes") {
		t.Errorf("with the token revoked the model was told %q, want a refusal saying to log in again", got)
	}
	waitFor(t, p, ops+"/readyz", "the notes server waiting for a new login", func(_ int, body string) bool {
		return strings.Contains(body, "neobot mcp login notes")
	})
	if prot.Refused() == 0 {
		t.Errorf("the server never refused the revoked token")
	}

	p.stop(t)
	logout, stderr, err := run(t, w.env, "", "mcp", "logout", "notes")
	if err != nil || !strings.Contains(logout, "Removed the operator's token for notes") {
		t.Errorf("neobot mcp logout notes with the bot stopped = %q, %v\n%s", logout, err, stderr)
	}
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

// privateLink waits for the ephemeral message to user that carries a
// connect link, and returns the link.
func privateLink(t *testing.T, w *slackWorld, user string, after int) string {
	t.Helper()
	re := connectLinkRe
	var links []string
	_, err := w.slack.WaitMessages(waitCtx(t), func(ms []slacktest.Message) bool {
		links = links[:0] // counted afresh each time the fake looks: it looks again on every new message
		for _, m := range ms {
			if m.Ephemeral && m.Recipient == user && re.MatchString(m.Text) {
				links = append(links, re.FindString(m.Text))
			}
		}
		return len(links) > after
	})
	if err != nil {
		t.Fatalf("no private connect link %d for %s: %v\nmessages: %+v", after+1, user, err, w.slack.Messages())
	}
	return strings.ReplaceAll(links[after], "&amp;", "&")
}

// TestMCPOAuthPerUser: on a per_user server, a person who has not
// connected gets a private link (not an error, not in the thread). The
// link is bound to them: forwarded to someone else, who signs in with
// Slack as themselves, it is refused before the authorization server is
// involved, and the authorization URL it leads Alice to connects nobody
// in another browser. Opened by Alice, signed in with Slack as herself,
// it connects her account and the page says so; her calls use her own
// token; another person is not let in on it; logout --user takes it away
// again. No sign-in code or token is logged.
func TestMCPOAuthPerUser(t *testing.T) {
	prot := notesServer(t)
	w := oauthWorld(t, prot, "per_user")
	scriptModel(t, w.model,
		llmtest.Calls(llmtest.Call("c1", "notes__note", `{}`)),
		llmtest.Text("Open the link I sent you, then ask again."),
		llmtest.Calls(llmtest.Call("c2", "notes__note", `{}`)),
		llmtest.Text("The launch is on Tuesday."),
		llmtest.Calls(llmtest.Call("c3", "notes__note", `{}`)),
		llmtest.Text("Bob, connect your account first."),
		llmtest.Calls(llmtest.Call("c4", "notes__note", `{}`)),
		llmtest.Text("Connect again, please."),
	)
	p := w.start(t, 1)

	dm := w.slack.DM(slacktest.Msg{User: "UALICE", Text: "when is the launch?"})
	w.answerIn(t, "D0DM", dm.TS, "Open the link I sent you")
	if got := toolResult(mainRequests(w.model)[1], "c1"); !strings.Contains(got, "private link") || strings.Contains(got, "/authorize") {
		t.Errorf("the model was told %q, want that a private link was sent, without the link", got)
	}
	link := privateLink(t, w, "UALICE", 0)
	for _, m := range w.slack.Messages() {
		if !m.Ephemeral && strings.Contains(m.Text+m.Markdown+string(m.Blocks), "/mcp/connect/") {
			t.Errorf("the connect link was posted where others can see it: %+v", m)
		}
	}
	alice, mallory := newBrowser(t), newBrowser(t)
	w.slack.SignIn(alice.Jar, "UALICE")
	w.slack.SignIn(mallory.Jar, "UMALLORY")
	if page := forwardedLinkRefused(t, link, prot, alice, mallory); !strings.Contains(page, "UALICE") {
		t.Errorf("the connected page does not name who was connected:\n%s", page)
	}

	dm2 := w.slack.DM(slacktest.Msg{User: "UALICE", Text: "and now?"})
	w.answerIn(t, "D0DM", dm2.TS, "The launch is on Tuesday.")
	if got := toolResult(mainRequests(w.model)[3], "c2"); !strings.Contains(got, "the launch is on Tuesday") {
		t.Fatalf("with her account connected the model was told %q, want the note", got)
	}

	bob := w.slack.Mention(slacktest.Msg{User: "UBOB", Channel: "CTEAM", Text: "when is the launch?"})
	w.answerIn(t, "CTEAM", bob.TS, "Bob, connect your account first.")
	if got := toolResult(mainRequests(w.model)[5], "c3"); strings.Contains(got, "Tuesday") {
		t.Errorf("Bob, not connected, got %q: another person's token was used", got)
	}
	privateLink(t, w, "UBOB", 0)

	if out, stderr, err := run(t, w.env, "", "mcp", "logout", "notes", "--user", "slack."+slacktest.TeamID+".UALICE"); err != nil {
		t.Fatalf("neobot mcp logout --user: %v\n%s%s", err, out, stderr)
	}
	if n := prot.Revocations(); n != 1 {
		t.Errorf("logout --user revoked %d tokens at the authorization server, want Alice's", n)
	}
	dm3 := w.slack.DM(slacktest.Msg{User: "UALICE", Text: "once more?"})
	w.answerIn(t, "D0DM", dm3.TS, "Connect again, please.")
	if got := toolResult(mainRequests(w.model)[7], "c4"); strings.Contains(got, "Tuesday") {
		t.Errorf("after logout the model was told %q, want a new connect link offered", got)
	}
	privateLink(t, w, "UALICE", 1)

	p.stop(t)
	db, err := os.ReadFile(w.env["NEO_DB_PATH"])
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range prot.Issued() {
		if strings.Contains(p.output.String(), tok) || strings.Contains(string(db), tok) {
			t.Errorf("a token issued by the authorization server is in neobot's output or database file")
		}
	}
	noSecretsIn(t, p.output.String(), append(w.slack.SignInSecrets(), strings.TrimPrefix(link, link[:strings.LastIndex(link, "/")+1]))...)
}

// TestMCPOAuthPerUserDiscord: in a Discord guild channel, a person who has
// not connected their account gets the connect link in a direct message
// from Neo, never in the channel. Forwarded to another Discord user, who
// signs in with Discord as themselves, it is refused; opened by its
// person, signed in as themselves, it connects their account.
func TestMCPOAuthPerUserDiscord(t *testing.T) {
	prot := notesServer(t)
	w := newDiscordWorld(t)
	w.env["NEO_MANIFEST"] = writeJSON(t, "manifest.json", map[string]any{
		"did": "did:web:neobot.test:agents:e2e", "servers": []any{map[string]any{
			"alias": "notes", "transport": "http", "url": prot.URL(), "auth": "per_user",
			"version": "1.0.0", "tools": []string{"note"}, "side_effects": "read",
		}}})
	w.env["NEO_HEALTH_ADDR"] = freeAddr(t)
	w.env["NEO_SECRET_KEY"] = strings.Repeat("5e", 32)
	w.env["DISCORD_CLIENT_ID"], w.env["DISCORD_CLIENT_SECRET"] = "1100220033", "e2e-discord-client-secret"
	w.discord.SetOAuthClient("1100220033", "e2e-discord-client-secret")
	scriptModel(t, w.model,
		llmtest.Calls(llmtest.Call("c1", "notes__note", `{}`)),
		llmtest.Text("Open the link I sent you by DM."),
		llmtest.Calls(llmtest.Call("c2", "notes__note", `{}`)),
		llmtest.Text("The launch is on Tuesday."),
	)
	p := w.start(t, 1)

	mention := w.discord.Mention(discordtest.Msg{User: "111", Text: "when is the launch?"})
	w.answerIn(t, mention.ID, "Open the link I sent you by DM.")
	dm := w.discord.DMChannel("111")
	m, err := w.discord.WaitMessage(waitCtx(t), func(m discordtest.Message) bool {
		return m.FromBot() && m.ChannelID == dm && connectLinkRe.MatchString(m.Content)
	})
	if err != nil {
		t.Fatalf("no connect link in user 111's DMs: %v\nmessages: %+v", err, w.discord.Messages())
	}
	for _, other := range w.discord.Messages() {
		if other.ChannelID != dm && strings.Contains(other.Content, "/mcp/connect/") {
			t.Errorf("the connect link was posted outside the DM: %+v", other)
		}
	}
	owner, other := newBrowser(t), newBrowser(t)
	w.discord.SignIn(owner.Jar, "111")
	w.discord.SignIn(other.Jar, "222")
	if page := forwardedLinkRefused(t, connectLinkRe.FindString(m.Content), prot, owner, other); !strings.Contains(page, "Discord user 111") {
		t.Errorf("the connected page does not name who was connected:\n%s", page)
	}
	w.discord.Message(discordtest.Msg{User: "111", Channel: mention.ID, Text: "and now?"})
	w.answerIn(t, mention.ID, "The launch is on Tuesday.")
	if got := toolResult(mainRequests(w.model)[3], "c2"); !strings.Contains(got, "the launch is on Tuesday") {
		t.Errorf("with the account connected the model was told %q, want the note", got)
	}
	noSecretsIn(t, p.output.String(), w.discord.SignInSecrets()...)
}

// TestMCPOAuthPerUserUnconfigured: with no Discord sign-in set up, a
// Discord user gets no connect link (it could not be bound to them), and
// the log tells the operator which settings are missing.
func TestMCPOAuthPerUserUnconfigured(t *testing.T) {
	prot := notesServer(t)
	w := newDiscordWorld(t)
	w.env["NEO_MANIFEST"] = writeJSON(t, "manifest.json", map[string]any{
		"did": "did:web:neobot.test:agents:e2e", "servers": []any{map[string]any{
			"alias": "notes", "transport": "http", "url": prot.URL(), "auth": "per_user",
			"version": "1.0.0", "tools": []string{"note"}, "side_effects": "read",
		}}})
	w.env["NEO_HEALTH_ADDR"] = freeAddr(t)
	w.env["NEO_SECRET_KEY"] = strings.Repeat("5e", 32)
	scriptModel(t, w.model,
		llmtest.Calls(llmtest.Call("c1", "notes__note", `{}`)),
		llmtest.Text("I can't reach your notes yet."),
	)
	p := w.start(t, 1)
	mention := w.discord.Mention(discordtest.Msg{User: "111", Text: "when is the launch?"})
	w.answerIn(t, mention.ID, "I can't reach your notes yet.")
	for _, m := range w.discord.Messages() {
		if strings.Contains(m.Content, "/mcp/connect/") || strings.Contains(m.Content, "/authorize") {
			t.Errorf("a link was sent though nothing could check who opens it: %+v", m)
		}
	}
	if got := toolResult(mainRequests(w.model)[1], "c1"); strings.Contains(got, "/authorize") || strings.Contains(got, "/mcp/connect/") {
		t.Errorf("the model was told %q, want no link", got)
	}
	if !strings.Contains(p.output.String(), "DISCORD_CLIENT_ID and DISCORD_CLIENT_SECRET") {
		t.Errorf("the log does not name the missing settings:\n%s", p.output.String())
	}
}

// TestMCPOAuthPerUserWeb: on the web, whose conversations are their
// user's alone, the connect link arrives as a notice in the conversation.
// It leads to the chat page, which says who is signed in there: Bob,
// forwarded Alice's link, is refused; Alice connects her account.
func TestMCPOAuthPerUserWeb(t *testing.T) {
	prot := notesServer(t)
	w := newWebWorld(t)
	w.env["NEO_MANIFEST"] = writeJSON(t, "manifest.json", map[string]any{
		"did": "did:web:neobot.test:agents:e2e", "servers": []any{map[string]any{
			"alias": "notes", "transport": "http", "url": prot.URL(), "auth": "per_user",
			"version": "1.0.0", "tools": []string{"note"}, "side_effects": "read",
		}}})
	w.env["NEO_HEALTH_ADDR"] = freeAddr(t)
	w.env["NEO_SECRET_KEY"] = strings.Repeat("5e", 32)
	scriptModel(t, w.model,
		llmtest.Calls(llmtest.Call("c1", "notes__note", `{}`)),
		llmtest.Text("Open the link above, then ask again."),
		llmtest.Calls(llmtest.Call("c2", "notes__note", `{}`)),
		llmtest.Text("The launch is on Tuesday."),
	)
	p := w.start(t)
	var created struct{ ID string }
	if got := w.call(t, w.alice, "POST", "/v1/conversations", map[string]any{}, &created); got != http.StatusCreated {
		t.Fatalf("create = %d", got)
	}
	events := w.follow(t, w.alice, created.ID, "")
	w.call(t, w.alice, "POST", "/v1/conversations/"+created.ID+"/messages", map[string]string{"text": "when is the launch?"}, nil)
	notice, _ := events.next(t, "notice")
	link := connectLinkRe.FindString(text(notice))
	if link == "" {
		t.Fatalf("notice = %q, want the connect link", text(notice))
	}
	if e, _ := events.next(t, "answer"); text(e) != "Open the link above, then ask again." {
		t.Errorf("answer = %q", text(e))
	}
	// signedIn opens the link in b, lands on the chat page, and does what
	// the page does signed in with token: it hands the state over and goes
	// where neobot says.
	signedIn := func(b *http.Client, token string) (int, string) {
		t.Helper()
		status, page, at := visitPage(t, b, link)
		state := ""
		if q, err := url.ParseQuery(at.Fragment); err == nil {
			state = q.Get("connect")
		}
		if status != http.StatusOK || !strings.HasPrefix(at.String(), w.base+"/") || state == "" {
			t.Fatalf("the link led to %s (%d), want the chat page with a connect state\n%s", at, status, page)
		}
		var next struct{ URL string }
		if got := w.call(t, token, "POST", "/v1/connect", map[string]string{"state": state}, &next); got != http.StatusOK {
			t.Fatalf("POST /v1/connect = %d", got)
		}
		status, page, _ = visitPage(t, b, next.URL)
		return status, page
	}
	bob := newBrowser(t)
	status, page := signedIn(bob, w.bob)
	if status != http.StatusForbidden || !strings.Contains(page, "made for someone else") || !strings.Contains(page, "ask Neo in the chat") {
		t.Errorf("Alice's link opened by Bob answered %d:\n%s\nwant a refusal saying it was made for someone else", status, page)
	}
	if n := len(prot.Issued()); n != 0 {
		t.Fatalf("the authorization server issued %d tokens on a link opened by someone else", n)
	}
	status, page = signedIn(newBrowser(t), w.alice)
	if status != http.StatusOK || !strings.Contains(page, "alice (web chat user) is connected to notes") {
		t.Fatalf("Alice's link opened by Alice answered %d:\n%s", status, page)
	}
	w.call(t, w.alice, "POST", "/v1/conversations/"+created.ID+"/messages", map[string]string{"text": "and now?"}, nil)
	if e, _ := events.next(t, "answer"); text(e) != "The launch is on Tuesday." {
		t.Errorf("answer = %q", text(e))
	}
	if got := toolResult(mainRequests(w.model)[3], "c2"); !strings.Contains(got, "the launch is on Tuesday") {
		t.Errorf("with her account connected the model was told %q, want the note", got)
	}
	noSecretsIn(t, p.output.String(), strings.TrimPrefix(link, link[:strings.LastIndex(link, "/")+1]))
}

// TestMCPOAuthPerUserSpend: a spend tool on a per_user server, approved,
// when the person who asked has not connected their account: the call is
// not made, their own connect link reaches them privately, and the spend
// is recorded as failed with nothing done, saying why — not as an
// unknown outcome.
func TestMCPOAuthPerUserSpend(t *testing.T) {
	var transfers atomic.Int64
	prot := oauthtest.New(t, mcp.NewServer("bank", "1.0.0", mcp.ServerTool{
		Name: "transfer", Description: "Send money from the person's own account.",
		Handle: func(context.Context, map[string]any) (mcp.Result, error) {
			transfers.Add(1)
			return mcp.TextResult("sent"), nil
		},
	}).Handler())
	w, _ := newSpendWorld(t)
	w.env["NEO_MANIFEST"] = writeJSON(t, "manifest.json", map[string]any{
		"did": "did:web:neobot.test:agents:e2e", "servers": []any{map[string]any{
			"alias": "bank", "transport": "http", "url": prot.URL(), "auth": "per_user",
			"version": "1.0.0", "tools": []string{"transfer"}, "side_effects": "spend",
		}}})
	w.env["NEO_HEALTH_ADDR"] = freeAddr(t)
	w.env["NEO_SECRET_KEY"] = strings.Repeat("5e", 32)
	w.env["SLACK_CLIENT_ID"], w.env["SLACK_CLIENT_SECRET"] = "e2e.slack-client", "e2e-slack-client-secret"
	w.slack.SetOIDCClient("e2e.slack-client", "e2e-slack-client-secret")
	scriptModel(t, w.model,
		llmtest.Calls(llmtest.Call("c1", "core_execute", `{"intent":"send 5 USDC to bob"}`)),
		llmtest.Calls(llmtest.Call("p1", "bank__transfer", `{"amount":5,"recipient":"bob"}`)),
		llmtest.Text("Connect your bank account first."),
	)
	p := w.start(t, 1)
	mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "send 5 USDC to bob"})
	gate := w.waitGate(t, p, mention.TS, "bank/transfer")
	w.slack.Click("UCAROL", gate, 0)
	w.answerIn(t, "C0GENERAL", mention.TS, "Connect your bank account first.")
	link := privateLink(t, w, "UALICE", 0)
	if n := transfers.Load(); n != 0 {
		t.Fatalf("the transfer ran %d times without Alice's account", n)
	}
	calls := mainRequests(w.model)
	last := calls[len(calls)-1].Messages
	if res := last[len(last)-1]; !strings.Contains(res.Content, "own bank account, which they have not connected yet") || strings.Contains(res.Content, "/mcp/connect/") {
		t.Errorf("the model was told %q, want that she has not connected her account, without the link", res.Content)
	}
	alice := newBrowser(t)
	w.slack.SignIn(alice.Jar, "UALICE")
	if status, page, _ := visitPage(t, alice, link); status != http.StatusOK || !strings.Contains(page, "connected to bank") {
		t.Errorf("the spend tool's connect link answered %d:\n%s", status, page)
	}
	p.stop(t)
	out, _, err := run(t, w.env, "", "spends", "--format", "json")
	if err != nil {
		t.Fatalf("neobot spends: %v\n%s", err, out)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("neobot spends --format json = %s (%v), want one spend", out, err)
	}
	if r := rows[0]; r["state"] != "failed" || !strings.Contains(fmt.Sprint(r["reason"]), "not connected") {
		t.Errorf("spend = %v, want failed because the account is not connected", r)
	}
}

// TestWebPageConnect: in Chromium, the connect link Neo shows in the chat
// leads through the chat page, which tells neobot who is signed in, to
// the authorization server and back to a page naming who was connected
// to what.
func TestWebPageConnect(t *testing.T) {
	prot := notesServer(t)
	manifest := writeJSON(t, "manifest.json", map[string]any{
		"did": "did:web:neobot.test:agents:e2e", "servers": []any{map[string]any{
			"alias": "notes", "transport": "http", "url": prot.URL(), "auth": "per_user",
			"version": "1.0.0", "tools": []string{"note"}, "side_effects": "read",
		}}})
	pg := openPage(t, desktop, map[string]string{
		"NEO_MANIFEST": manifest, "NEO_HEALTH_ADDR": freeAddr(t), "NEO_SECRET_KEY": strings.Repeat("5e", 32),
	})
	pg.signIn()
	pg.send("ask for the notes", "read my notes",
		until(`[...document.querySelectorAll(".msg.notice")].some((m) => m.textContent.includes("/mcp/connect/"))`))
	notices := eval[string](pg, `[...document.querySelectorAll(".msg.notice")].map((m) => m.textContent).join(" ")`)
	link := connectLinkRe.FindString(notices)
	if link == "" {
		t.Fatalf("no connect link in the notices: %q", notices)
	}
	// The browser goes through four pages (the link, the chat page, the
	// authorization server, the callback): a navigation may cut the
	// first wait short, and a poll cut short is made again on the next
	// page.
	_, err := chromedp.Run(pg.ctx, chromedp.Navigate(link))
	for range 8 {
		if _, err = chromedp.Run(pg.ctx, until(`document.body.textContent.includes("is connected to notes")`)); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("the connect link never led to the connected page: %v\n%s", err, pg.p.output.String())
	}
	if got := eval[string](pg, `document.body.textContent`); !strings.Contains(got, "me (web chat user) is connected to notes") {
		t.Errorf("the page after connecting says %q, want who was connected to what", got)
	}
	if len(prot.Issued()) == 0 {
		t.Error("the authorization server issued no token")
	}
}

// openLink opens a login or connect link as a person who approves at
// once, and checks the callback page says the server is connected.
func openLink(t *testing.T, link string) {
	t.Helper()
	resp, err := http.Get(link)
	if err != nil {
		t.Fatalf("open the link: %v", err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "connected to notes") {
		t.Fatalf("the callback answered %d:\n%s", resp.StatusCode, page)
	}
}

// connectIn follows the authorization URL auth in browser b, signed in
// as the person whose link led there, to the connected page.
func connectIn(t *testing.T, b *http.Client, auth string) {
	t.Helper()
	if status, page, _ := visitPage(t, b, auth); status != http.StatusOK || !strings.Contains(page, "connected to notes") {
		t.Fatalf("the callback answered %d:\n%s", status, page)
	}
}

// linkScope returns the scope an authorization link asks for.
func linkScope(t *testing.T, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatalf("link %q: %v", link, err)
	}
	return u.Query().Get("scope")
}

// TestMCPOAuthStepUpOperator: a server that answers a call 403
// insufficient_scope: the model hears it needs more permission and the
// command (not that access was revoked), the server stays up, and the
// next `neobot mcp login` asks for the wider scope; after it the call
// goes through.
func TestMCPOAuthStepUpOperator(t *testing.T) {
	prot := notesServer(t)
	prot.RequireForCalls("notes:write")
	w := oauthWorld(t, prot, "oauth")
	scriptModel(t, w.model,
		llmtest.Calls(llmtest.Call("c1", "notes__note", `{}`)),
		llmtest.Text("An operator must grant more permission."),
		llmtest.Calls(llmtest.Call("c2", "notes__note", `{}`)),
		llmtest.Text("The launch is on Tuesday."),
	)
	p := w.start(t, 1)
	ops := "http://" + w.env["NEO_HEALTH_ADDR"]
	login := func() string {
		t.Helper()
		out, stderr, err := run(t, w.env, "", "mcp", "login", "notes")
		if err != nil {
			t.Fatalf("neobot mcp login notes: %v\n%s", err, stderr)
		}
		return regexp.MustCompile(`https?://\S+/authorize\?\S+`).FindString(out)
	}
	openLink(t, login())
	waitFor(t, p, ops+"/readyz", "the notes server up", func(status int, body string) bool {
		return status == http.StatusOK && strings.Contains(body, "notes up")
	})

	m := w.slack.Mention(slacktest.Msg{User: "UALICE", Channel: "CNOTES", Text: "when is the launch?"})
	w.answerIn(t, "CNOTES", m.TS, "An operator must grant more permission.")
	got := toolResult(mainRequests(w.model)[1], "c1")
	if !strings.Contains(got, "needs more permission (notes:read notes:write)") || !strings.Contains(got, "neobot mcp login notes") ||
		strings.Contains(got, "revoked") || strings.Contains(got, "not running") {
		t.Errorf("after a 403 the model was told %q, want that it needs more permission and the command", got)
	}
	waitFor(t, p, ops+"/readyz", "the notes server still up", func(status int, body string) bool {
		return status == http.StatusOK && strings.Contains(body, "notes up")
	})

	link := login()
	if got := linkScope(t, link); got != "notes:read notes:write" {
		t.Errorf("the login after a 403 asks for %q, want %q", got, "notes:read notes:write")
	}
	openLink(t, link)
	m2 := w.slack.Mention(slacktest.Msg{User: "UALICE", Channel: "CNOTES", Text: "and now?"})
	w.answerIn(t, "CNOTES", m2.TS, "The launch is on Tuesday.")
	if got := toolResult(mainRequests(w.model)[3], "c2"); !strings.Contains(got, "the launch is on Tuesday") {
		t.Errorf("after the step-up the model was told %q, want the note", got)
	}
}

// TestMCPOAuthStepUpPerUser: on a per_user server a 403
// insufficient_scope keeps the person's connection; they get a private
// link asking for the wider scope, the model hears they need more
// permission (not that they have not connected), and after the person
// opens it the call goes through.
func TestMCPOAuthStepUpPerUser(t *testing.T) {
	prot := notesServer(t)
	prot.RequireForCalls("notes:write")
	w := oauthWorld(t, prot, "per_user")
	scriptModel(t, w.model,
		llmtest.Calls(llmtest.Call("c1", "notes__note", `{}`)),
		llmtest.Text("Open the link I sent you, then ask again."),
		llmtest.Calls(llmtest.Call("c2", "notes__note", `{}`)),
		llmtest.Text("Grant the permission, then ask again."),
		llmtest.Calls(llmtest.Call("c3", "notes__note", `{}`)),
		llmtest.Text("The launch is on Tuesday."),
	)
	w.start(t, 1)

	alice := newBrowser(t)
	w.slack.SignIn(alice.Jar, "UALICE")
	dm := w.slack.DM(slacktest.Msg{User: "UALICE", Text: "when is the launch?"})
	w.answerIn(t, "D0DM", dm.TS, "Open the link I sent you")
	connectIn(t, alice, authorizationURL(t, alice, privateLink(t, w, "UALICE", 0), prot))

	dm2 := w.slack.DM(slacktest.Msg{User: "UALICE", Text: "and now?"})
	w.answerIn(t, "D0DM", dm2.TS, "Grant the permission")
	got := toolResult(mainRequests(w.model)[3], "c2")
	if !strings.Contains(got, "more permission (notes:read notes:write)") || strings.Contains(got, "not connected") || strings.Contains(got, "/authorize") {
		t.Errorf("after a 403 the model was told %q, want that she needs more permission, without the link", got)
	}
	auth := authorizationURL(t, alice, privateLink(t, w, "UALICE", 1), prot)
	if got := linkScope(t, auth); got != "notes:read notes:write" {
		t.Errorf("the link after a 403 asks for %q, want %q", got, "notes:read notes:write")
	}
	told := false
	for _, m := range w.slack.Messages() {
		told = told || m.Ephemeral && strings.Contains(m.Text, "/mcp/connect/") && strings.Contains(m.Text, "more permission")
	}
	if !told {
		t.Errorf("no private message tells Alice the server needs more permission: %+v", w.slack.Messages())
	}
	connectIn(t, alice, auth)
	dm3 := w.slack.DM(slacktest.Msg{User: "UALICE", Text: "once more?"})
	w.answerIn(t, "D0DM", dm3.TS, "The launch is on Tuesday.")
	if got := toolResult(mainRequests(w.model)[5], "c3"); !strings.Contains(got, "the launch is on Tuesday") {
		t.Errorf("after the step-up the model was told %q, want the note", got)
	}
}

// TestMCPOAuthNoLinkPerUser: when no connect link can be made (the
// server's metadata names another resource), the model hears that and
// why, not that the server is not running, and no link is sent.
func TestMCPOAuthNoLinkPerUser(t *testing.T) {
	var srv *httptest.Server
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"resource":"https://elsewhere.example/mcp","authorization_servers":["`+srv.URL+`"]}`)
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
		w.WriteHeader(http.StatusUnauthorized)
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	w := newSlackWorld(t)
	w.env["NEO_MANIFEST"] = writeJSON(t, "manifest.json", map[string]any{
		"did": "did:web:neobot.test:agents:e2e", "servers": []any{map[string]any{
			"alias": "notes", "transport": "http", "url": srv.URL + "/mcp", "auth": "per_user",
			"version": "1.0.0", "tools": []string{"note"}, "side_effects": "read",
		}}})
	w.env["NEO_HEALTH_ADDR"] = freeAddr(t)
	w.env["NEO_SECRET_KEY"] = strings.Repeat("5e", 32)
	scriptModel(t, w.model,
		llmtest.Calls(llmtest.Call("c1", "notes__note", `{}`)),
		llmtest.Text("I cannot connect to notes; an operator must fix it."),
	)
	w.start(t, 1)
	dm := w.slack.DM(slacktest.Msg{User: "UALICE", Text: "when is the launch?"})
	w.answerIn(t, "D0DM", dm.TS, "I cannot connect to notes")
	got := toolResult(mainRequests(w.model)[1], "c1")
	if !strings.Contains(got, "cannot make a link") || !strings.Contains(got, "elsewhere.example") || strings.Contains(got, "not running") {
		t.Errorf("the model was told %q, want that no link can be made and why", got)
	}
	for _, m := range w.slack.Messages() {
		if strings.Contains(m.Text, "/authorize") {
			t.Errorf("a link was sent: %+v", m)
		}
	}
}
