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

// adminSessionTTL is how long a Slack sign-in opens the admin page.
const adminSessionTTL = 8 * time.Hour

// adminRecheck is how long Slack's word that someone administers their
// workspace is taken before it is asked again.
const adminRecheck = time.Minute

// adminSigninTTL is how long a Slack sign-in may take.
const adminSigninTTL = 10 * time.Minute

const (
	adminSigninPath   = "/admin/signin/slack"
	adminCallbackPath = "/admin/signin/slack/callback"
	adminStateCookie  = "neobot_admin_state"
)

// slackPersonRe is a Slack person as Options.Admins lists them.
var slackPersonRe = regexp.MustCompile(`^slack:[A-Z0-9]+/[A-Z0-9]+$`)

// governor is who may govern, and where.
type governor struct {
	by   string // recorded as the change's author: "web:alice", "slack:T1/U1"
	team string // a Slack workspace admin's team: only its places; "" for every place
}

// may reports whether g governs place.
func (g governor) may(place string) bool {
	return g.team == "" || place == "slack:"+g.team || strings.HasPrefix(place, "slack:"+g.team+"/")
}

// listed reports whether id ("alice", "slack:T1/U1") is in Options.Admins.
func (a *Adapter) listed(id string) bool { return slices.Contains(a.opts.Admins, id) }

// notAdmin is what a refused person is told about who the admins are.
const notAdmin = "The admins are the web users and Slack people listed in NEO_WEB_ADMINS, and Slack workspace admins signed in with Slack (for their own workspace). " +
	"Ask the operator to add you to NEO_WEB_ADMINS, or sign in with Slack as an admin of your workspace."

// governor finds who r comes from and whether they may govern, answering
// a refusal itself.
func (a *Adapter) governor(w http.ResponseWriter, r *http.Request) (governor, bool) {
	refuse := func(status int, msg string) (governor, bool) {
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="neobot admin"`)
		}
		writeJSON(w, status, map[string]any{"error": msg, "slack_signin": a.opts.SlackSignIn != nil})
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
			writeJSON(w, status, map[string]any{"error": msg, "slack_signin": a.opts.SlackSignIn != nil, "ended": true})
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
		writeJSON(w, http.StatusOK, map[string]any{"by": g.by, "team": g.team, "skills": a.opts.Governor.Skills()})
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
			apiError(w, http.StatusForbidden, fmt.Sprintf("%s is not a place of your workspace (%s), so its settings are not yours to see.", place, g.team))
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
		apiError(w, http.StatusForbidden, fmt.Sprintf("%s is not a place of your workspace (%s), so its settings are not yours to change.", body.Place, g.team))
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

// adminSignin starts Sign in with Slack for the admin page: the state
// goes in a cookie of this browser, so a sign-in another browser started
// opens nothing here.
func (a *Adapter) adminSignin(w http.ResponseWriter, r *http.Request) {
	if a.opts.SlackSignIn == nil {
		signinPage(w, http.StatusNotFound, "Sign in with Slack is not set up",
			"The operator has not set SLACK_CLIENT_ID and SLACK_CLIENT_SECRET, so the admin page cannot check who you are on Slack. Sign in with your web chat token instead.")
		return
	}
	state := linkState()
	http.SetCookie(w, &http.Cookie{
		Name: adminStateCookie, Value: state, Path: "/admin/", MaxAge: int(adminSigninTTL / time.Second),
		HttpOnly: true, Secure: strings.HasPrefix(a.opts.PageURL, "https://"), SameSite: http.SameSiteLaxMode,
	})
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, a.opts.SlackSignIn.AuthURL(state, a.opts.PageURL+adminCallbackPath), http.StatusSeeOther)
}

// adminCallback is the browser back from Slack: a workspace admin or a
// listed person gets a session for the admin page; anyone else a 403
// saying why.
func (a *Adapter) adminCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	c, err := r.Cookie(adminStateCookie)
	http.SetCookie(w, &http.Cookie{Name: adminStateCookie, Value: "", Path: "/admin/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	switch {
	case a.opts.SlackSignIn == nil:
		signinPage(w, http.StatusNotFound, "Sign in with Slack is not set up", "The operator has not set SLACK_CLIENT_ID and SLACK_CLIENT_SECRET.")
		return
	case err != nil || q.Get("state") == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(q.Get("state"))) != 1:
		signinPage(w, http.StatusForbidden, "Sign in again", "This sign-in was not started in this browser, or took too long, so it opened nothing. Start again from the admin page.")
		return
	case q.Get("error") != "":
		signinPage(w, http.StatusBadRequest, "Not signed in", "The sign-in with Slack did not complete. Start again from the admin page.")
		return
	}
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
	token, err := a.openSession(ctx, s)
	if err != nil {
		a.log.Error().Err(err).Msg("web: admin: store a Slack sign-in")
		signinPage(w, http.StatusInternalServerError, "Not signed in", "No session could be opened (it could not be stored). Start again from the admin page in a moment.")
		return
	}
	a.log.Info().Str("by", id).Str("team", s.Team).Msg("web: admin: signed in with Slack")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, "/admin#"+url.Values{"session": {token}}.Encode(), http.StatusSeeOther)
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
