package web

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/neobot/neobot/core/governance"
)

// The admin page (/admin) shows and changes the places' settings
// (docs/governance.md) for the admins: the web users and Slack people
// listed in Options.Admins, and Slack workspace admins signed in with
// Slack, each of whom governs their own workspace's places only.

// Governor reads and changes the places' settings for the admin page;
// cmd/neobot's is the admin API's own code.
type Governor interface {
	Places(ctx context.Context) ([]governance.Version, error)
	PlaceHistory(ctx context.Context, place string) ([]governance.Version, error)
	// SetPlace stores v, the place's next version, and applies it before
	// it returns: a governance.Invalid when v does not check, and
	// governance.ErrConflict when v.Number is not the newest plus one.
	SetPlace(ctx context.Context, v governance.Version) (governance.Version, error)
	// Skills names the skills the settings file defines, for the page to
	// offer.
	Skills() []string
}

// SlackSignIn proves who opens the admin page with Sign in with Slack,
// and whether they are an admin or owner of their workspace.
type SlackSignIn interface {
	// AuthURL is where the browser signs in; Slack sends it back to
	// redirect with state and a code.
	AuthURL(state, redirect string) string
	// Identify trades the code for who signed in.
	Identify(ctx context.Context, code, redirect string) (SlackPerson, error)
	// Check asks Slack again whether team's user administers team (a
	// session's re-check).
	Check(ctx context.Context, team, user string) (SlackPerson, error)
	// Installed says why nobody governs team's places when Neo is not
	// (or no longer) installed there; "" while it is.
	Installed(ctx context.Context, team string) (string, error)
}

// SlackPerson is who signed in with Slack.
type SlackPerson struct {
	Team, User, Name string
	// WorkspaceAdmin: users.info says they are an admin or owner of Team.
	WorkspaceAdmin bool
	// Why says, when WorkspaceAdmin is false for a reason other than
	// their role (Neo is not installed in Team), what it is, written for
	// the person.
	Why string
}

// DiscordSignIn proves who opens the admin page with Sign in with
// Discord, and which Discord servers (guilds) they may manage.
type DiscordSignIn interface {
	// AuthURL is where the browser signs in; Discord sends it back to
	// redirect with state and a code.
	AuthURL(state, redirect string) string
	// Identify trades the code for who signed in and the guilds they
	// may manage where Neo's bot is.
	Identify(ctx context.Context, code, redirect string) (DiscordPerson, error)
	// Check asks Discord again whether user may manage guild (a
	// session's re-check); why says so when Neo's bot is no longer in
	// guild.
	Check(ctx context.Context, guild, user string) (manager bool, why string, err error)
}

// DiscordPerson is who signed in with Discord.
type DiscordPerson struct {
	User, Name string
	// Guilds they may manage (owner, Manage Server or Administrator)
	// where Neo's bot is.
	Guilds []string
	// Why says, when Guilds is empty, why, written for the person.
	Why string
}

// adminSessionTTL is how long a Slack sign-in opens the admin page.
const adminSessionTTL = 8 * time.Hour

// adminRecheck is how long Slack's word that someone administers their
// workspace is taken before it is asked again.
const adminRecheck = time.Minute

// adminSigninTTL is how long a Slack sign-in may take.
const adminSigninTTL = 10 * time.Minute

const (
	adminSigninPath          = "/admin/signin/slack"
	adminCallbackPath        = "/admin/signin/slack/callback"
	adminDiscordSigninPath   = "/admin/signin/discord"
	adminDiscordCallbackPath = "/admin/signin/discord/callback"
	adminStateCookie         = "neobot_admin_state"
)

// slackPersonRe is a Slack person as Options.Admins lists them.
var slackPersonRe = regexp.MustCompile(`^slack:[A-Z0-9]+/[A-Z0-9]+$`)

