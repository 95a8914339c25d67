package discordtest

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Guilds as Discord documents them for the admin page's sign-in: with
// the guilds scope, GET /api/users/@me/guilds (a person's Bearer token)
// lists the guilds they are in, each with owner and their permissions in
// it (a string bitfield); with the bot's token, GET /guilds/{guild}
// answers 404 (code 10004, Unknown Guild) unless the bot is in it, and
// gives its owner_id and roles (the @everyone role's ID is the guild's),
// and GET /guilds/{guild}/members/{user} gives a member's role IDs (404,
// code 10007, Unknown Member, for anyone else).

// Permission bits Discord documents.
const (
	PermAdministrator int64 = 0x8
	PermManageGuild   int64 = 0x20
)

// Guild is a guild as the bot sees it. A guild the fake holds is one the
// bot is in.
type Guild struct {
	ID, Name, OwnerID string
	// Roles' permissions by role ID; the @everyone role's ID is the
	// guild's.
	Roles map[string]int64
	// Members' role IDs by user ID (@everyone is implied).
	Members map[string][]string
}

// UserGuild is one entry of a person's /users/@me/guilds.
type UserGuild struct {
	ID, Name    string
	Owner       bool
	Permissions int64
}

// SetGuild puts the bot in g (replacing any guild with its ID).
func (s *Server) SetGuild(g Guild) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.guilds == nil {
		s.guilds = map[string]Guild{}
	}
	s.guilds[g.ID] = g
}

// SetMemberRoles gives user the role IDs roles in guild g, as the bot's
// GET /guilds/{g}/members/{user} answers; nothing when the bot is not in g.
func (s *Server) SetMemberRoles(g, user string, roles ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if guild, ok := s.guilds[g]; ok {
		guild.Members = cloneMembers(guild.Members)
		guild.Members[user] = roles
		s.guilds[g] = guild
	}
}

// RemoveGuild takes the bot out of guild g.
func (s *Server) RemoveGuild(g string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.guilds, g)
}

// SetUserGuilds sets what user's own /users/@me/guilds lists.
func (s *Server) SetUserGuilds(user string, guilds ...UserGuild) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.userGuilds == nil {
		s.userGuilds = map[string][]UserGuild{}
	}
	s.userGuilds[user] = guilds
}

func cloneMembers(m map[string][]string) map[string][]string {
	out := make(map[string][]string, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// getGuild is the bot's GET /guilds/{guild}.
func (s *Server) getGuild(r *http.Request, _ []byte) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.guilds[r.PathValue("guild")]
	if !ok {
		return http.StatusNotFound, apiError(10004, "Unknown Guild")
	}
	roles := []map[string]any{}
	for id, perms := range g.Roles {
		roles = append(roles, map[string]any{"id": id, "name": "role" + id, "permissions": strconv.FormatInt(perms, 10)})
	}
	return http.StatusOK, map[string]any{"id": g.ID, "name": g.Name, "owner_id": g.OwnerID, "roles": roles}
}

// getMember is the bot's GET /guilds/{guild}/members/{user}.
func (s *Server) getMember(r *http.Request, _ []byte) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.guilds[r.PathValue("guild")]
	if !ok {
		return http.StatusNotFound, apiError(10004, "Unknown Guild")
	}
	user := r.PathValue("user")
	roles, ok := g.Members[user]
	if !ok {
		return http.StatusNotFound, apiError(10007, "Unknown Member")
	}
	return http.StatusOK, map[string]any{"user": userJSON(user, false), "roles": nonNil(roles)}
}

// serveUserGuilds is GET /api/users/@me/guilds with a person's Bearer
// token that was authorized the guilds scope.
func (s *Server) serveUserGuilds(w http.ResponseWriter, r *http.Request) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	user, known := s.signins.User(tok)
	w.Header().Set("Content-Type", "application/json")
	switch {
	case !ok || !known:
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"message": "401: Unauthorized", "code": 0}`))
		return
	case !slices.Contains(strings.Fields(s.signins.Scope(tok)), "guilds"):
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"message": "Missing Access", "code": 50001}`))
		return
	}
	s.mu.Lock()
	list := s.userGuilds[user]
	s.mu.Unlock()
	out := []map[string]any{}
	for _, g := range list {
		out = append(out, map[string]any{"id": g.ID, "name": g.Name, "icon": nil, "owner": g.Owner,
			"permissions": strconv.FormatInt(g.Permissions, 10), "features": []string{}})
	}
	_ = json.NewEncoder(w).Encode(out)
}
