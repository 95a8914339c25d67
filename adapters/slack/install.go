package slack

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// DefaultAuthorizeURL is Slack's "Add to Slack" page (OAuth v2).
const DefaultAuthorizeURL = "https://slack.com/oauth/v2/authorize"

// InstallPath is where the "Add to Slack" page is served.
const InstallPath = "/slack/install"

// botScopes are the bot scopes Neo asks a workspace for, and why; the app
// manifest asks for exactly these (manifest_test.go).
var botScopes = []string{
	"app_mentions:read", // app_mention events
	"assistant:write",   // assistant.threads.setSuggestedPrompts/setTitle (setStatus takes chat:write too)
	"channels:history",  // message.channels; conversations.replies in public channels
	"channels:read",     // conversations.info: is a mentioned channel private?
	"chat:write",        // chat.postMessage/update/delete/postEphemeral, chat.*Stream
	"commands",          // the /neo slash command: how Neo is set up in a channel
	"files:read",        // url_private_download of attachments
	"files:write",       // files.getUploadURLExternal/completeUploadExternal: files tools return
	"groups:history",    // message.groups; conversations.replies in private channels
	"groups:read",       // conversations.info in private channels
	"im:history",        // message.im (the Messages tab)
	"mpim:history",      // message.mpim
	"mpim:read",         // conversations.info in group DMs
	"users:read",        // users.info: is_admin of someone stopping a turn that waits on an approval
}

// Installs keeps installations sealed; the store satisfies it. A key is
// "team/T…" for a workspace's installation, "enterprise/E…" for an
// org-wide one, and "link/T…" for the org-wide installation that serves
// workspace T….
type Installs interface {
	SlackInstall(ctx context.Context, key string) ([]byte, error)
	PutSlackInstall(ctx context.Context, key string, sealed []byte) error
	DeleteSlackInstall(ctx context.Context, key string) error
}

// installation is one workspace's (or Grid org's) installation of the
// app, as oauth.v2.access told it. It is stored sealed, whole.
type installation struct {
	Team           string    `json:"team,omitempty"` // "" for an org-wide install
	TeamName       string    `json:"team_name,omitempty"`
	Enterprise     string    `json:"enterprise,omitempty"`
	EnterpriseName string    `json:"enterprise_name,omitempty"`
	OrgWide        bool      `json:"org_wide,omitempty"`
	BotToken       string    `json:"bot_token"`
	BotUserID      string    `json:"bot_user_id"`
	AppID          string    `json:"app_id,omitempty"`
	Scope          string    `json:"scope,omitempty"`
	InstalledBy    string    `json:"installed_by,omitempty"`
	InstalledAt    time.Time `json:"installed_at"`
}

// key is where the installation is stored.
func (in installation) key() string {
	if in.OrgWide {
		return "enterprise/" + in.Enterprise
	}
	return "team/" + in.Team
}

// name is what the installer is told Neo was added to.
func (in installation) name() string {
	if in.OrgWide {
		return cmpOr(in.EnterpriseName, in.Enterprise) + " (every workspace of the organization)"
	}
	return cmpOr(in.TeamName, in.Team)
}

// sealer is what seals installations at rest (core/mcp/oauth.Sealer):
// the associated data binds a sealed value to its key.
type sealer interface {
	Seal(plain, ad []byte) []byte
	Open(sealed, ad []byte) ([]byte, error)
}

// vault keeps installations sealed in the store.
type vault struct {
	db   Installs
	seal sealer
}

// ErrNotInstalled means no installation serves a workspace.
var ErrNotInstalled = errors.New("slack: Neo is not installed in this workspace")

// get returns the installation under key, or ErrNotInstalled.
func (v vault) get(ctx context.Context, key string) (installation, error) {
	sealed, err := v.db.SlackInstall(ctx, key)
	if err != nil {
		return installation{}, err
	}
	if sealed == nil {
		return installation{}, ErrNotInstalled
	}
	plain, err := v.seal.Open(sealed, []byte(key))
	if err != nil {
		return installation{}, fmt.Errorf("slack: installation %s: %w", key, err)
	}
	var in installation
	if err := json.Unmarshal(plain, &in); err != nil {
		return installation{}, fmt.Errorf("slack: installation %s: %w", key, err)
	}
	return in, nil
}

// put stores in, sealed, under its key.
func (v vault) put(ctx context.Context, in installation) error {
	plain, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return v.db.PutSlackInstall(ctx, in.key(), v.seal.Seal(plain, []byte(in.key())))
}

// link records that the org-wide installation under key serves team, so
// a turn resumed there after a restart finds its token.
func (v vault) link(ctx context.Context, team, key string) error {
	return v.db.PutSlackInstall(ctx, "link/"+team, v.seal.Seal([]byte(key), []byte("link/"+team)))
}

// linked returns the key of the org-wide installation serving team, or "".
func (v vault) linked(ctx context.Context, team string) string {
	sealed, err := v.db.SlackInstall(ctx, "link/"+team)
	if err != nil || sealed == nil {
		return ""
	}
	key, err := v.seal.Open(sealed, []byte("link/"+team))
	if err != nil {
		return ""
	}
	return string(key)
}

