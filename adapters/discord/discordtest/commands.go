package discordtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"time"
	"unicode/utf8"
)

// Command is an application command the bot registered.
type Command struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// Type is 1 for a slash command (CHAT_INPUT).
	Type int `json:"type"`
}

// commandName is Discord's rule for a slash command's name: 1 to 32
// lower-case letters, digits, '-' or '_'.
var commandName = regexp.MustCompile(`^[-_\p{Ll}\p{N}]{1,32}$`)

// Commands returns the bot's global application commands.
func (s *Server) Commands() []Command {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Command(nil), s.commands...)
}

// overwriteCommands answers PUT /applications/{app}/commands as Discord
// does: the list replaces every global command; a name or description
// out of Discord's rules refuses the whole list.
func (s *Server) overwriteCommands(r *http.Request, body []byte) (int, any) {
	if r.PathValue("app") != AppID {
		return http.StatusForbidden, apiError(50001, "Missing Access")
	}
	var cmds []Command
	if err := json.Unmarshal(body, &cmds); err != nil {
		return http.StatusBadRequest, apiError(50109, "The request body contains invalid JSON.")
	}
	if len(cmds) > 100 {
		return http.StatusBadRequest, apiError(30032, "Maximum number of application commands reached (100)")
	}
	seen := map[string]bool{}
	for _, c := range cmds {
		if c.Type == 0 {
			c.Type = 1
		}
		n := utf8.RuneCountInString(c.Description)
		switch {
		case c.Type == 1 && !commandName.MatchString(c.Name), seen[c.Name]:
			return http.StatusBadRequest, apiError(50035, fmt.Sprintf("Invalid Form Body: name %q", c.Name))
		case c.Type == 1 && (n < 1 || n > 100):
			return http.StatusBadRequest, apiError(50035, "Invalid Form Body: description must be 1 to 100 characters")
		}
		seen[c.Name] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commands = s.commands[:0]
	out := make([]map[string]any, 0, len(cmds))
	for _, c := range cmds {
		if c.Type == 0 {
			c.Type = 1
		}
		c.ID = s.nextIDLocked()
		s.commands = append(s.commands, c)
		out = append(out, map[string]any{"id": c.ID, "application_id": AppID, "name": c.Name, "description": c.Description,
			"type": c.Type, "version": c.ID})
	}
	s.notifyLocked()
	return http.StatusOK, out
}

// SlashCommand dispatches INTERACTION_CREATE for user typing the slash
// command name in channel (a guild channel, or a DM channel ID the fake
// does not know). Discord offers only registered commands: an
// unregistered name panics.
func (s *Server) SlashCommand(user, channel, name string) Delivery {
	s.mu.Lock()
	var cmd *Command
	for i := range s.commands {
		if s.commands[i].Name == name {
			cmd = &s.commands[i]
		}
	}
	if cmd == nil {
		s.mu.Unlock()
		panic("discordtest: /" + name + " is not a registered application command")
	}
	id := s.nextIDLocked()
	in := &interaction{id: id, token: "itoken-" + id, user: user, channel: channel, sent: time.Now()}
	s.interactions[in.token] = in
	c, inGuild := s.channels[channel]
	roles := s.roles[user]
	data := map[string]any{"id": cmd.ID, "name": cmd.Name, "type": cmd.Type}
	s.mu.Unlock()

	d := map[string]any{
		"id": id, "application_id": AppID, "type": 2, "token": in.token, "version": 1,
		"channel_id": channel, "data": data,
	}
	guild := ""
	if inGuild {
		guild = c.GuildID
	}
	return s.dispatchInteraction(in, d, guild, roles)
}

// checkComponents refuses message components Discord would: more than 5
// action rows, a row without 1 to 5 buttons, a button's label past 80
// characters, a custom_id past 100 or used twice, a link button without
// a URL.
func checkComponents(raw json.RawMessage) (int, any) {
	var rows []struct {
		Type       int `json:"type"`
		Components []struct {
			Type     int    `json:"type"`
			Label    string `json:"label"`
			Style    int    `json:"style"`
			CustomID string `json:"custom_id"`
			URL      string `json:"url"`
		} `json:"components"`
	}
	bad := func(why string) (int, any) {
		return http.StatusBadRequest, apiError(50035, "Invalid Form Body: components: "+why)
	}
	if json.Unmarshal(raw, &rows) != nil {
		return bad("not a list of action rows")
	}
	if len(rows) > 5 {
		return bad("more than 5 action rows")
	}
	ids := map[string]bool{}
	for _, row := range rows {
		if row.Type != 1 || len(row.Components) == 0 || len(row.Components) > 5 {
			return bad("an action row takes 1 to 5 components")
		}
		for _, c := range row.Components {
			if c.Type != 2 {
				continue
			}
			switch {
			case utf8.RuneCountInString(c.Label) > 80:
				return bad("a button label past 80 characters")
			case c.Style == 5 && c.URL == "", c.Style == 5 && c.CustomID != "":
				return bad("a link button takes a url and no custom_id")
			case c.Style != 5 && (c.CustomID == "" || len(c.CustomID) > 100 || ids[c.CustomID]):
				return bad("a button needs a unique custom_id of 1 to 100 characters")
			}
			ids[c.CustomID] = true
		}
	}
	return 0, nil
}