// governor is who may govern, and where.
type governor struct {
	by   string // recorded as the change's author: "web:alice", "slack:T1/U1", "discord:111"
	team string // a Slack workspace admin's team: only its places
	// guilds: a Discord server manager's guilds: only their places.
	// With neither team nor guilds, every place.
	guilds []string
}

// may reports whether g governs place.
func (g governor) may(place string) bool {
	switch {
	case g.team != "":
		return place == "slack:"+g.team || strings.HasPrefix(place, "slack:"+g.team+"/")
	case len(g.guilds) > 0:
		return slices.ContainsFunc(g.guilds, func(guild string) bool {
			return place == "discord:"+guild || strings.HasPrefix(place, "discord:"+guild+"/")
		})
	}
	return true
}

// where names the places g governs, for a refusal.
func (g governor) where() string {
	if len(g.guilds) > 0 {
		return "your Discord servers (" + strings.Join(g.guilds, ", ") + ")"
	}
	return "your workspace (" + g.team + ")"
}

// listed reports whether id ("alice", "slack:T1/U1") is in Options.Admins.
func (a *Adapter) listed(id string) bool { return slices.Contains(a.opts.Admins, id) }

// notAdmin is what a refused person is told about who the admins are.
const notAdmin = "The admins are the web users and Slack people listed in NEO_WEB_ADMINS, Slack workspace admins signed in with Slack (for their own workspace), and Discord server managers signed in with Discord (for their own servers). " +
	"Ask the operator to add you to NEO_WEB_ADMINS, or sign in as an admin of your workspace or a manager of your server."

