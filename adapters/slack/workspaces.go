package slack

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/slack-go/slack/slackevents"

	"github.com/neobot/neobot/adapters/internal/recent"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/mcp/oauth"
)

// Workspaces is Neo distributed to many workspaces: anyone may add it to
// theirs from the "Add to Slack" page ([InstallPath]), and each
// installation's bot token is kept sealed in the store. Events arrive
// over the HTTP Events API, signed, and each is handled by an [Adapter]
// for the installation it names (team_id, or enterprise_id for an
// org-wide install), which answers with that installation's token.
// app_uninstalled and tokens_revoked delete the token, and Neo stops
// answering there. Threads keep their workspace (team) as today, so
// memory, limits, budgets and tool folders stay per workspace.
type Workspaces struct {
	opts         Options
	log          zerolog.Logger
	vault        vault
	states       *states
	callbackPath string
	now          func() time.Time
	refusals     logEvery
	strays       logEvery // events of workspaces without an installation
	up           atomic.Bool

	mu      sync.Mutex
	live    map[string]*workspace // installation key -> its running adapter
	teams   map[string]string     // workspace -> key of the org-wide installation serving it
	stopped bool
	wg      sync.WaitGroup // each installation's adapter
}

// workspace is one installation's adapter, running.
type workspace struct {
	a      *Adapter
	cancel context.CancelFunc
}

// NewWorkspaces validates opts for a distributed app (ClientID,
// ClientSecret, RedirectURL, SigningSecret, Installs, SecretKey, Hub; no
// BotToken) and returns Workspaces; nothing is contacted before Run.
func NewWorkspaces(opts Options) (*Workspaces, error) {
	redirect, err := url.Parse(opts.RedirectURL)
	switch {
	case opts.ClientID == "" || opts.ClientSecret == "":
		return nil, errors.New("slack: SLACK_CLIENT_ID and SLACK_CLIENT_SECRET (Basic Information > App Credentials) must both be set to distribute Neo")
	case err != nil || redirect.Scheme != "https" && redirect.Scheme != "http" || redirect.Host == "" ||
		slices.Contains([]string{"", "/", InstallPath, "/slack/events", "/slack/interactive"}, redirect.Path):
		return nil, errors.New("slack: SLACK_REDIRECT_URL must be the public address of Neo's install callback, such as https://neo.example.com/slack/oauth/callback (the same under OAuth & Permissions > Redirect URLs)")
	case opts.SigningSecret == "":
		return nil, errors.New("slack: distributing Neo needs SLACK_SIGNING_SECRET (Basic Information > App Credentials): events come over HTTP")
	case len(opts.SecretKey) != oauth.KeySize:
		return nil, errors.New("slack: distributing Neo needs NEO_SECRET_KEY, which seals each workspace's bot token in the store")
	case opts.Installs == nil:
		return nil, errors.New("slack: Options.Installs is required to distribute Neo")
	case opts.Hub == nil:
		return nil, errors.New("slack: Options.Hub is required")
	case opts.BotToken != "":
		return nil, errors.New("slack: SLACK_BOT_TOKEN is for one workspace; a distributed Neo gets each workspace's token when it is installed (unset one or the other)")
	}
	seal, err := oauth.NewSealer(opts.SecretKey)
	if err != nil {
		return nil, fmt.Errorf("slack: %w", err)
	}
	opts.Mode = ModeHTTP
	opts.APIURL = cmp.Or(opts.APIURL, DefaultAPIURL)
	if !strings.HasSuffix(opts.APIURL, "/") {
		opts.APIURL += "/"
	}
	opts.AuthorizeURL = cmp.Or(opts.AuthorizeURL, DefaultAuthorizeURL)
	opts.ListenAddr = cmp.Or(opts.ListenAddr, ":3000")
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	// The state's key is derived, so a state never doubles as a sealed
	// value or the other way round.
	m := hmac.New(sha256.New, opts.SecretKey)
	m.Write([]byte("neobot slack install state"))
	ws := &Workspaces{
		opts: opts, log: opts.Logger, vault: vault{db: opts.Installs, seal: seal},
		states:       &states{key: m.Sum(nil), taken: map[string]time.Time{}},
		callbackPath: redirect.Path, now: time.Now,
		live: map[string]*workspace{}, teams: map[string]string{},
	}
	ws.refusals.interval = 10 * time.Second
	ws.strays.interval = time.Minute
	return ws, nil
}

