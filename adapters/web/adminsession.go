package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// AdminSessions keeps the admin page's Slack sign-ins, each under the
// SHA-256 of its token (HashToken), never the token; the store satisfies
// it.
type AdminSessions interface {
	// AdminSession returns the session stored under id, or nil when
	// there is none or it has expired.
	AdminSession(ctx context.Context, id string) ([]byte, error)
	// PutAdminSession stores a session under id until expires,
	// replacing any.
	PutAdminSession(ctx context.Context, id string, data []byte, expires time.Time) error
	// RenewAdminSession replaces the data of the session under id while
	// it is stored; an ended session stays ended.
	RenewAdminSession(ctx context.Context, id string, data []byte) error
	// DeleteAdminSession ends the session under id; a missing one is
	// fine.
	DeleteAdminSession(ctx context.Context, id string) error
}

// sessionPrefix starts every admin session's token (a web token starts
// "neo_").
const sessionPrefix = "neoadm_"

// adminSession is one Slack or Discord sign-in to the admin page, as
// stored.
type adminSession struct {
	By string `json:"by"` // "slack:T1/U1" or "discord:111", the changes' author
	// Team and User: a workspace admin's, who governs Team's places
	// alone and is asked about again; "" for a person listed in
	// Options.Admins, who governs every place while listed.
	Team string `json:"team,omitempty"`
	User string `json:"user,omitempty"`
	// Guilds: a Discord server manager's (User is their Discord ID),
	// who governs these guilds' places alone, each asked about again.
	Guilds  []string  `json:"guilds,omitempty"`
	Expires time.Time `json:"expires"`
	// Checked is when Slack (or Discord) last said they administer Team
	// (manage Guilds).
	Checked time.Time `json:"checked"`
}

// openSession stores s, good for adminSessionTTL from now, and returns
// its token.
func (a *Adapter) openSession(ctx context.Context, s adminSession) (string, error) {
	token, _, err := NewToken()
	if err != nil {
		return "", err
	}
	token = sessionPrefix + strings.TrimPrefix(token, "neo_")
	now := a.opts.Now()
	s.Expires, s.Checked = now.Add(adminSessionTTL), now
	data, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	if err := a.sessions.PutAdminSession(ctx, HashToken(token), data, s.Expires); err != nil {
		return "", err
	}
	return token, nil
}

// slackSession finds who a Slack sign-in's token belongs to, and whether
// they still govern: a person listed in Options.Admins while listed; a
// workspace admin while Neo is installed in their workspace (asked on
// every request) and Slack says they administer it (asked again once
// adminRecheck has passed since it last said so). A session that no
// longer holds is ended. On a refusal, status is the answer's and msg
// says why.
func (a *Adapter) slackSession(ctx context.Context, token string) (g governor, status int, msg string) {
	id := HashToken(token)
	data, err := a.sessions.AdminSession(ctx, id)
	if err != nil {
		a.log.Error().Err(err).Msg("web: admin: read a Slack sign-in")
		return governor{}, http.StatusServiceUnavailable, "Your sign-in could not be checked just now (the store did not answer); try again in a moment."
	}
	var s adminSession
	now := a.opts.Now()
	if data == nil || json.Unmarshal(data, &s) != nil || s.By == "" || !now.Before(s.Expires) {
		return governor{}, http.StatusUnauthorized, "This sign-in has ended (you signed out, it expired after 8 hours, or you no longer govern here): sign in again."
	}
	end := func(status int, why string) (governor, int, string) {
		if err := a.sessions.DeleteAdminSession(context.WithoutCancel(ctx), id); err != nil {
			a.log.Error().Err(err).Msg("web: admin: end a Slack sign-in")
		}
		a.log.Info().Str("by", s.By).Str("team", s.Team).Strs("guilds", s.Guilds).Msg("web: admin: a sign-in ended: its person no longer governs")
		return governor{}, status, why + " This sign-in has ended."
	}
	if len(s.Guilds) > 0 {
		return a.discordSession(ctx, id, s, end)
	}
	if s.Team == "" {
		if !a.listed(s.By) {
			return end(http.StatusForbidden, fmt.Sprintf("You signed in with Slack as %s, who is no longer listed in NEO_WEB_ADMINS. %s", s.By, notAdmin))
		}
		return governor{by: s.By}, 0, ""
	}
	slack := a.opts.SlackSignIn
	if slack == nil {
		return end(http.StatusUnauthorized, "Sign in with Slack is no longer set up here.")
	}
	why, err := slack.Installed(ctx, s.Team)
	switch {
	case err != nil:
		a.log.Warn().Err(err).Str("team", s.Team).Msg("web: admin: cannot tell whether Neo is still installed in a workspace")
		return governor{}, http.StatusServiceUnavailable, fmt.Sprintf("Neo could not check just now that it is still installed in workspace %s; try again in a moment.", s.Team)
	case why != "":
		return end(http.StatusForbidden, why)
	}
	if now.Sub(s.Checked) >= adminRecheck || now.Before(s.Checked) {
		p, err := slack.Check(ctx, s.Team, s.User)
		switch {
		case err != nil:
			a.log.Warn().Err(err).Str("by", s.By).Msg("web: admin: Slack did not confirm a workspace admin again")
			return governor{}, http.StatusServiceUnavailable, fmt.Sprintf("Slack could not confirm just now that you still administer workspace %s; try again in a moment.", s.Team)
		case p.Why != "":
			return end(http.StatusForbidden, p.Why)
		case !p.WorkspaceAdmin:
			return end(http.StatusForbidden, fmt.Sprintf("Slack says you (%s) are no longer an admin or owner of workspace %s, so its places' settings are no longer yours to see or change.", s.By, s.Team))
		}
		s.Checked = now
		// Renewed, not put: a sign-out meanwhile on another instance
		// stays a sign-out.
		data, _ := json.Marshal(s) // a struct of strings and times
		if err := a.sessions.RenewAdminSession(ctx, id, data); err != nil {
			a.log.Warn().Err(err).Msg("web: admin: store a Slack sign-in's re-check") // asked again next time
		}
	}
	return governor{by: s.By, team: s.Team}, 0, ""
}

