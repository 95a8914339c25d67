// Package connect makes each person's link to connect their own account to
// a per_user MCP server, and proves who opens it: the link has the browser
// sign in with the person's own chat platform (Sign in with Slack,
// Discord's OAuth2 identify, or the web chat page), leads on to the
// authorization server only for that person, and the login's callback
// completes only back in that browser. A forwarded link, or a forwarded
// authorization URL, connects nobody. It serves the link, the sign-in's
// return and the login's callback on the ops listener (cmd/neobot mounts
// them), each page written for the person in the browser.
package connect

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/neobot/neobot/core/mcp"
)

// Path prefixes a person's link to connect their own account to a
// per_user MCP server, on the ops listener: /mcp/connect/<id>.
const Path = "/mcp/connect/"

// SigninPath is where a platform's sign-in sends the browser back (the
// redirect URL of the Slack app and the Discord application), and where
// the web chat page sends it once it knows who is signed in.
const SigninPath = "/mcp/signin"

// linkTTL is how long a connect link works: as long as the login it
// starts.
const linkTTL = 15 * time.Minute

// proofTTL is how long the web chat page's word on who opened a link
// waits for the browser to bring it back.
const proofTTL = 2 * time.Minute

// identity is who a platform's sign-in proved a browser's person to be.
type identity struct {
	workspace, user string // Slack: team and user ID; Discord and the web: user alone
	name            string // what the pages call them
}

// signIn is one platform's way of proving who opens a connect link.
type signIn interface {
	// label names the platform for people ("Slack").
	label() string
	// authorize is where the browser signs in; it comes back to redirect
	// with state.
	authorize(state, redirect string, place mcp.Place) string
	// identify turns what the sign-in came back with into who signed in.
	identify(ctx context.Context, state, code, redirect string) (identity, error)
	// is reports whether who signed in is the person at place.
	is(who identity, place mcp.Place) bool
}

// Links binds each per_user login to the person it was made for
// (an [mcp.Binder]): its link first has the browser sign in with the
// person's own chat platform, leads on to the authorization server only
// for that person, and the login's callback is accepted only back in that
// browser (a cookie set when the link was opened). A forwarded link, or
// a forwarded authorization URL, connects nobody.
type Links struct {
	base    string            // where browsers reach the ops listener; "" without one
	signins map[string]signIn // by platform
	missing map[string]string // by platform: the settings its sign-in lacks
	web     *webProofs        // nil without the web chat
	now     func() time.Time
	log     zerolog.Logger

	mu     sync.Mutex
	links  map[string]*personLink // by link ID
	states map[string]string      // MCP login state -> link ID
	starts map[string]string      // sign-in state -> link ID
	proven map[string]time.Time   // MCP login states admitted, until the login asks (Proven) or they expire
}

type personLink struct {
	mcp.PersonalLogin
	id      string
	expires time.Time
	browser string    // SHA-256 of the cookie of the browser that opened the link last
	start   string    // that browser's sign-in state
	proven  *identity // set once that browser proved to be the person
}

// Options configures [New]: where browsers reach the ops listener, and
// the sign-ins the configuration allows.
type Options struct {
	// Base is where browsers reach the ops listener (NEO_PUBLIC_URL); ""
	// without one, and then no link is made.
	Base string
	// WebPage is the web chat page (from NEO_WEB_ADDR); "" without the web
	// chat.
	WebPage string
	// SlackAPIURL (default https://slack.com/api/), SlackClientID and
	// SlackClientSecret are Sign in with Slack's; without the client, no
	// Slack user gets a link.
	SlackAPIURL, SlackClientID, SlackClientSecret string
	// DiscordAPIURL (default https://discord.com), DiscordClientID and
	// DiscordClientSecret are Discord's OAuth2; without the client, no
	// Discord user gets a link.
	DiscordAPIURL, DiscordClientID, DiscordClientSecret string
	Log                                                 zerolog.Logger
}

