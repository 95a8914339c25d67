package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/store/postgres/pgtest"
)

// TestAdminPageDiscordSignIn: a Discord server's manager (a role with
// Manage Server) signs in to the admin page with Discord, changes their
// server's #general instructions, and the next turn there is told them.
// The same person is refused (403, saying why) another server's places
// (where they hold no such permission) and Slack and web places; a plain
// member, and a manager of a server Neo's bot is not in, are refused at
// sign-in with a sentence. No sign-in secret reaches the log.
func TestAdminPageDiscordSignIn(t *testing.T) {
	w := newDiscordWorld(t)
	addr := freeAddr(t)
	base := "http://" + addr
	const clientID, clientSecret = "1100220033", "e2e-discord-client-secret"
	w.env["NEO_WEB_ADDR"] = addr
	w.env["DISCORD_CLIENT_ID"], w.env["DISCORD_CLIENT_SECRET"] = clientID, clientSecret
	w.env["NEO_CONFIG"] = writeJSON(t, "settings.json", map[string]any{"skills": map[string]any{
		"reader": map[string]any{"instructions": "You only read.", "side_effects": map[string]string{"read": "allow"}},
	}})
	d := w.discord
	d.SetOAuthClient(clientID, clientSecret)
	const guild, other, botless = discordtest.GuildID, "555000000000000001", "555000000000000002"
	const mod, member, owner = "111", "222", "444"
	d.SetGuild(discordtest.Guild{ID: guild, OwnerID: owner,
		Roles:   map[string]int64{guild: 0, "700": discordtest.PermManageGuild},
		Members: map[string][]string{mod: {"700"}, member: nil}})
	d.SetGuild(discordtest.Guild{ID: other, OwnerID: owner, Roles: map[string]int64{other: 0}, Members: map[string][]string{mod: nil}})
	d.SetUserGuilds(mod, discordtest.UserGuild{ID: guild, Permissions: discordtest.PermManageGuild}, discordtest.UserGuild{ID: other})
	d.SetUserGuilds(member, discordtest.UserGuild{ID: guild})
	d.SetUserGuilds("666", discordtest.UserGuild{ID: botless, Owner: true})

	systems := recordSystemBlocks(w.model)
	p := w.start(t, 1)
	waitHTTP(t, base+"/v1/openapi.json", p)

	signin := func(user string) (int, string, string) {
		t.Helper()
		jar, _ := cookiejar.New(nil)
		d.SignIn(jar, user)
		resp, err := (&http.Client{Jar: jar}).Get(base + "/admin/signin/discord")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		session, _ := url.ParseQuery(resp.Request.URL.Fragment)
		return resp.StatusCode, string(body), session.Get("session")
	}
	call := func(session, method, path, body string) (int, string) {
		t.Helper()
		return bearerCall(t, base, session, method, path, body)
	}

	if code, body, _ := signin(member); code != http.StatusForbidden || !strings.Contains(body, "no server you own or may manage") {
		t.Errorf("a plain member's sign-in ended %d:\n%s\nwant 403 saying why", code, body)
	}
	if code, body, _ := signin("666"); code != http.StatusForbidden || !strings.Contains(body, "bot is not in the server(s) you manage: "+botless) {
		t.Errorf("the owner of a server without Neo's bot: sign-in ended %d:\n%s\nwant 403 saying why", code, body)
	}
	code, body, session := signin(mod)
	if code != http.StatusOK || session == "" {
		t.Fatalf("the manager's sign-in ended %d without a session:\n%s", code, body)
	}
	if code, body := call(session, "GET", "/v1/admin/me", ""); code != http.StatusOK || !strings.Contains(body, `"guilds":["`+guild+`"]`) {
		t.Errorf("me: %d %s; want their one server", code, body)
	}
	own := "discord:" + guild + "/" + discordtest.ChannelID
	if code, body := call(session, "POST", "/v1/admin/places", `{"place":"`+own+`","version":1,"settings":{"instructions":"Answer like a parrot."}}`); code != http.StatusOK || !strings.Contains(body, `"by":"discord:`+mod+`"`) {
		t.Errorf("the manager's change of %s: %d %s", own, code, body)
	}
	for _, place := range []string{"discord:" + other + "/1", "discord:" + other, "slack:T0AAA/C1", "web", "discord:" + guild + "0/1"} {
		code, body := call(session, "POST", "/v1/admin/places", `{"place":"`+place+`","version":1,"settings":{"skill":"reader"}}`)
		if code != http.StatusForbidden || !strings.Contains(body, "is not a place of your Discord servers ("+guild+")") {
			t.Errorf("the manager's change of %s: %d %s; want 403 saying why", place, code, body)
		}
	}
	if code, body := call(session, "GET", "/v1/admin/places", ""); code != http.StatusOK || strings.Contains(body, "slack:") || !strings.Contains(body, own) {
		t.Errorf("the manager's places: %d %s; want theirs only", code, body)
	}

	mention := d.Mention(discordtest.Msg{User: member, Text: "who are you?"})
	w.answerIn(t, mention.ID, "Ahoy.")
	last := systems.last()
	if !strings.Contains(last, "Answer like a parrot.") {
		t.Errorf("the next turn in %s was not told its new instructions:\n%s", own, last)
	}

	// In Chromium, at both sizes: the page offers Sign in with Discord,
	// and the manager signing in through it sees their server's places.
	browser := chromium(t)
	jar, _ := cookiejar.New(nil)
	d.SignIn(jar, mod)
	fake, _ := url.Parse(d.URL())
	discordCookie := jar.Cookies(fake)[0]
	for _, sc := range []screen{desktop, phone} {
		t.Run(sc.name, func(t *testing.T) {
			pg := &page{t: t, p: p}
			pg.openBrowser(sc, browser)
			pg.do("sign in to the fake Discord", chromedp.Navigate(d.URL()+"/oauth2/authorize"),
				chromedp.Evaluate[chromedp.Void](`document.cookie = "`+discordCookie.Name+`=`+discordCookie.Value+`; path=/"`))
			pg.do("open the admin page", chromedp.Navigate(base+"/admin"), chromedp.WaitVisible(chromedp.ID("discord-signin")))
			pg.axe("signed out, Discord offered")
			pg.shot("discord-signed-out")
			pg.do("sign in with Discord", chromedp.Click(chromedp.CSS(`#discord-signin a`)))
			pg.do("see the server's places", chromedp.WaitVisible(chromedp.ID("open-place")),
				until(`document.getElementById("places").textContent.includes("`+own+`")`))
			if got := eval[string](pg, `document.getElementById("scope").textContent`); !strings.Contains(got, "manager of Discord server "+guild) {
				t.Errorf("the page says the manager governs %q", got)
			}
			pg.axe("signed in with Discord")
			pg.shot("discord-signed-in")
		})
	}

	if code, body := call(session, "POST", "/v1/admin/signout", ""); code != http.StatusOK || !strings.Contains(body, `"ended":true`) {
		t.Errorf("sign out: %d %s", code, body)
	}
	if code, _ := call(session, "GET", "/v1/admin/me", ""); code != http.StatusUnauthorized {
		t.Errorf("a signed-out session: %d; want 401", code)
	}
	for _, secret := range append(d.SignInSecrets(), session, clientSecret) {
		if strings.Contains(p.output.String(), secret) {
			t.Errorf("the log holds a sign-in secret %q", secret)
		}
	}
}