// discordSession finds whether a Discord server manager's session still
// governs: once adminRecheck has passed since Discord last said so, each
// of its guilds is asked about again with the bot's token (the bot still
// in it, the person still its owner or holding Manage Server or
// Administrator); the guilds that no longer hold are dropped, and with
// none left the session ends.
func (a *Adapter) discordSession(ctx context.Context, id string, s adminSession, end func(int, string) (governor, int, string)) (governor, int, string) {
	discord := a.opts.DiscordSignIn
	if discord == nil {
		return end(http.StatusUnauthorized, "Sign in with Discord is no longer set up here.")
	}
	now := a.opts.Now()
	if now.Sub(s.Checked) >= adminRecheck || now.Before(s.Checked) {
		var kept, whys []string
		for _, guild := range s.Guilds {
			ok, why, err := discord.Check(ctx, guild, s.User)
			switch {
			case err != nil:
				a.log.Warn().Err(err).Str("by", s.By).Str("guild", guild).Msg("web: admin: Discord did not confirm a server manager again")
				return governor{}, http.StatusServiceUnavailable, fmt.Sprintf("Discord could not confirm just now that you still manage server %s; try again in a moment.", guild)
			case ok:
				kept = append(kept, guild)
			case why != "":
				whys = append(whys, why)
			default:
				whys = append(whys, fmt.Sprintf("Discord says you (%s) no longer own server %s nor hold Manage Server or Administrator there, so its places' settings are no longer yours to see or change.", s.By, guild))
			}
		}
		if len(kept) == 0 {
			return end(http.StatusForbidden, strings.Join(whys, " "))
		}
		s.Guilds, s.Checked = kept, now
		// Renewed, not put: a sign-out meanwhile on another instance
		// stays a sign-out.
		data, _ := json.Marshal(s) // a struct of strings and times
		if err := a.sessions.RenewAdminSession(ctx, id, data); err != nil {
			a.log.Warn().Err(err).Msg("web: admin: store a Discord sign-in's re-check") // asked again next time
		}
	}
	return governor{by: s.By, guilds: s.Guilds}, 0, ""
}

// signOut is POST /v1/admin/signout: a Slack sign-in's session ends on
// every instance; a web token stays (the page forgets it).
func (a *Adapter) signOut(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if !sameOrigin(r) {
		apiError(w, http.StatusForbidden, "This request came from another site's page, so it was refused: use the admin page itself.")
		return
	}
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if token = strings.TrimSpace(token); strings.HasPrefix(token, sessionPrefix) {
		if err := a.sessions.DeleteAdminSession(r.Context(), HashToken(token)); err != nil {
			a.log.Error().Err(err).Msg("web: admin: sign out")
			apiError(w, http.StatusServiceUnavailable, "You could not be signed out just now (the store did not answer); try again in a moment.")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"ended": true})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ended": false})
}

// memSessions keeps sessions in this process's memory.
type memSessions struct {
	mu  sync.Mutex
	m   map[string]memSession
	now func() time.Time
}

type memSession struct {
	data    []byte
	expires time.Time
}

func (m *memSessions) AdminSession(_ context.Context, id string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.m[id]; ok && m.now().Before(s.expires) {
		return s.data, nil
	}
	return nil, nil
}

func (m *memSessions) PutAdminSession(_ context.Context, id string, data []byte, expires time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, s := range m.m {
		if !m.now().Before(s.expires) {
			delete(m.m, k)
		}
	}
	m.m[id] = memSession{data: data, expires: expires}
	return nil
}

func (m *memSessions) RenewAdminSession(_ context.Context, id string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.m[id]; ok {
		s.data = data
		m.m[id] = s
	}
	return nil
}

func (m *memSessions) DeleteAdminSession(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, id)
	return nil
}