// stateLife is how long an "Add to Slack" link stays good: Slack's own
// codes last ten minutes.
const stateLife = 10 * time.Minute

// stateCookie binds an install's state to the browser that started it.
const stateCookie = "neo_slack_install"

// states makes and checks the OAuth state of installs. A state is
// nonce.expiry.mac: it proves this deployment made it (any instance can
// check it), the cookie proves the browser that returns is the one that
// left, and each nonce is taken once per instance.
type states struct {
	key []byte

	mu    sync.Mutex
	taken map[string]time.Time // nonce -> expiry
}

// issue returns a fresh state and the nonce for its cookie.
func (s *states) issue(now time.Time) (state, nonce string) {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	nonce = base64.RawURLEncoding.EncodeToString(b)
	exp := strconv.FormatInt(now.Add(stateLife).Unix(), 10)
	return nonce + "." + exp + "." + s.mac(nonce, exp), nonce
}

func (s *states) mac(nonce, exp string) string {
	m := hmac.New(sha256.New, s.key)
	fmt.Fprintf(m, "slack-install\x00%s\x00%s", nonce, exp)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// take checks state against the browser's cookie and the clock, and
// spends it: the same state never passes twice.
func (s *states) take(state, cookie string, now time.Time) error {
	nonce, rest, _ := strings.Cut(state, ".")
	exp, mac, _ := strings.Cut(rest, ".")
	sec, err := strconv.ParseInt(exp, 10, 64)
	switch {
	case err != nil || !hmac.Equal([]byte(mac), []byte(s.mac(nonce, exp))):
		return errors.New("this install link was not made by this Neo")
	case now.After(time.Unix(sec, 0)):
		return errors.New("this install link has expired (links last ten minutes)")
	case cookie == "" || !hmac.Equal([]byte(cookie), []byte(nonce)):
		return errors.New("this install was started in another browser, or the browser refused the cookie that ties it to this one")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for n, e := range s.taken {
		if now.After(e) {
			delete(s.taken, n)
		}
	}
	if _, used := s.taken[nonce]; used {
		return errors.New("this install link has been used already")
	}
	s.taken[nonce] = time.Unix(sec, 0)
	return nil
}

var installPage = template.Must(template.New("install").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#1d1c1d}
a.add{display:inline-block;background:#4a154b;color:#fff;padding:.6rem 1.2rem;border-radius:.3rem;text-decoration:none;font-weight:600}</style>
</head><body><main><h1>{{.Title}}</h1>
{{range .Lines}}<p>{{.}}</p>{{end}}
{{if .Link}}<p><a class="add" href="{{.Link}}">Add to Slack</a></p>{{end}}
{{if .Again}}<p><a href="{{.Again}}">Start again</a></p>{{end}}
</main></body></html>`))

// page is what installPage shows.
type page struct {
	Title string
	Lines []string
	Link  string // the Add to Slack button's target, if any
	Again string // a link back to the install page, if any
}

func showPage(w http.ResponseWriter, status int, p page) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer") // the callback's URL holds the code
	// Nothing to run, and no framing: the button must not be clicked
	// through another site's page.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; form-action 'none'")
	w.Header().Set("X-Frame-Options", "DENY")
	w.WriteHeader(status)
	_ = installPage.Execute(w, p)
}

// serveInstall shows the "Add to Slack" button, its state bound to this
// browser with a cookie.
func (ws *Workspaces) serveInstall(w http.ResponseWriter, r *http.Request) {
	state, nonce := ws.states.issue(ws.now())
	q := url.Values{
		"client_id": {ws.opts.ClientID}, "scope": {strings.Join(botScopes, ",")},
		"redirect_uri": {ws.opts.RedirectURL}, "state": {state},
	}
	http.SetCookie(w, &http.Cookie{
		Name: stateCookie, Value: nonce, Path: ws.callbackPath, MaxAge: int(stateLife / time.Second),
		HttpOnly: true, Secure: strings.HasPrefix(ws.opts.RedirectURL, "https:"),
		// Lax: the browser sends it back on Slack's redirect, a top-level GET.
		SameSite: http.SameSiteLaxMode,
	})
	showPage(w, http.StatusOK, page{
		Title: "Add Neo to Slack",
		Lines: []string{
			"Neo answers in threads when mentioned, and asks before anything it does moves money.",
			"Slack asks you to pick a workspace and allow what Neo needs. If your workspace has admins approve apps first, " +
				"Slack offers to send them a request instead; once one approves, Slackbot tells you, and you come back here to finish.",
		},
		Link: ws.opts.AuthorizeURL + "?" + q.Encode(),
	})
}

// serveCallback finishes an install: Slack sends the browser back with a
// code (or an error) and the state.
func (ws *Workspaces) serveCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	cookie := ""
	if c, err := r.Cookie(stateCookie); err == nil {
		cookie = c.Value
	}
	http.SetCookie(w, &http.Cookie{Name: stateCookie, Path: ws.callbackPath, MaxAge: -1, HttpOnly: true,
		Secure: strings.HasPrefix(ws.opts.RedirectURL, "https:"), SameSite: http.SameSiteLaxMode})
	if err := ws.states.take(q.Get("state"), cookie, ws.now()); err != nil {
		showPage(w, http.StatusBadRequest, page{Title: "Neo was not added", Lines: []string{capitalize(err.Error()) + "."}, Again: InstallPath})
		return
	}
	switch e := q.Get("error"); {
	case e == "access_denied":
		showPage(w, http.StatusOK, page{Title: "Neo was not added", Again: InstallPath, Lines: []string{
			"The install was cancelled on Slack's page, so Neo has no access to your workspace.",
			"If your workspace has admins approve apps, your request may be waiting for them: Slackbot tells you when one decides.",
		}})
		return
	case e != "":
		showPage(w, http.StatusOK, page{Title: "Neo was not added", Again: InstallPath,
			Lines: []string{"Slack did not install Neo; it said: " + e + "."}})
		return
	case q.Get("code") == "":
		showPage(w, http.StatusBadRequest, page{Title: "Neo was not added", Again: InstallPath,
			Lines: []string{"Slack sent you back without an authorization code. Start again."}})
		return
	}
	in, err := ws.exchange(r.Context(), q.Get("code"))
	if err != nil {
		ws.log.Warn().Err(err).Msg("slack: an install failed")
		showPage(w, http.StatusBadGateway, page{Title: "Neo was not added", Again: InstallPath, Lines: []string{installFailure(err)}})
		return
	}
	ws.log.Info().Str("team", in.Team).Str("enterprise", in.Enterprise).Bool("org_wide", in.OrgWide).
		Str("installed_by", in.InstalledBy).Msg("slack: Neo was installed")
	showPage(w, http.StatusOK, page{Title: "Neo is in " + in.name(), Lines: []string{
		"Mention @Neo in a channel, or open Neo under Apps and write to it.",
		"Anything Neo does that moves money waits for a button clicked by the person who asked.",
	}})
}

// installFailure says why an install failed, for the installer.
func installFailure(err error) string {
	if se, ok := errors.AsType[slack.SlackErrorResponse](err); ok {
		return "Slack refused to finish the install; it said: " + se.Err + ". Start again; if it keeps failing, tell whoever runs Neo."
	}
	if errors.Is(err, errNotBot) {
		return "Slack answered without a bot token, so Neo cannot work in that workspace. Tell whoever runs Neo."
	}
	return "Neo could not finish the install (Slack could not be reached, or Neo could not store the workspace's token). Start again in a minute."
}

var errNotBot = errors.New("slack: oauth.v2.access gave no bot token")

// exchange trades code for the installation's bot token (oauth.v2.access)
// and stores it sealed; a reinstall replaces the old token at once.
func (ws *Workspaces) exchange(ctx context.Context, code string) (installation, error) {
	resp, err := slack.GetOAuthV2ResponseContext(ctx, ws.opts.HTTPClient, ws.opts.ClientID, ws.opts.ClientSecret,
		code, ws.opts.RedirectURL, slack.OAuthOptionAPIURL(ws.opts.APIURL))
	if err != nil {
		return installation{}, fmt.Errorf("slack: oauth.v2.access: %w", err)
	}
	if resp.TokenType != "bot" || !strings.HasPrefix(resp.AccessToken, "xoxb-") {
		return installation{}, errNotBot
	}
	in := installation{
		Team: resp.Team.ID, TeamName: resp.Team.Name, Enterprise: resp.Enterprise.ID, EnterpriseName: resp.Enterprise.Name,
		OrgWide: resp.IsEnterpriseInstall, BotToken: resp.AccessToken, BotUserID: resp.BotUserID, AppID: resp.AppID,
		Scope: resp.Scope, InstalledBy: resp.AuthedUser.ID, InstalledAt: ws.now(),
	}
	if in.OrgWide && in.Enterprise == "" || !in.OrgWide && in.Team == "" {
		return installation{}, errors.New("slack: oauth.v2.access named no workspace or organization")
	}
	if err := ws.vault.put(ctx, in); err != nil {
		return installation{}, fmt.Errorf("slack: store the installation: %w", err)
	}
	ws.forget(in.key()) // a reinstall: the next event loads the new token
	return in, nil
}

// capitalize upper-cases the first letter of an error's text for a page.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// CheckClient asks Slack (oauth.v2.access at apiURL) whether it knows the
// app's client ID and secret, for `neobot check --live`: a code that was
// never issued is refused as invalid_code only once the credentials pass.
// It returns nil then, or Slack's refusal (invalid_client_id,
// bad_client_secret).
func CheckClient(ctx context.Context, client *http.Client, clientID, clientSecret, apiURL string) error {
	_, err := slack.GetOAuthV2ResponseContext(ctx, client, clientID, clientSecret, "neobot-check-not-a-code", "", slack.OAuthOptionAPIURL(apiURL))
	if se, ok := errors.AsType[slack.SlackErrorResponse](err); ok && se.Err == "invalid_code" {
		return nil
	}
	if err == nil {
		return errors.New("slack: oauth.v2.access took a code that was never issued")
	}
	return err
}