// Run serves the install page, its callback, events and interactions on
// ListenAddr until ctx ends, then stops every installation's adapter and
// waits for the messages they accepted to reach the hub.
func (ws *Workspaces) Run(ctx context.Context) error {
	err := listen(ctx, ws.opts.ListenAddr, ws.HTTPHandler(), &ws.up, ws.log)
	ws.mu.Lock()
	ws.stopped = true
	for _, w := range ws.live {
		w.cancel()
	}
	ws.mu.Unlock()
	ws.wg.Wait()
	return err
}

// Connected reports whether Slack can reach Neo: the listener is up.
func (ws *Workspaces) Connected() bool { return ws.up.Load() }

// HTTPHandler serves GET [InstallPath] (the "Add to Slack" page), GET
// the callback (SLACK_REDIRECT_URL's path), and signed events and
// interactions POSTed to any other path (/slack/events,
// /slack/interactive).
func (ws *Workspaces) HTTPHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+InstallPath, ws.serveInstall)
	mux.HandleFunc("GET "+ws.callbackPath, ws.serveCallback)
	mux.HandleFunc("/", ws.serveSlack)
	return mux
}

// route names what a request from Slack is for: the workspace it happened
// in, and the installation it came to.
type route struct {
	team, enterprise string
	orgWide          bool
}

// key is the installation's key in the store.
func (rt route) key() string {
	if rt.orgWide && rt.enterprise != "" {
		return "enterprise/" + rt.enterprise
	}
	return "team/" + rt.team
}

func (ws *Workspaces) serveSlack(w http.ResponseWriter, r *http.Request) {
	body, ok := readSigned(w, r, ws.opts.SigningSecret, &ws.refusals, ws.log)
	if !ok {
		return
	}
	ctx := r.Context()
	if c, ok := parseCommand(body); ok && isForm(r) {
		if !ws.serve(ctx, route{team: c.TeamID, enterprise: c.EnterpriseID, orgWide: c.OrgWide}, func(a *Adapter) { a.serveCommand(w, r, c) }) {
			w.WriteHeader(http.StatusOK)
		}
		return
	}
	if isForm(r) {
		form, err := parseForm(body)
		var cb struct {
			Team struct {
				ID           string `json:"id"`
				EnterpriseID string `json:"enterprise_id"`
			} `json:"team"`
			Enterprise *struct {
				ID string `json:"id"`
			} `json:"enterprise"`
			IsEnterpriseInstall bool `json:"is_enterprise_install"`
		}
		if err != nil || json.Unmarshal([]byte(form), &cb) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		rt := route{team: cb.Team.ID, enterprise: cb.Team.EnterpriseID, orgWide: cb.IsEnterpriseInstall}
		if cb.Enterprise != nil {
			rt.enterprise = cmp.Or(rt.enterprise, cb.Enterprise.ID)
		}
		if !ws.serve(ctx, rt, func(a *Adapter) { a.serveInteraction(w, r, body) }) {
			w.WriteHeader(http.StatusOK)
		}
		return
	}
	var cb struct {
		Type           string `json:"type"`
		Challenge      string `json:"challenge"`
		TeamID         string `json:"team_id"`
		EnterpriseID   string `json:"enterprise_id"`
		Authorizations []struct {
			EnterpriseID        string `json:"enterprise_id"`
			IsEnterpriseInstall bool   `json:"is_enterprise_install"`
		} `json:"authorizations"`
		Event struct {
			Type   string `json:"type"`
			Tokens struct {
				Bot []string `json:"bot"`
			} `json:"tokens"`
		} `json:"event"`
	}
	if err := json.Unmarshal(body, &cb); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if cb.Type == slackevents.URLVerification {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, cb.Challenge)
		return
	}
	rt := route{team: cb.TeamID, enterprise: cb.EnterpriseID}
	if len(cb.Authorizations) > 0 {
		rt.enterprise = cmp.Or(cb.Authorizations[0].EnterpriseID, rt.enterprise)
		rt.orgWide = cb.Authorizations[0].IsEnterpriseInstall
	}
	switch cb.Event.Type {
	case "app_uninstalled":
		ws.uninstall(ctx, rt, "the app was uninstalled")
		w.WriteHeader(http.StatusOK)
		return
	case "tokens_revoked":
		if len(cb.Event.Tokens.Bot) > 0 { // user tokens Neo never holds
			ws.uninstall(ctx, rt, "its bot token was revoked")
		}
		w.WriteHeader(http.StatusOK)
		return
	}
	if !ws.serve(ctx, rt, func(a *Adapter) { a.serveEvent(w, r, body) }) {
		w.WriteHeader(http.StatusOK) // acked: Slack would only retry it
	}
}

