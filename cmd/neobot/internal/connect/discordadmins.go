package connect

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/neobot/neobot/core/mcp"
)

// DiscordAdmins is Sign in with Discord (OAuth2, scopes identify and
// guilds) for the web chat's admin page, and the bot's own view of a
// guild (its owner, roles and the person's roles, read with the bot's
// token) for whether who signed in may manage it.
//
// Both must agree at sign-in: the person's own guild list says they own
// the guild or hold Manage Server or Administrator there, and the bot,
// which must be in the guild, computes the same from the guild's roles.
// The re-checks ask the bot alone: the person's access token is never
// kept, and the bot's answer is Discord's current word on the guild's
// roles, not a list the person's token was handed at sign-in.
type DiscordAdmins struct {
	signin discordSignIn
	bot    string // "Bot <token>"
}

// Permission bits Discord documents; either lets a person govern a
// guild's places.
const (
	permAdministrator = 0x8
	permManageGuild   = 0x20
)

// DiscordPerson is who signed in with Discord.
type DiscordPerson struct {
	User, Name string
	// Guilds are the guilds they may manage and Neo's bot is in.
	Guilds []string
	// Why says, when Guilds is empty, why, written for the person.
	Why string
}

// NewDiscordAdmins signs people in with the Discord application's client
// id/secret at base (such as https://discord.com), and reads guilds with
// the bot's token.
func NewDiscordAdmins(base, id, secret, botToken string, client *http.Client) *DiscordAdmins {
	bot := botToken
	if !strings.HasPrefix(bot, "Bot ") {
		bot = "Bot " + bot
	}
	return &DiscordAdmins{
		signin: discordSignIn{base: strings.TrimRight(base, "/"), id: id, secret: secret, client: client, scope: "identify guilds"},
		bot:    bot,
	}
}

// AuthURL is Discord's sign-in page.
func (d *DiscordAdmins) AuthURL(state, redirect string) string {
	return d.signin.authorize(state, redirect, mcp.Place{})
}

// Identify trades the sign-in's code for who signed in and the guilds
// they may manage where Neo's bot is.
func (d *DiscordAdmins) Identify(ctx context.Context, code, redirect string) (DiscordPerson, error) {
	who, token, err := d.signin.signIn(ctx, code, redirect)
	if err != nil {
		return DiscordPerson{}, err
	}
	p := DiscordPerson{User: who.user, Name: who.name}
	var listed []struct {
		ID          string `json:"id"`
		Owner       bool   `json:"owner"`
		Permissions string `json:"permissions"`
	}
	bearer := func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
	if err := fetchJSON(ctx, d.signin.client, d.signin.base+"/api/users/@me/guilds", nil, bearer, &listed); err != nil {
		return DiscordPerson{}, fmt.Errorf("discord users/@me/guilds: %w", err)
	}
	var notServed []string
	for _, g := range listed {
		perms, _ := strconv.ParseInt(g.Permissions, 10, 64)
		if !g.Owner && perms&(permAdministrator|permManageGuild) == 0 {
			continue
		}
		ok, why, err := d.Check(ctx, g.ID, p.User)
		switch {
		case err != nil:
			return DiscordPerson{}, err
		case ok:
			p.Guilds = append(p.Guilds, g.ID)
		case why != "":
			notServed = append(notServed, g.ID)
		}
	}
	if len(p.Guilds) == 0 {
		p.Why = "Discord lists no server you own or may manage (Manage Server or Administrator) where Neo's bot is, so no Discord places are yours to govern."
		if len(notServed) > 0 {
			p.Why += " Neo's bot is not in the server(s) you manage: " + strings.Join(notServed, ", ") + "."
		}
	}
	return p, nil
}

// Check asks Discord, with the bot's token, whether user may manage
// guild: they own it, or their roles (with @everyone's) hold Manage
// Server or Administrator. Why says so when the bot is not (or no
// longer) in guild. Channel overwrites play no part: Manage Server is a
// guild-wide permission.
func (d *DiscordAdmins) Check(ctx context.Context, guild, user string) (manager bool, why string, err error) {
	if !snowflake(guild) || !snowflake(user) {
		return false, "", nil
	}
	auth := func(r *http.Request) { r.Header.Set("Authorization", d.bot) }
	var g struct {
		OwnerID string `json:"owner_id"`
		Roles   []struct {
			ID          string `json:"id"`
			Permissions string `json:"permissions"`
		} `json:"roles"`
	}
	var st statusError
	err = fetchJSON(ctx, d.signin.client, d.signin.base+"/api/v10/guilds/"+guild, nil, auth, &g)
	switch {
	case errors.As(err, &st) && (st.code == http.StatusNotFound || st.code == http.StatusForbidden):
		return false, fmt.Sprintf("Neo's bot is not (or no longer) in Discord server %s, so nobody governs its places from here.", guild), nil
	case err != nil:
		return false, "", fmt.Errorf("discord guild %s: %w", guild, err)
	case g.OwnerID == user:
		return true, "", nil
	}
	var m struct {
		Roles []string `json:"roles"`
	}
	err = fetchJSON(ctx, d.signin.client, d.signin.base+"/api/v10/guilds/"+guild+"/members/"+user, nil, auth, &m)
	switch {
	case errors.As(err, &st) && st.code == http.StatusNotFound:
		return false, "", nil // not a member
	case err != nil:
		return false, "", fmt.Errorf("discord guild %s member: %w", guild, err)
	}
	var perms int64
	for _, r := range g.Roles {
		if r.ID == guild || slices.Contains(m.Roles, r.ID) { // @everyone's ID is the guild's
			p, _ := strconv.ParseInt(r.Permissions, 10, 64)
			perms |= p
		}
	}
	return perms&(permAdministrator|permManageGuild) != 0, "", nil
}

// snowflake reports whether s is a Discord ID (digits), so that it is
// safe in a URL path.
func snowflake(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
