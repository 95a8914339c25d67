package slack

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/neobot/neobot/adapters/internal/home"
	"github.com/neobot/neobot/core"
)

// CommandName is Neo's slash command: in a channel, it shows the person
// how Neo is set up there, privately.
const CommandName = "/neo"

// command is a slash command as Slack sends it: the fields of an HTTP
// form, or of a Socket Mode envelope's payload.
type command struct {
	Command      string `json:"command"`
	TeamID       string `json:"team_id"`
	EnterpriseID string `json:"enterprise_id"`
	ChannelID    string `json:"channel_id"`
	UserID       string `json:"user_id"`
	// OrgWide: the app is installed for the whole Grid organization.
	OrgWide bool `json:"-"` // HTTP mode only: Slack sends "true" as a string
}

// parseCommand reads an HTTP-mode form as a slash command; false when
// the form is something else (an interaction carries a payload instead).
func parseCommand(body []byte) (command, bool) {
	v, err := url.ParseQuery(string(body))
	if err != nil || v.Get("command") == "" || v.Get("payload") != "" {
		return command{}, false
	}
	return command{Command: v.Get("command"), TeamID: v.Get("team_id"), EnterpriseID: v.Get("enterprise_id"),
		ChannelID: v.Get("channel_id"), UserID: v.Get("user_id"), OrgWide: v.Get("is_enterprise_install") == "true"}, true
}

// commandReply is the answer to c, shown only to the person who typed
// it: for /neo the settings of the channel it was typed in, in words
// (home.Settings); anything else says what Neo knows.
func (a *Adapter) commandReply(ctx context.Context, c command) json.RawMessage {
	text := "Neo knows one command, " + CommandName + ": type it in a channel to see how Neo is set up there."
	if c.Command == CommandName {
		team := cmpOr(c.TeamID, a.me().TeamID)
		in := core.Inbound{Thread: core.Thread{Platform: Platform, Workspace: team, Channel: c.ChannelID}, Org: cmpOr(c.EnterpriseID, a.me().Enterprise)}
		if strings.HasPrefix(c.ChannelID, "D") {
			in.Thread.Channel, in.DM = "", true // a direct message: the platform's dm settings
		}
		settings := home.Settings(ctx, a.opts.Home.Governed(a.opts.Approvers, mentionOf), in)
		text = "*How Neo is set up here*\n" + strings.NewReplacer("\x00", "<", "\x01", ">").Replace(escape(strings.Join(settings, " ")))
	}
	out, _ := json.Marshal(map[string]string{"response_type": "ephemeral", "text": text})
	return out
}

// serveCommand answers an HTTP-mode slash command in the response.
func (a *Adapter) serveCommand(w http.ResponseWriter, r *http.Request, c command) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(a.commandReply(r.Context(), c))
}