// TestAdminPageDiscordAcrossInstances: on two instances sharing
// PostgreSQL (one holds the Discord gateway session), a manager signs in
// with Discord on the second and changes their channel's instructions
// through the first with that session; the next turn there is told them.
// Signed out on the first, the session opens nothing on the second.
func TestAdminPageDiscordAcrossInstances(t *testing.T) {
	const clientID, clientSecret = "1100220033", "e2e-discord-client-secret"
	const guild, mod = discordtest.GuildID, "111"
	w := newDiscordWorld(t)
	d := w.discord
	d.SetOAuthClient(clientID, clientSecret)
	d.SetGuild(discordtest.Guild{ID: guild, OwnerID: "444",
		Roles: map[string]int64{guild: 0, "700": discordtest.PermAdministrator}, Members: map[string][]string{mod: {"700"}}})
	d.SetUserGuilds(mod, discordtest.UserGuild{ID: guild, Permissions: discordtest.PermAdministrator})
	systems := recordSystemBlocks(w.model)
	delete(w.env, "NEO_DB_PATH")
	w.env["NEO_DATABASE_URL"], w.env["NEO_CONFIG"] = pgtest.Database(t), writeJSON(t, "settings.json", map[string]any{})
	w.env["DISCORD_CLIENT_ID"], w.env["DISCORD_CLIENT_SECRET"] = clientID, clientSecret
	var bases []string
	for n := range 2 {
		addr := freeAddr(t)
		w.env["NEO_WEB_ADDR"] = addr
		var p *process
		if n == 0 {
			p = w.start(t, 1) // holds the gateway session
		} else {
			p = start(t, w.env)
		}
		waitHTTP(t, "http://"+addr+"/v1/openapi.json", p)
		bases = append(bases, "http://"+addr)
	}
	jar, _ := cookiejar.New(nil)
	d.SignIn(jar, mod)
	resp, err := (&http.Client{Jar: jar}).Get(bases[1] + "/admin/signin/discord")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	q, _ := url.ParseQuery(resp.Request.URL.Fragment)
	session := q.Get("session")
	if session == "" {
		t.Fatalf("the manager's sign-in on the second instance ended %d without a session", resp.StatusCode)
	}
	call := func(base, method, path, body string) (int, string) {
		t.Helper()
		return bearerCall(t, base, session, method, path, body)
	}
	own := "discord:" + guild + "/" + discordtest.ChannelID
	if code, body := call(bases[0], "POST", "/v1/admin/places", `{"place":"`+own+`","version":1,"settings":{"instructions":"Answer like a parrot."}}`); code != http.StatusOK {
		t.Fatalf("the change through the first instance: %d %s", code, body)
	}
	mention := d.Mention(discordtest.Msg{User: "222", Text: "who are you?"})
	w.answerIn(t, mention.ID, "Ahoy.")
	last := systems.last()
	if !strings.Contains(last, "Answer like a parrot.") {
		t.Errorf("the next turn on the first instance was not told the new instructions:\n%s", last)
	}
	if code, body := call(bases[0], "POST", "/v1/admin/signout", ""); code != http.StatusOK || !strings.Contains(body, `"ended":true`) {
		t.Errorf("sign out on the first instance: %d %s", code, body)
	}
	if code, _ := call(bases[1], "GET", "/v1/admin/me", ""); code != http.StatusUnauthorized {
		t.Errorf("a session signed out on the first instance, on the second: %d; want 401", code)
	}
}