// New sets up the sign-ins o allows.
func New(o Options) *Links {
	client := &http.Client{Timeout: 30 * time.Second}
	p := &Links{
		base: o.Base, signins: map[string]signIn{}, missing: map[string]string{}, now: time.Now,
		log: o.Log, links: map[string]*personLink{}, states: map[string]string{}, starts: map[string]string{}, proven: map[string]time.Time{},
	}
	if o.SlackClientID != "" && o.SlackClientSecret != "" {
		p.signins["slack"] = slackSignIn{api: strings.TrimRight(cmp.Or(o.SlackAPIURL, "https://slack.com/api/"), "/") + "/", id: o.SlackClientID, secret: o.SlackClientSecret, client: client}
	} else {
		p.missing["slack"] = "Sign in with Slack is not set up, so neobot cannot check who opens a Slack user's link: the operator must set SLACK_CLIENT_ID and SLACK_CLIENT_SECRET (see docs/mcp-auth.md)"
	}
	if o.DiscordClientID != "" && o.DiscordClientSecret != "" {
		p.signins["discord"] = discordSignIn{base: strings.TrimRight(cmp.Or(o.DiscordAPIURL, "https://discord.com"), "/"), id: o.DiscordClientID, secret: o.DiscordClientSecret, client: client}
	} else {
		p.missing["discord"] = "Discord's sign-in is not set up, so neobot cannot check who opens a Discord user's link: the operator must set DISCORD_CLIENT_ID and DISCORD_CLIENT_SECRET (see docs/mcp-auth.md)"
	}
	if o.WebPage != "" {
		p.web = &webProofs{page: o.WebPage, m: map[string]webProof{}, now: p.now}
		p.signins["web"] = p.web
	} else {
		p.missing["web"] = "the web chat is not running (NEO_WEB_ADDR), so neobot cannot check who opens a web user's link"
	}
	return p
}

// WarnUnbindable tells the operator, at start, which platforms in use (on,
// by platform) cannot prove who opens a connect link while the manifest
// has per_user servers: their people will get none.
func (p *Links) WarnUnbindable(on map[string]bool, m *mcp.Manifest) {
	perUser := false
	for _, s := range m.Servers {
		perUser = perUser || s.Auth == mcp.AuthPerUser
	}
	if !perUser {
		return
	}
	for platform, used := range on {
		if why, missing := p.missing[platform]; used && missing {
			p.log.Warn().Str("platform", platform).Msg("mcp: per_user servers get no connect links here: " + why)
		}
	}
}

// Bind makes l's link, for l.Place's person alone. It refuses when that
// person's platform has no sign-in set up, saying which setting is
// missing: an unbound link would connect whoever opened it.
func (p *Links) Bind(_ context.Context, l mcp.PersonalLogin) (string, error) {
	if p.base == "" {
		return "", errors.New("no connect link is made: the ops listener that serves it is not set (NEO_HEALTH_ADDR)")
	}
	if _, ok := p.signins[l.Place.Platform]; !ok {
		why, ok := p.missing[l.Place.Platform]
		if !ok {
			why = "connect links are made for Slack, Discord and web chat users only"
		}
		p.log.Warn().Str("server", l.Alias).Str("platform", l.Place.Platform).Msg("mcp: no connect link made: " + why)
		return "", errors.New("no connect link is made: " + why)
	}
	id := linkSecret()
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, old := range p.links {
		if now.After(old.expires) {
			p.drop(old)
			delete(p.links, k)
		}
	}
	for k, until := range p.proven {
		if now.After(until) {
			delete(p.proven, k)
		}
	}
	p.links[id] = &personLink{PersonalLogin: l, id: id, expires: now.Add(linkTTL)}
	p.states[l.State] = id
	return p.base + Path + id, nil
}

// drop forgets l's indexes; p.mu is held.
func (p *Links) drop(l *personLink) {
	delete(p.states, l.State)
	delete(p.starts, l.start)
}

// linkCookie names the cookie of link id's browser.
func linkCookie(id string) string { return "neobot_link_" + id[:12] }

// sameBrowser reports whether r comes from the browser that opened link l
// last.
func sameBrowser(r *http.Request, id, browser string) bool {
	c, err := r.Cookie(linkCookie(id))
	return err == nil && browser != "" && subtle.ConstantTimeCompare([]byte(linkHash(c.Value)), []byte(browser)) == 1
}

// ServeLink is a connect link opened (GET Path+"{id}"): it marks the browser and sends it
// to sign in with the person's platform.
func (p *Links) ServeLink(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	nonce, start := linkSecret(), linkSecret()
	p.mu.Lock()
	l := p.links[id]
	if l == nil || p.now().After(l.expires) {
		p.mu.Unlock()
		writePage(w, http.StatusBadRequest, "Link expired", "This link has expired or was already used. Ask Neo in the chat for a new one.")
		return
	}
	delete(p.starts, l.start)
	l.browser, l.start, l.proven = linkHash(nonce), start, nil
	p.starts[start] = id
	s, place := p.signins[l.Place.Platform], l.Place
	p.mu.Unlock()
	http.SetCookie(w, &http.Cookie{
		Name: linkCookie(id), Value: nonce, Path: "/mcp/", MaxAge: int(linkTTL / time.Second),
		HttpOnly: true, Secure: strings.HasPrefix(p.base, "https://"), SameSite: http.SameSiteLaxMode,
	})
	noStore(w)
	http.Redirect(w, r, s.authorize(start, p.base+SigninPath, place), http.StatusSeeOther)
}

