package main

import (
	"bytes"
	"cmp"
	"context"
	"html"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	bolt "go.etcd.io/bbolt"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// installModel remembers a codeword said in a workspace (the cheap model
// extracts it) and says whether a later turn was told it; notesReply
// answers the rest.
func installModel(srv *llmtest.Server) {
	srv.Handle(func(r llmtest.Request) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1].Content
		if r.Model == cheapModel {
			if strings.Contains(last, "codeword is kumquat") {
				return llmtest.Text(`{"facts":[{"text":"The codeword is kumquat","kind":"fact","about":"shared","entities":["kumquat"]}]}`)
			}
			return llmtest.Text(`{"facts":[]}`)
		}
		var all strings.Builder
		for _, m := range r.Messages {
			all.WriteString(m.Content)
		}
		switch {
		case strings.Contains(last, "codeword?") && strings.Contains(all.String(), "kumquat"):
			return llmtest.Text("The codeword is kumquat.")
		case strings.Contains(last, "codeword?"):
			return llmtest.Text("I know no codeword.")
		case strings.Contains(last, "codeword is"):
			return llmtest.Text("Noted.")
		}
		return notesReply(r)
	})
}

var addToSlack = regexp.MustCompile(`class="add" href="([^"]+)"`)

// installVia adds the app to a workspace through neobot's install page,
// as a browser does, and returns the page it ends on.
func installVia(t *testing.T, base string, s *slacktest.Server, in slacktest.Installer) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	fetch := func(u string) string {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d %s", u, resp.StatusCode, b.String())
		}
		return b.String()
	}
	m := addToSlack.FindStringSubmatch(fetch(base + "/slack/install"))
	if m == nil {
		t.Fatal("the install page has no Add to Slack button")
	}
	s.NextInstall(in)
	return fetch(html.UnescapeString(m[1]))
}

// TestSlackInstallWorkspaces: two workspaces add Neo through its install
// page; each is answered with its own bot token, and keeps its own tool
// folder and memory. Uninstalled from one, Neo stops answering there and
// the token leaves the store (the raw bbolt file, or PostgreSQL's table,
// read once neobot has stopped); the other's stays, sealed.
func TestSlackInstallWorkspaces(t *testing.T) {
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) { slackInstallWorkspaces(t, db.use) })
	}
}