// governor finds who r comes from and whether they may govern, answering
// a refusal itself.
func (a *Adapter) governor(w http.ResponseWriter, r *http.Request) (governor, bool) {
	refuse := func(status int, msg string) (governor, bool) {
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="neobot admin"`)
		}
		writeJSON(w, status, map[string]any{"error": msg, "slack_signin": a.opts.SlackSignIn != nil, "discord_signin": a.opts.DiscordSignIn != nil})
		return governor{}, false
	}
	if a.opts.Governor == nil {
		return refuse(http.StatusNotFound, "This bot keeps no place settings, so there is nothing to govern here.")
	}
	if !sameOrigin(r) {
		return refuse(http.StatusForbidden, "This request came from another site's page, so it was refused: use the admin page itself.")
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		return refuse(http.StatusUnauthorized, "Sign in first: with your web chat token, or with Slack.")
	}
	if token = strings.TrimSpace(token); strings.HasPrefix(token, sessionPrefix) {
		g, status, msg := a.slackSession(r.Context(), token)
		if status == http.StatusUnauthorized || status == http.StatusForbidden {
			// The session no longer opens anything: the page signs out.
			writeJSON(w, status, map[string]any{"error": msg, "slack_signin": a.opts.SlackSignIn != nil, "discord_signin": a.opts.DiscordSignIn != nil, "ended": true})
			return governor{}, false
		}
		if status != 0 {
			return refuse(status, msg)
		}
		return g, true
	}
	user := a.auth.user(r)
	switch {
	case user == "":
		return refuse(http.StatusUnauthorized, "This sign-in is unknown or has expired: sign in again.")
	case !a.listed(user):
		return refuse(http.StatusForbidden, fmt.Sprintf("You are signed in as %s, who is not an admin, so the places' settings are not yours to see or change. %s", user, notAdmin))
	}
	return governor{by: "web:" + user}, true
}

// sameOrigin reports whether a browser sent r from this site's own page
// (requests without the headers, from programs, pass: they carry the
// token themselves, never a cookie).
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host == r.Host
}

// adminRoutes adds the admin page and its API to mux.
func (a *Adapter) adminRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /admin", func(w http.ResponseWriter, r *http.Request) {
		pageHeaders(w)
		http.ServeFileFS(w, r, pageFS(), "admin.html")
	})
	mux.HandleFunc("GET /v1/admin/me", a.governed(func(w http.ResponseWriter, r *http.Request, g governor) {
		writeJSON(w, http.StatusOK, map[string]any{"by": g.by, "team": g.team, "guilds": g.guilds, "skills": a.opts.Governor.Skills()})
	}))
	mux.HandleFunc("GET /v1/admin/places", a.governed(func(w http.ResponseWriter, r *http.Request, g governor) {
		vs, err := a.opts.Governor.Places(r.Context())
		if err != nil {
			a.log.Error().Err(err).Msg("web: admin: read the places' settings")
			apiError(w, http.StatusInternalServerError, "The places' settings could not be read; try again in a moment.")
			return
		}
		vs = slices.DeleteFunc(vs, func(v governance.Version) bool { return !g.may(v.Place) })
		writeJSON(w, http.StatusOK, cmpNonNil(vs))
	}))
	mux.HandleFunc("GET /v1/admin/places/history", a.governed(func(w http.ResponseWriter, r *http.Request, g governor) {
		place := r.URL.Query().Get("place")
		if !g.may(place) {
			apiError(w, http.StatusForbidden, fmt.Sprintf("%s is not a place of %s, so its settings are not yours to see.", place, g.where()))
			return
		}
		vs, err := a.opts.Governor.PlaceHistory(r.Context(), place)
		if err != nil {
			a.log.Error().Err(err).Msg("web: admin: read a place's history")
			apiError(w, http.StatusInternalServerError, "The place's history could not be read; try again in a moment.")
			return
		}
		writeJSON(w, http.StatusOK, cmpNonNil(vs))
	}))
	mux.HandleFunc("POST /v1/admin/places", a.governed(a.setPlace))
	mux.HandleFunc("POST /v1/admin/signout", a.signOut)
	mux.HandleFunc("GET "+adminSigninPath, a.adminSignin)
	mux.HandleFunc("GET "+adminCallbackPath, a.adminCallback)
	mux.HandleFunc("GET "+adminDiscordSigninPath, a.adminDiscordSignin)
	mux.HandleFunc("GET "+adminDiscordCallbackPath, a.adminDiscordCallback)
}

func cmpNonNil(vs []governance.Version) []governance.Version {
	if vs == nil {
		return []governance.Version{}
	}
	return vs
}

// governed runs h for an admin.
func (a *Adapter) governed(h func(http.ResponseWriter, *http.Request, governor)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		w.Header().Set("Cache-Control", "no-store")
		if g, ok := a.governor(w, r); ok {
			h(w, r, g)
		}
	}
}

// setPlace is POST /v1/admin/places: the next version of one place's
// settings, recorded as made by the admin.
func (a *Adapter) setPlace(w http.ResponseWriter, r *http.Request, g governor) {
	var body struct {
		Place    string              `json:"place"`
		Version  int64               `json:"version"`
		Settings governance.Settings `json:"settings"`
	}
	if err := decode(r, &body); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	if !g.may(body.Place) {
		apiError(w, http.StatusForbidden, fmt.Sprintf("%s is not a place of %s, so its settings are not yours to change.", body.Place, g.where()))
		return
	}
	v, err := a.opts.Governor.SetPlace(r.Context(), governance.Version{Place: body.Place, Number: body.Version, By: g.by, Settings: body.Settings})
	var bad governance.Invalid
	switch {
	case errors.As(err, &bad):
		apiError(w, http.StatusBadRequest, bad.Error())
	case errors.Is(err, governance.ErrConflict):
		apiError(w, http.StatusConflict, "Someone changed this place's settings since you read them, so your change was not saved. Read them again (Edit, on the admin page), then make your change again.")
	case err != nil:
		a.log.Error().Err(err).Str("place", body.Place).Msg("web: admin: change a place's settings")
		apiError(w, http.StatusInternalServerError, "The change could not be saved or applied; reload the place to see whether it was, then try again.")
	default:
		a.log.Info().Str("place", v.Place).Int64("version", v.Number).Str("by", v.By).Msg("web: admin: a place's settings changed")
		writeJSON(w, http.StatusOK, v)
	}
}

// adminSignin starts Sign in with Slack for the admin page.
func (a *Adapter) adminSignin(w http.ResponseWriter, r *http.Request) {
	if a.opts.SlackSignIn == nil {
		signinPage(w, http.StatusNotFound, "Sign in with Slack is not set up",
			"The operator has not set SLACK_CLIENT_ID and SLACK_CLIENT_SECRET, so the admin page cannot check who you are on Slack. Sign in with your web chat token instead.")
		return
	}
	a.startSignin(w, r, a.opts.SlackSignIn.AuthURL, adminCallbackPath)
}

// startSignin sends the browser to a platform's sign-in: the state goes
// in a cookie of this browser, so a sign-in another browser started
// opens nothing here.
func (a *Adapter) startSignin(w http.ResponseWriter, r *http.Request, authURL func(state, redirect string) string, callback string) {
	state := linkState()
	http.SetCookie(w, &http.Cookie{
		Name: adminStateCookie, Value: state, Path: "/admin/", MaxAge: int(adminSigninTTL / time.Second),
		HttpOnly: true, Secure: strings.HasPrefix(a.opts.PageURL, "https://"), SameSite: http.SameSiteLaxMode,
	})
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, authURL(state, a.opts.PageURL+callback), http.StatusSeeOther)
}

// backFromSignin checks that the browser back from a platform's sign-in
// started it here (the state cookie), answering a page itself when not.
func backFromSignin(w http.ResponseWriter, r *http.Request, platform string) bool {
	q := r.URL.Query()
	c, err := r.Cookie(adminStateCookie)
	http.SetCookie(w, &http.Cookie{Name: adminStateCookie, Value: "", Path: "/admin/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	switch {
	case err != nil || q.Get("state") == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(q.Get("state"))) != 1:
		signinPage(w, http.StatusForbidden, "Sign in again", "This sign-in was not started in this browser, or took too long, so it opened nothing. Start again from the admin page.")
		return false
	case q.Get("error") != "":
		signinPage(w, http.StatusBadRequest, "Not signed in", "The sign-in with "+platform+" did not complete. Start again from the admin page.")
		return false
	}
	return true
}

// signedIn opens a session for s and sends the browser to the admin
// page with it.
func (a *Adapter) signedIn(ctx context.Context, w http.ResponseWriter, r *http.Request, s adminSession, platform string) {
	token, err := a.openSession(ctx, s)
	if err != nil {
		a.log.Error().Err(err).Msg("web: admin: store a sign-in")
		signinPage(w, http.StatusInternalServerError, "Not signed in", "No session could be opened (it could not be stored). Start again from the admin page in a moment.")
		return
	}
	a.log.Info().Str("by", s.By).Str("team", s.Team).Strs("guilds", s.Guilds).Msg("web: admin: signed in with " + platform)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, "/admin#"+url.Values{"session": {token}}.Encode(), http.StatusSeeOther)
}

// adminDiscordSignin starts Sign in with Discord for the admin page.
func (a *Adapter) adminDiscordSignin(w http.ResponseWriter, r *http.Request) {
	if a.opts.DiscordSignIn == nil {
		signinPage(w, http.StatusNotFound, "Sign in with Discord is not set up",
			"The operator has not set DISCORD_CLIENT_ID and DISCORD_CLIENT_SECRET (with Discord running), so the admin page cannot check who you are on Discord.")
		return
	}
	a.startSignin(w, r, a.opts.DiscordSignIn.AuthURL, adminDiscordCallbackPath)
}

// adminDiscordCallback is the browser back from Discord: a manager of a
// server Neo's bot is in gets a session for those servers' places;
// anyone else a 403 saying why.
func (a *Adapter) adminDiscordCallback(w http.ResponseWriter, r *http.Request) {
	if a.opts.DiscordSignIn == nil {
		signinPage(w, http.StatusNotFound, "Sign in with Discord is not set up", "The operator has not set DISCORD_CLIENT_ID and DISCORD_CLIENT_SECRET.")
		return
	}
	if !backFromSignin(w, r, "Discord") {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	who, err := a.opts.DiscordSignIn.Identify(ctx, r.URL.Query().Get("code"), a.opts.PageURL+adminDiscordCallbackPath)
	if err != nil {
		a.log.Warn().Err(err).Msg("web: admin: Discord did not confirm who signed in")
		signinPage(w, http.StatusBadGateway, "Not signed in", "Discord did not confirm who signed in, or which servers you manage. Start again from the admin page in a moment.")
		return
	}
	id := "discord:" + who.User
	if len(who.Guilds) == 0 {
		a.log.Info().Str("by", id).Msg("web: admin: a Discord sign-in that manages no server of Neo's was refused")
		signinPage(w, http.StatusForbidden, "You are not an admin here", fmt.Sprintf("You signed in to Discord as %s. %s %s", who.Name, who.Why, notAdmin))
		return
	}
	a.signedIn(ctx, w, r, adminSession{By: id, User: who.User, Guilds: who.Guilds}, "Discord")
}

// adminCallback is the browser back from Slack: a workspace admin or a
// listed person gets a session for the admin page; anyone else a 403
// saying why.
func (a *Adapter) adminCallback(w http.ResponseWriter, r *http.Request) {
	if a.opts.SlackSignIn == nil {
		signinPage(w, http.StatusNotFound, "Sign in with Slack is not set up", "The operator has not set SLACK_CLIENT_ID and SLACK_CLIENT_SECRET.")
		return
	}
	if !backFromSignin(w, r, "Slack") {
		return
	}
	q := r.URL.Query()
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	who, err := a.opts.SlackSignIn.Identify(ctx, q.Get("code"), a.opts.PageURL+adminCallbackPath)
	if err != nil {
		a.log.Warn().Err(err).Msg("web: admin: Slack did not confirm who signed in")
		signinPage(w, http.StatusBadGateway, "Not signed in", "Slack did not confirm who signed in. Start again from the admin page in a moment.")
		return
	}
	id := "slack:" + who.Team + "/" + who.User
	s := adminSession{By: id}
	switch {
	case a.listed(id):
	case who.WorkspaceAdmin:
		s.Team, s.User = who.Team, who.User
	case who.Why != "":
		a.log.Info().Str("by", id).Msg("web: admin: a Slack sign-in was refused: Neo cannot check the workspace's admins")
		signinPage(w, http.StatusForbidden, "You are not an admin here", fmt.Sprintf("You signed in to Slack as %s. %s", who.Name, who.Why))
		return
	default:
		a.log.Info().Str("by", id).Msg("web: admin: a Slack sign-in that is no admin was refused")
		signinPage(w, http.StatusForbidden, "You are not an admin here",
			fmt.Sprintf("You signed in to Slack as %s, who is not an admin or owner of workspace %s, so the places' settings are not yours to see or change. %s", who.Name, who.Team, notAdmin))
		return
	}
	a.signedIn(ctx, w, r, s, "Slack")
}

// linkState is a fresh random state for a sign-in.
func linkState() string {
	token, _, err := NewToken()
	if err != nil {
		return newID() + newID()
	}
	return strings.TrimPrefix(token, "neo_")
}

var signinTmpl = template.Must(template.New("").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · Neo admin</title><link rel="stylesheet" href="/style.css"></head>
<body class="admin-page"><main class="signin"><h1>{{.Title}}</h1><p role="alert">{{.Text}}</p><p><a href="/admin">Back to the admin page</a></p></main></body></html>
`))

// signinPage answers a sign-in with a page saying what happened.
func signinPage(w http.ResponseWriter, status int, title, text string) {
	pageHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = signinTmpl.Execute(w, struct{ Title, Text string }{title, text})
}
