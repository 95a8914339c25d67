package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/adapters/web"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// TestAdminPageAppliesOnEveryInstance: on two instances sharing
// PostgreSQL, an admin (NEO_WEB_ADMINS) signs in to the admin page of the
// first in Chromium, at a desktop's and then a phone's size, and changes a
// Slack channel's skill and instructions; the next turn in that channel
// on either instance is told them, and the change is in the page's audit
// list, by web:alice; a save from a stale read (the place changed
// meanwhile through the other instance) is refused, the page saying why
// beside the form. A web user who is not an admin is refused with 403
// and told why, on the page and through its API. The page passes axe-core
// signed out, refused and editing, on both screens.
func TestAdminPageAppliesOnEveryInstance(t *testing.T) {
	browser := chromium(t)
	w := newClusterWorld(t)
	w.env["NEO_CONFIG"] = writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{
		"reader": map[string]any{"instructions": "You only read.", "side_effects": map[string]string{"read": "allow"}},
	}})
	tokens := map[string]string{}
	var users []string
	for _, name := range []string{"alice", "bob"} {
		token, hash, err := web.NewToken()
		if err != nil {
			t.Fatal(err)
		}
		tokens[name] = token
		users = append(users, name+"="+hash)
	}
	w.env["NEO_WEB_USERS"], w.env["NEO_WEB_ADMINS"] = strings.Join(users, ","), "alice"
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
	var bases []string
	var procs []*process
	for n := 1; n <= 2; n++ {
		addr := freeAddr(t)
		w.env["NEO_MODEL"], w.env["NEO_WEB_ADDR"] = "test-main-"+string(rune('0'+n)), addr
		p := w.start(t, n)
		waitHTTP(t, "http://"+addr+"/v1/openapi.json", p)
		bases, procs = append(bases, "http://"+addr), append(procs, p)
	}
	place := "slack:" + slacktest.TeamID + "/C0GENERAL"

	// Through the page's API, as its script calls it: bob is refused.
	for _, base := range bases {
		for _, c := range []struct{ method, path, body string }{
			{"GET", "/v1/admin/places", ""},
			{"POST", "/v1/admin/places", `{"place":"` + place + `","version":1,"settings":{"skill":"reader"}}`},
		} {
			req, _ := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
			req.Header.Set("Authorization", "Bearer "+tokens["bob"])
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("bob %s %s%s = %d; want 403", c.method, base, c.path, resp.StatusCode)
			}
		}
	}

	t.Cleanup(func() {
		for _, p := range procs {
			for name, token := range tokens {
				if strings.Contains(p.output.String(), token) {
					t.Errorf("the log holds %s's token", name)
				}
			}
		}
	})
	for i, s := range []struct {
		screen
		instructions string
	}{{desktop, "Answer like a pirate."}, {phone, "Answer like a parrot."}} {
		t.Run(s.name, func(t *testing.T) {
			pg := &page{t: t, p: procs[0]}
			pg.openBrowser(s.screen, browser)
			pg.do("open the admin page", chromedp.Navigate(bases[0]+"/admin"), chromedp.WaitVisible(chromedp.ID("token")))
			pg.axe("signed out")
			pg.shot("signed-out")

			pg.do("sign in as bob", chromedp.SetValue(chromedp.ID("token"), tokens["bob"]), chromedp.Click(chromedp.CSS(`#token-form button`)),
				until(`document.getElementById("signin-error").textContent.includes("not an admin")`))
			if got := eval[string](pg, `document.getElementById("signin-error").textContent`); !strings.Contains(got, "signed in as bob") || !strings.Contains(got, "NEO_WEB_ADMINS") {
				t.Errorf("bob was told %q; want why, and what to do", got)
			}
			if eval[bool](pg, `!document.getElementById("app").hidden`) {
				t.Error("bob sees the places")
			}
			pg.axe("refused")
			pg.shot("refused")

			pg.do("sign in as alice", chromedp.SetValue(chromedp.ID("token"), tokens["alice"]), chromedp.Click(chromedp.CSS(`#token-form button`)),
				chromedp.WaitVisible(chromedp.ID("open-place")))
			if got := eval[string](pg, `[...document.querySelectorAll("#skills option")].map((o) => o.value).join(",")`); !strings.Contains(got, "reader") {
				t.Errorf("the page offers the skills %q; want the settings file's", got)
			}
			pg.do("open the channel", chromedp.SetValue(chromedp.ID("open-place"), place), chromedp.Click(chromedp.CSS(`#open-form button`)),
				chromedp.WaitVisible(chromedp.ID("f-skill")))
			pg.do("change its skill and instructions", chromedp.SetValue(chromedp.ID("f-skill"), "reader"),
				chromedp.SetValue(chromedp.ID("f-instructions"), s.instructions), chromedp.Click(chromedp.CSS(`#edit-form button[type=submit]`)),
				chromedp.WaitVisible(chromedp.ID("edit-saved")))
			if got := eval[string](pg, `document.getElementById("edit-saved").textContent`); !strings.Contains(got, "Saved version "+string(rune('1'+i))) {
				t.Errorf("the page said %q after saving", got)
			}
			audit := eval[string](pg, `document.getElementById("history").children[0].textContent`)
			if !strings.Contains(audit, "web:alice") || !strings.Contains(audit, `instructions:`) || !strings.Contains(audit, s.instructions) {
				t.Errorf("the newest row of the audit list = %q; want alice's change of the instructions", audit)
			}
			if !eval[bool](pg, `document.getElementById("places").textContent.includes("`+place+`")`) {
				t.Error("the places list does not show the channel")
			}
			if !eval[bool](pg, `document.documentElement.scrollWidth <= innerWidth`) {
				t.Error("the page is wider than the screen")
			}
			pg.axe("editing")
			pg.shot("editing")
			pg.do("scroll to the audit list", chromedp.Evaluate[chromedp.Void](`document.getElementById("history").scrollIntoView()`))
			pg.shot("audit")

			// The second instance hears of the change from PostgreSQL.
			waitLines(t, procs[1], i+1, "governance: stored place settings changed", place)
			for n := 1; n <= 2; n++ {
				w.slack.Via(n)
				d := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "hello"})
				w.answerIn(t, "C0GENERAL", d.TS, "Ahoy.")
			}
			if i == 1 {
				// Someone else changes the place meanwhile, through the other
				// instance: the page's next save is refused, saying why.
				req, _ := http.NewRequest("POST", bases[1]+"/v1/admin/places", strings.NewReader(
					`{"place":"`+place+`","version":3,"settings":{"skill":"reader","instructions":"Answer like a parrot."}}`))
				req.Header.Set("Authorization", "Bearer "+tokens["alice"])
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("alice's change through the other instance: %d", resp.StatusCode)
				}
				pg.do("save from a stale read", chromedp.SetValue(chromedp.ID("f-instructions"), "Answer like a cat."),
					chromedp.Click(chromedp.CSS(`#edit-form button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("edit-error")))
				if got := eval[string](pg, `document.getElementById("edit-error").textContent`); !strings.Contains(got, "Someone changed this place's settings since you read them") {
					t.Errorf("a save from a stale read said %q", got)
				}
				pg.shot("stale")
			}
			mu.Lock()
			defer mu.Unlock()
			for n := 1; n <= 2; n++ {
				model := "test-main-" + string(rune('0'+n))
				turns := systems[model]
				if len(turns) == 0 {
					t.Errorf("instance %d ran no turn", n)
					continue
				}
				last := turns[len(turns)-1]
				if !strings.Contains(last, "You only read.") || !strings.Contains(last, s.instructions) {
					t.Errorf("instance %d's turn after the change was told:\n%s\nwant the reader skill's instructions and %q", n, last, s.instructions)
				}
			}
		})
	}
}

// waitLines waits until p has written n lines holding every one of want.
func waitLines(t *testing.T, p *process, n int, want ...string) {
	t.Helper()
	count := func() int {
		c := 0
		for _, line := range strings.Split(p.output.String(), "\n") {
			all := true
			for _, w := range want {
				all = all && strings.Contains(line, w)
			}
			if all {
				c++
			}
		}
		return c
	}
	ctx := waitCtx(t)
	for count() < n {
		select {
		case <-ctx.Done():
			t.Fatalf("neobot never wrote %d lines with %q:\n%s", n, want, p.output.String())
		case <-p.done:
			t.Fatalf("neobot stopped before writing %d lines with %q:\n%s", n, want, p.output.String())
		case <-time.After(10 * time.Millisecond): // polling the process's output, not timing it
		}
	}
}

// TestAdminPageSlackSignIn: a Slack workspace admin (users.info is_admin,
// as slacktest reports it) who signs in with Slack on the admin page sees
// and changes their own workspace's places alone, recorded as
// slack:<team>/<user>, on either of two instances on PostgreSQL sharing
// NEO_SECRET_KEY; a member who signs in is refused with 403 and told why.
// No sign-in secret reaches the log.
func TestAdminPageSlackSignIn(t *testing.T) {
	w := newClusterWorld(t)
	w.env["SLACK_CLIENT_ID"], w.env["SLACK_CLIENT_SECRET"] = slacktest.ClientID, slacktest.ClientSecret
	w.env["NEO_SECRET_KEY"] = strings.Repeat("5e", 32)
	w.env["NEO_CONFIG"] = writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{
		"reader": map[string]any{"instructions": "You only read.", "side_effects": map[string]string{"read": "allow"}},
	}})
	w.slack.SetOIDCClient(slacktest.ClientID, slacktest.ClientSecret)
	w.slack.SetAdmin("UADA")
	var bases []string
	var procs []*process
	for n := 1; n <= 2; n++ {
		addr := freeAddr(t)
		w.env["NEO_WEB_ADDR"] = addr
		p := w.start(t, n)
		waitHTTP(t, "http://"+addr+"/v1/openapi.json", p)
		bases, procs = append(bases, "http://"+addr), append(procs, p)
	}
	base := bases[0]

	signin := func(user string) (*http.Response, string) {
		jar, _ := cookiejar.New(nil)
		w.slack.SignIn(jar, user)
		resp, err := (&http.Client{Jar: jar}).Get(base + "/admin/signin/slack")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	resp, body := signin("UMAX")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "not an admin or owner of workspace "+slacktest.TeamID) {
		t.Errorf("a member's sign-in ended %d:\n%s\nwant 403 saying why", resp.StatusCode, body)
	}
	resp, _ = signin("UADA")
	session, _ := url.ParseQuery(resp.Request.URL.Fragment)
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/admin" || session.Get("session") == "" {
		t.Fatalf("the admin's sign-in ended %d at %s; want the admin page with a session", resp.StatusCode, resp.Request.URL.Path)
	}
	call := func(method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, bases[1]+path, strings.NewReader(body)) // the other instance
		req.Header.Set("Authorization", "Bearer "+session.Get("session"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	own := "slack:" + slacktest.TeamID + "/C0GENERAL"
	if code, body := call("POST", "/v1/admin/places", `{"place":"`+own+`","version":1,"settings":{"skill":"reader"}}`); code != http.StatusOK || !strings.Contains(body, `"by":"slack:`+slacktest.TeamID+`/UADA"`) {
		t.Errorf("the admin's change of %s: %d %s", own, code, body)
	}
	if code, body := call("POST", "/v1/admin/places", `{"place":"slack:T0OTHER/C1","version":1,"settings":{"skill":"reader"}}`); code != http.StatusForbidden {
		t.Errorf("the admin's change of another workspace's channel: %d %s; want 403", code, body)
	}
	if code, body := call("GET", "/v1/admin/me", ""); code != http.StatusOK || !strings.Contains(body, `"team":"`+slacktest.TeamID+`"`) {
		t.Errorf("me: %d %s", code, body)
	}
	for _, secret := range append(w.slack.SignInSecrets(), session.Get("session"), slacktest.ClientSecret) {
		for _, p := range procs {
			if strings.Contains(p.output.String(), secret) {
				t.Errorf("the log holds a sign-in secret %q", secret)
			}
		}
	}
}

// installedWorld is Neo distributed ("Add to Slack", no
// SLACK_BOT_TOKEN) on instances sharing PostgreSQL, installed in
// workspaces T0AAA (admin UADA, member UMAX) and T0BBB (owner UOWEN);
// UCLEO administers T0CCC, where Neo is not installed.
type installedWorld struct {
	slack *slacktest.Server
	bases []string // each instance's web listener
	procs []*process
	t     *testing.T
}

func newInstalledWorld(t *testing.T, instances int) *installedWorld {
	t.Helper()
	w := newClusterWorld(t)
	s := w.slack
	delete(w.env, "SLACK_BOT_TOKEN")
	delete(w.env, "SLACK_APP_TOKEN")
	w.env["NEO_SECRET_KEY"] = strings.Repeat("5e", 32)
	w.env["SLACK_CLIENT_ID"], w.env["SLACK_CLIENT_SECRET"] = slacktest.ClientID, slacktest.ClientSecret
	w.env["SLACK_SIGNING_SECRET"], w.env["SLACK_AUTHORIZE_URL"] = "signing-secret", s.AuthorizeURL()
	w.env["NEO_CONFIG"] = writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{
		"reader": map[string]any{"instructions": "You only read.", "side_effects": map[string]string{"read": "allow"}},
	}})
	s.SetOIDCClient(slacktest.ClientID, slacktest.ClientSecret)
	s.SetPerson("UADA", slacktest.Person{Team: "T0AAA", Admin: true})
	s.SetPerson("UMAX", slacktest.Person{Team: "T0AAA"})
	s.SetPerson("UOWEN", slacktest.Person{Team: "T0BBB", Owner: true})
	s.SetPerson("UCLEO", slacktest.Person{Team: "T0CCC", Admin: true})
	iw := &installedWorld{slack: s, t: t}
	var slackBases []string
	for range instances {
		addr, slackAddr := freeAddr(t), freeAddr(t)
		w.env["NEO_WEB_ADDR"], w.env["SLACK_LISTEN_ADDR"] = addr, slackAddr
		w.env["SLACK_REDIRECT_URL"] = "http://" + slackAddr + "/slack/oauth/callback"
		p := start(t, w.env)
		waitHTTP(t, "http://"+addr+"/v1/openapi.json", p)
		waitHTTP(t, "http://"+slackAddr+"/slack/install", p)
		iw.bases, slackBases, iw.procs = append(iw.bases, "http://"+addr), append(slackBases, "http://"+slackAddr), append(iw.procs, p)
	}
	s.UseHTTP(slackBases[0]+"/slack/events", slackBases[0]+"/slack/interactive", "signing-secret")
	for _, team := range []string{"T0AAA", "T0BBB"} {
		if page := installVia(t, slackBases[0], s, slacktest.Installer{Team: team, User: "UINSTALL"}); !strings.Contains(page, "Neo is in Team "+team) {
			t.Fatalf("install in %s ended on %s", team, page)
		}
	}
	return iw
}

// signin signs user in with Slack on the first instance's admin page, as
// a browser does: the status and page it ends on, and the session.
func (iw *installedWorld) signin(user string) (int, string, string) {
	t := iw.t
	t.Helper()
	jar, _ := cookiejar.New(nil)
	iw.slack.SignIn(jar, user)
	resp, err := (&http.Client{Jar: jar}).Get(iw.bases[0] + "/admin/signin/slack")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	session, _ := url.ParseQuery(resp.Request.URL.Fragment)
	return resp.StatusCode, string(body), session.Get("session")
}

// call makes one request of the admin page's API at base with session.
func (iw *installedWorld) call(base, session, method, path, body string) (int, string) {
	iw.t.Helper()
	return bearerCall(iw.t, base, session, method, path, body)
}

// TestAdminPageInstalledWorkspaces: Neo distributed ("Add to Slack", no
// SLACK_BOT_TOKEN) to two workspaces, on two instances sharing
// PostgreSQL. Whether who signs in with Slack administers their
// workspace is asked with that workspace's own token: A's admin changes
// A's channel and is refused (403, saying why) B's; B's owner (is_owner,
// not is_admin) changes B's; a member of A, and an admin of a workspace
// Neo is not installed in, are refused with a sentence. Sessions are
// shared by the instances: signed out on one, a session opens nothing on
// the other; once Neo is removed from B, B's owner's session ends at its
// next request, on either instance.
func TestAdminPageInstalledWorkspaces(t *testing.T) {
	iw := newInstalledWorld(t, 2)
	s, bases, procs, signin, call := iw.slack, iw.bases, iw.procs, iw.signin, iw.call
	set := func(place string) string {
		return `{"place":"` + place + `","version":1,"settings":{"skill":"reader"}}`
	}
	for _, c := range []struct{ user, want string }{
		{"UMAX", "not an admin or owner of workspace T0AAA"},
		{"UCLEO", "Neo is not installed in Slack workspace T0CCC"},
	} {
		if code, body, session := signin(c.user); code != http.StatusForbidden || !strings.Contains(body, c.want) || session != "" {
			t.Errorf("%s's sign-in ended %d:\n%s\nwant 403 saying %q", c.user, code, body, c.want)
		}
	}
	code, body, ada := signin("UADA")
	if code != http.StatusOK || ada == "" {
		t.Fatalf("A's admin's sign-in ended %d without a session:\n%s", code, body)
	}
	if code, body := call(bases[1], ada, "POST", "/v1/admin/places", set("slack:T0AAA/C0AAA")); code != http.StatusOK || !strings.Contains(body, `"by":"slack:T0AAA/UADA"`) {
		t.Errorf("A's admin's change of A's channel: %d %s", code, body)
	}
	for _, place := range []string{"slack:T0BBB/C0BBB", "slack:T0BBB", "slack"} {
		if code, body := call(bases[1], ada, "POST", "/v1/admin/places", set(place)); code != http.StatusForbidden || !strings.Contains(body, "not a place of your workspace") {
			t.Errorf("A's admin's change of %s: %d %s; want 403 saying why", place, code, body)
		}
	}
	code, body, owen := signin("UOWEN")
	if code != http.StatusOK || owen == "" {
		t.Fatalf("B's owner's sign-in ended %d without a session:\n%s", code, body)
	}
	if code, body := call(bases[0], owen, "POST", "/v1/admin/places", set("slack:T0BBB/C0BBB")); code != http.StatusOK || !strings.Contains(body, `"by":"slack:T0BBB/UOWEN"`) {
		t.Errorf("B's owner's change of B's channel: %d %s", code, body)
	}
	if code, body := call(bases[0], owen, "GET", "/v1/admin/places", ""); code != http.StatusOK || strings.Contains(body, "T0AAA") || !strings.Contains(body, "T0BBB") {
		t.Errorf("B's owner lists %d %s; want B's places alone", code, body)
	}
	for _, c := range s.Calls("users.info") {
		in, _ := s.Installed(map[string]string{"UADA": "T0AAA", "UMAX": "T0AAA", "UOWEN": "T0BBB"}[c.Params.Get("user")])
		if c.Token != in.Token {
			t.Errorf("users.info about %s carried another token than its workspace's", c.Params.Get("user"))
		}
	}

	// Signed out through one instance, the session opens nothing on the
	// other either.
	if code, body := call(bases[1], ada, "POST", "/v1/admin/signout", ""); code != http.StatusOK {
		t.Errorf("A's admin's sign-out: %d %s", code, body)
	}
	if code, body := call(bases[0], ada, "GET", "/v1/admin/places", ""); code != http.StatusUnauthorized || !strings.Contains(body, "This sign-in has ended") {
		t.Errorf("a signed-out session on the other instance: %d %s; want 401 saying it ended", code, body)
	}
	// Neo removed from B (the event reaches instance 1): B's owner's
	// session ends on instance 2 at its next request, saying why.
	if a, err := s.WaitAck(waitCtx(t), s.Uninstall("T0BBB")); err != nil || a.Status != http.StatusOK {
		t.Fatalf("app_uninstalled acked %+v, %v", a, err)
	}
	if code, body := call(bases[1], owen, "GET", "/v1/admin/places", ""); code != http.StatusForbidden || !strings.Contains(body, "Neo is not installed in Slack workspace T0BBB") || !strings.Contains(body, "This sign-in has ended") {
		t.Errorf("B's owner after B's uninstall: %d %s; want 403 saying why", code, body)
	}
	if code, body := call(bases[0], owen, "GET", "/v1/admin/me", ""); code != http.StatusUnauthorized {
		t.Errorf("B's owner's ended session: %d %s; want 401", code, body)
	}
	if code, body, _ := signin("UOWEN"); code != http.StatusForbidden || !strings.Contains(body, "Neo is not installed in Slack workspace T0BBB") {
		t.Errorf("B's owner signing in again after the uninstall: %d %s; want 403 saying why", code, body)
	}
	if code, _, again := signin("UADA"); code != http.StatusOK || again == "" {
		t.Errorf("A's admin could not sign in again: %d", code)
	} else if code, body := call(bases[1], again, "POST", "/v1/admin/places", `{"place":"slack:T0AAA/C0AAA","version":2,"settings":{"skill":""}}`); code != http.StatusOK {
		t.Errorf("A's admin's change after signing in again: %d %s", code, body)
	}
	for _, p := range procs {
		for _, secret := range append(s.SignInSecrets(), ada, owen, slacktest.ClientSecret) {
			if strings.Contains(p.output.String(), secret) {
				t.Errorf("the log holds a secret %q", secret)
			}
		}
	}
}

// TestAdminPageSignOut: on the admin page in Chromium, a Slack workspace
// admin's session (as Sign in with Slack brings it) shows who they are;
// Sign out ends it on the server. Signed in again, once Neo is removed
// from the workspace the page's next request shows the sign-in, saying
// why. axe-core finds nothing serious on the page saying so.
func TestAdminPageSignOut(t *testing.T) {
	browser := chromium(t)
	iw := newInstalledWorld(t, 1)
	base := iw.bases[0]
	_, _, session := iw.signin("UADA")
	pg := &page{t: t, p: iw.procs[0]}
	pg.openBrowser(desktop, browser)
	pg.do("open the page with the session", chromedp.Navigate(base+"/admin#session="+url.QueryEscape(session)), chromedp.WaitVisible(chromedp.ID("open-place")))
	if got := eval[string](pg, `document.getElementById("who").textContent + document.getElementById("scope").textContent`); !strings.Contains(got, "slack:T0AAA/UADA") || !strings.Contains(got, "T0AAA") {
		t.Errorf("the page says %q; want A's admin, A's places only", got)
	}
	if eval[bool](pg, `location.hash !== ""`) {
		t.Error("the session stayed in the address")
	}
	pg.do("sign out", chromedp.Click(chromedp.ID("signout")), chromedp.WaitVisible(chromedp.ID("token-form")))
	if code, body := iw.call(base, session, "GET", "/v1/admin/me", ""); code != http.StatusUnauthorized {
		t.Errorf("the session after Sign out on the page: %d %s; want 401", code, body)
	}
	_, _, session = iw.signin("UADA")
	// From another page, as the sign-in's redirect comes: a change of the
	// fragment alone would not load the page again.
	pg.do("open the page signed in again", chromedp.Navigate("about:blank"), chromedp.Navigate(base+"/admin#session="+url.QueryEscape(session)),
		chromedp.WaitVisible(chromedp.ID("open-place")))
	if a, err := iw.slack.WaitAck(waitCtx(t), iw.slack.Uninstall("T0AAA")); err != nil || a.Status != http.StatusOK {
		t.Fatalf("app_uninstalled acked %+v, %v", a, err)
	}
	pg.do("open a place after the uninstall", chromedp.SetValue(chromedp.ID("open-place"), "slack:T0AAA/C0AAA"), chromedp.Click(chromedp.CSS(`#open-form button`)),
		chromedp.WaitVisible(chromedp.ID("token-form")))
	if got := eval[string](pg, `document.getElementById("signin-error").textContent`); !strings.Contains(got, "Neo is not installed in Slack workspace T0AAA") || !strings.Contains(got, "This sign-in has ended") {
		t.Errorf("after the uninstall the page says %q; want why the sign-in ended", got)
	}
	if eval[bool](pg, `sessionStorage.getItem("neo-admin") !== null`) {
		t.Error("the tab kept the ended session")
	}
	pg.axe("ended")
	pg.shot("ended")
}