func slackInstallWorkspaces(t *testing.T, useDB func(*testing.T, map[string]string)) {
	dir := t.TempDir()
	s := slacktest.New(t)
	model := llmtest.New(t)
	installModel(model)
	addr, health := freeAddr(t), freeAddr(t)
	const adminToken = "admin-e2e-token-0123456789abcdef0123"
	env := map[string]string{
		"NEO_MODEL": "test-main", "NEO_CHEAP_MODEL": cheapModel, "NEO_LLM_BASE_URL": model.BaseURL(),
		"NEO_DB_PATH": filepath.Join(t.TempDir(), "neobot.db"), "NEO_MANIFEST": placeManifest(t, "10m", 4),
		"NEO_HEALTH_ADDR": health, "NEO_ADMIN_TOKEN": adminToken,
		"NEO_SECRET_KEY":  strings.Repeat("ab", 32),
		"SLACK_CLIENT_ID": slacktest.ClientID, "SLACK_CLIENT_SECRET": slacktest.ClientSecret,
		"SLACK_SIGNING_SECRET": "signing-secret", "SLACK_LISTEN_ADDR": addr,
		"SLACK_REDIRECT_URL":  "http://" + addr + "/slack/oauth/callback",
		"SLACK_AUTHORIZE_URL": s.AuthorizeURL(), "SLACK_API_URL": s.APIURL(),
	}
	useDB(t, env)
	p := startIn(t, dir, env)
	base := "http://" + addr
	waitHTTP(t, base+"/slack/install", p)
	s.UseHTTP(base+"/slack/events", base+"/slack/interactive", "signing-secret")

	teams := []string{"T0ONE", "T0TWO"}
	tokens := map[string]string{}
	for _, team := range teams {
		if page := installVia(t, base, s, slacktest.Installer{Team: team, User: "UADMIN"}); !strings.Contains(page, "Neo is in Team "+team) {
			t.Fatalf("install in %s ended on %s", team, page)
		}
		in, ok := s.Installed(team)
		if !ok {
			t.Fatalf("%s has no installation after the install page", team)
		}
		tokens[team] = in.Token
	}
	w := &slackWorld{slack: s}
	say := func(team, text, want string) string {
		t.Helper()
		d := s.Mention(slacktest.Msg{Team: team, Channel: "C" + team, User: "U" + team, Text: text})
		return w.answerIn(t, "C"+team, d.TS, want).Rendered()
	}
	say("T0ONE", "write one", "Successfully wrote")
	say("T0TWO", "write two", "Successfully wrote")
	say("T0ONE", "the codeword is kumquat", "Noted.")
	waitMemoryIn(t, health, adminToken, "T0ONE", "The codeword is kumquat")
	if got := say("T0TWO", "codeword?", "codeword"); !strings.Contains(got, "I know no codeword") {
		t.Errorf("T0TWO was answered %q: it recalled another workspace's memory", got)
	}
	if got := say("T0ONE", "codeword?", "codeword"); !strings.Contains(got, "kumquat") {
		t.Errorf("T0ONE was answered %q, want its own memory recalled", got)
	}
	for _, c := range []struct{ team, want string }{{"T0ONE", "one"}, {"T0TWO", "two"}} {
		if got := say(c.team, "read", "notes say:"); !strings.Contains(got, "notes say: "+c.want) {
			t.Errorf("%s reads back %q, want its own notes (%q)", c.team, got, c.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "workspace", "slack."+c.team, "notes.md")); err != nil {
			t.Errorf("notes of %s: %v", c.team, err)
		}
	}
	for _, team := range teams {
		var used []string
		for _, c := range s.Calls("") {
			if ch := cmp.Or(c.Params.Get("channel"), c.Params.Get("channel_id")); ch == "C"+team && !slices.Contains(used, c.Token) {
				used = append(used, c.Token)
			}
		}
		if len(used) != 1 || used[0] != tokens[team] {
			t.Errorf("Slack calls about %s's channel carried tokens %q, want only its own %q", team, used, tokens[team])
		}
	}

	if a, err := s.WaitAck(waitCtx(t), s.Uninstall("T0ONE")); err != nil || a.Status != http.StatusOK {
		t.Fatalf("app_uninstalled acked %+v, %v; want 200", a, err)
	}
	gone := s.Mention(slacktest.Msg{Team: "T0ONE", Channel: "CT0ONE", User: "UT0ONE", Text: "after the uninstall"})
	if a, err := s.WaitAck(waitCtx(t), gone); err != nil || a.Status != http.StatusOK {
		t.Errorf("an event after the uninstall acked %+v, %v; want 200, so Slack does not retry it", a, err)
	}
	say("T0TWO", "read", "notes say: two")
	for _, r := range model.Requests() {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, "after the uninstall") {
				t.Errorf("a message sent after the uninstall reached the model")
			}
		}
	}
	if msgs := s.Thread("CT0ONE", gone.TS); len(msgs) != 1 {
		t.Errorf("the thread after the uninstall holds %d messages, want the person's alone", len(msgs))
	}
	p.stop(t)
	for what, secret := range map[string]string{"the client secret": slacktest.ClientSecret, "T0ONE's token": tokens["T0ONE"], "T0TWO's token": tokens["T0TWO"]} {
		if strings.Contains(p.output.String(), secret) {
			t.Errorf("neobot's log holds %s", what)
		}
	}

	keys, raw := storedInstalls(t, env)
	if !slices.Equal(keys, []string{"team/T0TWO"}) {
		t.Errorf("stored installations after T0ONE's uninstall = %q, want T0TWO's alone", keys)
	}
	for team, token := range tokens {
		if bytes.Contains(raw, []byte(token)) {
			t.Errorf("the store holds %s's bot token in clear", team)
		}
	}
}

// storedInstalls reads the Slack installations' keys straight from the
// store neobot used, and the bytes the tokens could show in: the whole
// bbolt file, or the table's sealed values.
func storedInstalls(t *testing.T, env map[string]string) (keys []string, raw []byte) {
	t.Helper()
	if url := env["NEO_DATABASE_URL"]; url != "" {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		rows, err := conn.Query(ctx, `SELECT key, sealed FROM neo_slack_installs WHERE key NOT LIKE 'link/%' ORDER BY key`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			var v []byte
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			keys, raw = append(keys, k), append(raw, v...)
		}
		return keys, raw
	}
	path := env["NEO_DB_PATH"]
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("slack_installs"))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, _ []byte) error {
			if !strings.HasPrefix(string(k), "link/") {
				keys = append(keys, string(k))
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys, raw
}