// serve hands a request to the adapter of the installation rt names, and
// reports whether there was one. An adapter stopping (a reinstall
// replaced its token) gives way to the next.
func (ws *Workspaces) serve(ctx context.Context, rt route, handle func(a *Adapter)) bool {
	for range 2 {
		a := ws.adapter(ctx, rt)
		if a == nil {
			return false
		}
		a.serving.RLock()
		if !a.retired {
			defer a.serving.RUnlock()
			handle(a)
			return true
		}
		a.serving.RUnlock()
		ws.dropRetired(a)
	}
	return false
}

// dropRetired removes a, whose Run has ended, from the adapters running.
func (ws *Workspaces) dropRetired(a *Adapter) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for key, w := range ws.live {
		if w.a == a {
			delete(ws.live, key)
		}
	}
}

// adapter returns the running adapter of the installation rt names,
// starting it with the stored token when none runs; nil when Neo is not
// installed there (or no longer).
func (ws *Workspaces) adapter(ctx context.Context, rt route) *Adapter {
	key := rt.key()
	a, err := ws.start(ctx, key)
	if errors.Is(err, ErrNotInstalled) && !rt.orgWide && rt.enterprise != "" {
		// Events from an org-wide installation that do not say so.
		rt.orgWide = true
		key = rt.key()
		a, err = ws.start(ctx, key)
	}
	if err != nil {
		if !errors.Is(err, ErrNotInstalled) {
			ws.log.Warn().Err(err).Str("team", rt.team).Msg("slack: cannot load the workspace's installation")
		} else if n, ok := ws.strays.Allow(ws.now()); ok {
			ws.log.Info().Str("team", rt.team).Str("enterprise", rt.enterprise).Int("suppressed", n).
				Msg("slack: an event for a workspace Neo is not installed in (acknowledged, not answered)")
		}
		return nil
	}
	if rt.orgWide && rt.team != "" {
		ws.learn(ctx, rt.team, key)
	}
	return a
}

// learn remembers (and stores, once) that the org-wide installation under
// key serves team.
func (ws *Workspaces) learn(ctx context.Context, team, key string) {
	ws.mu.Lock()
	known := ws.teams[team] == key
	ws.teams[team] = key
	ws.mu.Unlock()
	if !known && ws.vault.linked(ctx, team) != key {
		if err := ws.vault.link(ctx, team, key); err != nil {
			ws.log.Warn().Err(err).Str("team", team).Msg("slack: cannot store which installation serves a workspace")
		}
	}
}

// BotToken returns the bot token of the installation serving workspace
// team: its own, or its Enterprise Grid org's (an org-wide install Neo
// has heard from there), read from the store each time, so a token an
// uninstall deleted on any instance is gone here too. [ErrNotInstalled]
// when no installation serves team: never another workspace's token.
func (ws *Workspaces) BotToken(ctx context.Context, team string) (string, error) {
	if team == "" {
		return "", ErrNotInstalled
	}
	in, err := ws.vault.get(ctx, "team/"+team)
	if errors.Is(err, ErrNotInstalled) {
		if key := ws.vault.linked(ctx, team); strings.HasPrefix(key, "enterprise/") {
			in, err = ws.vault.get(ctx, key)
		}
	}
	if err != nil {
		return "", err
	}
	return in.BotToken, nil
}

// forTeam returns the adapter serving workspace team, for a thread there
// (a turn resumed after a restart included); nil when Neo is not
// installed there.
func (ws *Workspaces) forTeam(team string) *Adapter {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws.mu.Lock()
	key := ws.teams[team]
	ws.mu.Unlock()
	if key == "" {
		if a, err := ws.start(ctx, "team/"+team); err == nil {
			return a
		}
		key = ws.vault.linked(ctx, team)
	}
	if key == "" {
		return nil
	}
	a, err := ws.start(ctx, key)
	if err != nil {
		return nil
	}
	return a
}

