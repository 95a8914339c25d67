package web

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// discordPeople is a DiscordSignIn whose codes name who signs in; Check
// answers from manages ("guild/user") and gone (guilds the bot left).
type discordPeople struct {
	mu      sync.Mutex
	codes   map[string]DiscordPerson
	manages map[string]bool
	gone    map[string]bool
	down    bool
	checks  int
}

func (*discordPeople) AuthURL(state, redirect string) string {
	return "https://discord.test/oauth2/authorize?state=" + state + "&redirect_uri=" + redirect
}

func (d *discordPeople) Identify(_ context.Context, code, _ string) (DiscordPerson, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p, ok := d.codes[code]
	if !ok {
		return DiscordPerson{}, errors.New("unknown code")
	}
	return p, nil
}

func (d *discordPeople) Check(_ context.Context, guild, user string) (bool, string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.checks++
	switch {
	case d.down:
		return false, "", errors.New("discord is down")
	case d.gone[guild]:
		return false, "Neo's bot is no longer in Discord server " + guild + ".", nil
	}
	return d.manages[guild+"/"+user], "", nil
}

func (d *discordPeople) set(f func(d *discordPeople)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f(d)
}

// TestAdminDiscordSessionRechecked: a Discord server manager's session
// governs their servers' places alone; once a minute has passed since
// Discord last said so, each server is asked about again: a server they
// no longer manage, or whose bot left, drops out of the session, and with
// none left it ends, saying why; while Discord cannot be reached the
// session is refused, saying so, and kept. A plain member is refused at
// sign-in, told why.
func TestAdminDiscordSessionRechecked(t *testing.T) {
	w := newAdminWorld(t)
	places := func(session string) (int, string) {
		t.Helper()
		return w.call(t, session, "POST", "/v1/admin/places", set("discord:G2/C1", 1, "reader"))
	}
	if code, body, _ := w.signinAt(t, adminDiscordSigninPath, adminDiscordCallbackPath, "member-code"); code != http.StatusForbidden || !strings.Contains(body, "no server you manage") {
		t.Errorf("a member's sign-in: %d %s; want 403 saying why", code, body)
	}
	_, _, mo := w.signinAt(t, adminDiscordSigninPath, adminDiscordCallbackPath, "mod-code")
	for _, place := range []string{"discord:G3/C1", "discord:G", "slack:T1/C1", "web", "discord:G10/C1"} {
		if code, body := w.call(t, mo, "POST", "/v1/admin/places", set(place, 1, "reader")); code != http.StatusForbidden || !strings.Contains(body, "not a place of your Discord servers (G1, G2)") {
			t.Errorf("%s: %d %s; want 403 saying why", place, code, body)
		}
	}
	if code, body := places(mo); code != http.StatusOK || !strings.Contains(body, `"by":"discord:111"`) {
		t.Fatalf("the manager's change: %d %s", code, body)
	}

	w.discord.set(func(d *discordPeople) { d.manages["G2/111"] = false })
	w.tick(adminRecheck - time.Second)
	if code, _ := w.call(t, mo, "GET", "/v1/admin/places/history?place=discord:G2/C1", nil); code != http.StatusOK {
		t.Error("a session was asked about again before a minute passed")
	}
	w.tick(time.Second)
	if code, body := w.call(t, mo, "GET", "/v1/admin/places/history?place=discord:G2/C1", nil); code != http.StatusForbidden || !strings.Contains(body, "(G1)") {
		t.Errorf("a server they no longer manage: %d %s; want 403", code, body)
	}
	if code, body := w.call(t, mo, "GET", "/v1/admin/me", nil); code != http.StatusOK || !strings.Contains(body, `"guilds":["G1"]`) {
		t.Errorf("me after losing G2: %d %s", code, body)
	}

	w.tick(adminRecheck)
	w.discord.set(func(d *discordPeople) { d.down = true })
	if code, body := w.call(t, mo, "GET", "/v1/admin/me", nil); code != http.StatusServiceUnavailable || !strings.Contains(body, "Discord could not confirm just now") {
		t.Errorf("Discord down: %d %s; want 503 saying so", code, body)
	}
	w.discord.set(func(d *discordPeople) { d.down, d.gone["G1"] = false, true })
	if code, body := w.call(t, mo, "GET", "/v1/admin/places", nil); code != http.StatusForbidden || !strings.Contains(body, "no longer in Discord server G1") || !strings.Contains(body, "This sign-in has ended") {
		t.Errorf("the bot left their last server: %d %s; want 403 saying why", code, body)
	}
	w.discord.set(func(d *discordPeople) { d.gone["G1"] = false })
	if code, body := w.call(t, mo, "GET", "/v1/admin/me", nil); code != http.StatusUnauthorized {
		t.Errorf("an ended session: %d %s; want 401", code, body)
	}

	_, _, mo = w.signinAt(t, adminDiscordSigninPath, adminDiscordCallbackPath, "mod-code")
	w.discord.set(func(d *discordPeople) { d.manages["G1/111"] = false })
	w.tick(adminRecheck)
	if code, body := w.call(t, mo, "GET", "/v1/admin/me", nil); code != http.StatusForbidden || !strings.Contains(body, "no longer own server G1 nor hold Manage Server") || !strings.Contains(body, `"ended":true`) {
		t.Errorf("no longer a manager anywhere: %d %s; want the session ended, saying why", code, body)
	}
}
