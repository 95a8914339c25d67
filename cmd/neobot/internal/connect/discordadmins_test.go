package connect

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/discord/discordtest"
)

// TestDiscordAdminsCheck: with the bot's token, a person may manage a
// guild when they own it or their roles (with @everyone's) hold Manage
// Server or Administrator; not otherwise, not when they are no member,
// and not (saying why) where the bot is not.
func TestDiscordAdminsCheck(t *testing.T) {
	d := discordtest.New(t)
	d.RequireToken("bot-token")
	const g = "100"
	d.SetGuild(discordtest.Guild{ID: g, OwnerID: "1",
		Roles:   map[string]int64{g: 0x400, "10": discordtest.PermManageGuild, "20": discordtest.PermAdministrator, "30": 0x10},
		Members: map[string][]string{"1": nil, "2": {"10"}, "3": {"20", "30"}, "4": {"30"}}})
	a := NewDiscordAdmins(d.URL(), "id", "secret", "bot-token", http.DefaultClient)
	for _, c := range []struct {
		guild, user string
		want        bool
		why         string
	}{
		{g, "1", true, ""},  // owner
		{g, "2", true, ""},  // Manage Server
		{g, "3", true, ""},  // Administrator
		{g, "4", false, ""}, // Manage Channels only
		{g, "5", false, ""}, // no member
		{g, "../x", false, ""},
		{"200", "2", false, "not (or no longer) in Discord server 200"},
	} {
		ok, why, err := a.Check(context.Background(), c.guild, c.user)
		if err != nil || ok != c.want || !strings.Contains(why, c.why) || (c.why == "") != (why == "") {
			t.Errorf("Check(%s, %s) = %v %q %v; want %v %q", c.guild, c.user, ok, why, err, c.want, c.why)
		}
	}
	d.SetMemberRoles(g, "2", "30")
	if ok, _, _ := a.Check(context.Background(), g, "2"); ok {
		t.Error("a person who lost Manage Server still manages the guild")
	}
	d.RemoveGuild(g)
	if ok, why, _ := a.Check(context.Background(), g, "1"); ok || why == "" {
		t.Errorf("the owner of a guild the bot left: %v %q; want refused, saying why", ok, why)
	}
}

// TestDiscordAdminsIdentify: the sign-in asks for identify and guilds,
// and gives the guilds the person's own list and the bot agree they
// manage.
func TestDiscordAdminsIdentify(t *testing.T) {
	d := discordtest.New(t)
	d.SetOAuthClient("id", "secret")
	d.SetGuild(discordtest.Guild{ID: "100", OwnerID: "9", Roles: map[string]int64{"100": 0, "10": discordtest.PermManageGuild}, Members: map[string][]string{"1": {"10"}}})
	d.SetGuild(discordtest.Guild{ID: "300", OwnerID: "9", Roles: map[string]int64{"300": 0}, Members: map[string][]string{"1": nil}})
	d.SetUserGuilds("1",
		discordtest.UserGuild{ID: "100", Permissions: discordtest.PermManageGuild},
		discordtest.UserGuild{ID: "200", Owner: true},                                // the bot is not there
		discordtest.UserGuild{ID: "300", Permissions: discordtest.PermAdministrator}, // the bot disagrees
		discordtest.UserGuild{ID: "400"})
	a := NewDiscordAdmins(d.URL(), "id", "secret", "bot-token", http.DefaultClient)
	const redirect = "http://neo.test/admin/signin/discord/callback"
	auth, _ := url.Parse(a.AuthURL("st", redirect))
	if got := auth.Query().Get("scope"); got != "identify guilds" {
		t.Errorf("scope = %q", got)
	}
	jar, _ := cookiejar.New(nil)
	d.SignIn(jar, "1")
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(auth.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, _ := url.Parse(resp.Header.Get("Location"))
	p, err := a.Identify(context.Background(), back.Query().Get("code"), redirect)
	if err != nil || p.User != "1" || !slices.Equal(p.Guilds, []string{"100"}) || p.Why != "" {
		t.Errorf("Identify = %+v, %v; want guild 100 alone", p, err)
	}
}