// ServeSignin is the browser back from signing in (GET SigninPath): the person it proved
// to be goes on to the authorization server; anyone else is refused.
func (p *Links) ServeSignin(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	p.mu.Lock()
	id := p.starts[state]
	delete(p.starts, state) // one sign-in per start, whatever happens next
	l := p.links[id]
	var link personLink
	if l != nil {
		link = *l
	}
	p.mu.Unlock()
	switch {
	case l == nil || p.now().After(link.expires):
		writePage(w, http.StatusBadRequest, "Link expired", "This link has expired or was already used. Ask Neo in the chat for a new one.")
		return
	case !sameBrowser(r, id, link.browser):
		writePage(w, http.StatusForbidden, "Open your link again", "This sign-in was not started in this browser, so nothing was connected. Open the link Neo sent you again, in this browser.")
		return
	case q.Get("error") != "":
		writePage(w, http.StatusBadRequest, "Not signed in", "The sign-in did not complete, so nothing was connected. Open the link Neo sent you again to retry.")
		return
	}
	s := p.signins[link.Place.Platform]
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	who, err := s.identify(ctx, state, q.Get("code"), p.base+SigninPath)
	if err != nil {
		p.log.Warn().Err(err).Str("server", link.Alias).Str("platform", link.Place.Platform).Msg("mcp: a connect link's sign-in was not confirmed")
		writePage(w, http.StatusBadGateway, "Not signed in", s.label()+" did not confirm who signed in, so nothing was connected. Open the link Neo sent you again in a moment.")
		return
	}
	if !s.is(who, link.Place) {
		p.log.Warn().Str("server", link.Alias).Str("platform", link.Place.Platform).Msg("mcp: a connect link was opened by someone other than the person it was made for; refused")
		writePage(w, http.StatusForbidden, "This link was made for someone else",
			fmt.Sprintf("This link connects an account for another person, and you signed in to %s as %s, so nothing was connected. "+
				"To connect your own account, ask Neo in the chat: it sends you a link of your own.", s.label(), who.name))
		return
	}
	p.mu.Lock()
	if l := p.links[id]; l != nil && l.browser == link.browser {
		l.proven = &who
	}
	p.mu.Unlock()
	noStore(w)
	http.Redirect(w, r, link.AuthURL, http.StatusSeeOther)
}

// admit checks an MCP login's callback before it completes. A per_user
// login's must come back to the browser that proved to be its person: it
// then returns who that was, and the link is used up. A state that is no
// person's (the operator's login) is left to the login itself.
func (p *Links) admit(r *http.Request, state string) (who *identity, person bool, refusal string) {
	if p == nil {
		return nil, false, ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	id, ok := p.states[state]
	if !ok {
		return nil, false, ""
	}
	l := p.links[id]
	if l == nil || l.proven == nil || !sameBrowser(r, id, l.browser) {
		return nil, true, "This login was not started from your link in this browser, so nothing was connected. Open the link Neo sent you, in the browser you sign in with."
	}
	p.drop(l)
	delete(p.links, id)
	p.proven[state] = p.now().Add(time.Minute)
	return l.proven, true, ""
}

// Proven reports, once, whether admit let the callback carrying state
// through: the login checks it before it stores a person's grant.
func (p *Links) Proven(state string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	until, ok := p.proven[state]
	delete(p.proven, state)
	return ok && !p.now().After(until)
}

// SignedIn is the web chat page's word that user opened the link whose
// sign-in state is state: it returns where the browser goes next.
func (p *Links) SignedIn(_ context.Context, state, user string) (string, error) {
	p.mu.Lock()
	_, ok := p.starts[state]
	p.mu.Unlock()
	if !ok || p.web == nil {
		return "", errors.New("this connect link has expired or was already used; ask Neo in the chat for a new one")
	}
	code := p.web.add(state, user)
	return p.base + SigninPath + "?" + url.Values{"state": {state}, "code": {code}}.Encode(), nil
}

// linkSecret is 32 random bytes, base64url: a link ID, a state, a cookie.
func linkSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// linkHash is the hex SHA-256 of s: what is kept of a cookie.
func linkHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