// start returns the running adapter of the installation under key,
// starting one with the stored token when none runs.
func (ws *Workspaces) start(ctx context.Context, key string) (*Adapter, error) {
	ws.mu.Lock()
	w := ws.live[key]
	ws.mu.Unlock()
	if w != nil {
		return w.a, nil
	}
	in, err := ws.vault.get(ctx, key)
	if err != nil {
		return nil, err
	}
	o := ws.opts
	o.BotToken, o.AppToken = in.BotToken, ""
	o.Logger = ws.log.With().Str("installation", key).Logger()
	a, err := New(o)
	if err != nil {
		return nil, err
	}
	a.routed = true
	a.self.Store(&identity{UserID: in.BotUserID, TeamID: in.Team})
	// One workspace's share of what a single-workspace adapter keeps:
	// many installations must not each hold a whole one's worth.
	a.seen, a.kinds, a.names = recent.New(2048), recent.NewValues[string](1024), recent.NewValues[string](1024)
	a.viewing, a.homeNotes = recent.NewValues[appContext](1024), recent.NewValues[string](256)

	ws.mu.Lock()
	defer ws.mu.Unlock()
	switch {
	case ws.stopped:
		return nil, errors.New("slack: shutting down")
	case ws.live[key] != nil: // started meanwhile
		return ws.live[key].a, nil
	}
	rctx, cancel := context.WithCancel(context.Background())
	w = &workspace{a: a, cancel: cancel}
	ws.live[key] = w
	ws.wg.Go(func() {
		defer cancel()
		if err := a.Run(rctx); err != nil {
			ws.log.Warn().Err(err).Str("installation", key).Msg("slack: an installation stopped")
		}
		ws.mu.Lock()
		if ws.live[key] == w {
			delete(ws.live, key)
		}
		ws.mu.Unlock()
	})
	return a, nil
}

// forget stops the adapter of the installation under key, if one runs.
func (ws *Workspaces) forget(key string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if w := ws.live[key]; w != nil {
		w.cancel()
		delete(ws.live, key)
	}
	for team, k := range ws.teams {
		if k == key {
			delete(ws.teams, team)
		}
	}
}

// uninstall deletes the token of the installation rt names and stops
// answering there.
func (ws *Workspaces) uninstall(ctx context.Context, rt route, why string) {
	for _, key := range []string{rt.key(), "link/" + rt.team} {
		if err := ws.opts.Installs.DeleteSlackInstall(context.WithoutCancel(ctx), key); err != nil {
			ws.log.Error().Err(err).Str("installation", key).Msg("slack: cannot delete an installation's token")
		}
	}
	ws.forget(rt.key())
	ws.log.Info().Str("team", rt.team).Str("enterprise", rt.enterprise).Bool("org_wide", rt.orgWide).
		Msgf("slack: forgot the installation's token: %s", why)
}

// Reporter returns t's reporter, speaking with the token of the
// installation serving its workspace; one that fails every call when Neo
// is no longer installed there.
func (ws *Workspaces) Reporter(t core.Thread) core.Reporter {
	if a := ws.forTeam(t.Workspace); a != nil {
		return a.Reporter(t)
	}
	return gone{}
}

// Approver returns t's approver; without an installation every gate is
// denied.
func (ws *Workspaces) Approver(t core.Thread, requester string) core.Approver {
	if a := ws.forTeam(t.Workspace); a != nil {
		return a.Approver(t, requester)
	}
	return func(context.Context, core.GateRequest) (core.GateAnswer, error) {
		return core.GateAnswer{}, ErrNotInstalled
	}
}

// Prepare fetches what a message needs before its turn (see
// [Adapter.Prepare]) with its workspace's token.
func (ws *Workspaces) Prepare(ctx context.Context, in core.Inbound) core.Inbound {
	if a := ws.forTeam(in.Thread.Workspace); a != nil {
		return a.Prepare(ctx, in)
	}
	return in
}

// Tidy deletes what an interrupted turn left in t (see [Adapter.Tidy]).
func (ws *Workspaces) Tidy(ctx context.Context, t core.Thread) string {
	if a := ws.forTeam(t.Workspace); a != nil {
		return a.Tidy(ctx, t)
	}
	return ""
}

// Before reports whether message a was posted before b.
func (*Workspaces) Before(a, b string) bool { return parseTS(a).Before(parseTS(b)) }

// Redelivers reports that Slack delivers an event again until it is
// acknowledged (see [Adapter.Redelivers]).
func (*Workspaces) Redelivers() bool { return true }

// gone is the reporter of a thread in a workspace Neo was removed from.
type gone struct{}

func (gone) Say(context.Context, string) error    { return ErrNotInstalled }
func (gone) Status(context.Context, string) error { return ErrNotInstalled }
func (gone) Notice(context.Context, string) error { return ErrNotInstalled }
