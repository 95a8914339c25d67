package discordtest

import (
	"encoding/json"
	"net/http"
	"time"
	"unicode/utf8"
)

// Input is one text input of a modal the bot answered a click with.
type Input struct {
	CustomID, Label, Value, Placeholder string
	Style                               int
	Required                            bool
}

// Inputs returns the text inputs of the modal response r, in order.
func (r Response) Inputs() []Input {
	var rows []struct {
		Components []struct {
			Type        int    `json:"type"`
			CustomID    string `json:"custom_id"`
			Label       string `json:"label"`
			Value       string `json:"value"`
			Placeholder string `json:"placeholder"`
			Style       int    `json:"style"`
			Required    *bool  `json:"required"`
		} `json:"components"`
	}
	_ = json.Unmarshal(r.Components, &rows)
	var out []Input
	for _, row := range rows {
		for _, c := range row.Components {
			if c.Type == 4 {
				out = append(out, Input{CustomID: c.CustomID, Label: c.Label, Value: c.Value, Placeholder: c.Placeholder,
					Style: c.Style, Required: c.Required == nil || *c.Required})
			}
		}
	}
	return out
}

// checkModal refuses a modal response (type 9) as Discord does: a
// custom_id, a title of at most 45 characters, one to five action rows of
// one text input each, every input with a custom_id, a label of at most 45
// characters and a style of 1 (short) or 2 (paragraph).
func checkModal(body []byte) (int, any) {
	var b struct {
		Data struct {
			CustomID   string `json:"custom_id"`
			Title      string `json:"title"`
			Components []struct {
				Type       int `json:"type"`
				Components []struct {
					Type     int    `json:"type"`
					CustomID string `json:"custom_id"`
					Label    string `json:"label"`
					Style    int    `json:"style"`
					Value    string `json:"value"`
				} `json:"components"`
			} `json:"components"`
		} `json:"data"`
	}
	bad := func() (int, any) { return http.StatusBadRequest, apiError(50035, "Invalid Form Body") }
	if json.Unmarshal(body, &b) != nil {
		return bad()
	}
	d := b.Data
	if d.CustomID == "" || len(d.CustomID) > 100 || d.Title == "" || utf8.RuneCountInString(d.Title) > 45 || len(d.Components) == 0 || len(d.Components) > 5 {
		return bad()
	}
	for _, row := range d.Components {
		if row.Type != 1 || len(row.Components) != 1 {
			return bad()
		}
		in := row.Components[0]
		if in.Type != 4 || in.CustomID == "" || in.Label == "" || utf8.RuneCountInString(in.Label) > 45 || (in.Style != 1 && in.Style != 2) || utf8.RuneCountInString(in.Value) > 4000 {
			return bad()
		}
	}
	return 0, nil
}

// SubmitModal dispatches INTERACTION_CREATE of type 5 (MODAL_SUBMIT): user
// submits the modal the bot answered a click with (r), with values typed by
// input custom_id; an input not in values is sent as the modal showed it.
// Like a click, the submission must be answered within
// InteractionDeadline ([Server.WaitResponse]).
func (s *Server) SubmitModal(user string, r Response, values map[string]string) Delivery {
	var rows []map[string]any
	for _, in := range r.Inputs() {
		v, ok := values[in.CustomID]
		if !ok {
			v = in.Value
		}
		rows = append(rows, map[string]any{"type": 1, "components": []map[string]any{{"type": 4, "custom_id": in.CustomID, "value": v}}})
	}
	s.mu.Lock()
	var from *interaction
	for _, in := range s.interactions {
		if in.id == r.InteractionID {
			from = in
		}
	}
	id := s.nextIDLocked()
	in := &interaction{id: id, token: "itoken-" + id, user: user, sent: time.Now()}
	var message map[string]any
	guild := ""
	if from != nil {
		in.channel, in.message = from.channel, from.message
		if i := s.findLocked(from.channel, from.message); i >= 0 {
			message = s.messageJSONLocked(s.messages[i])
			guild = s.messages[i].GuildID
		}
	}
	s.interactions[in.token] = in
	roles := s.roles[user]
	s.mu.Unlock()

	d := map[string]any{
		"id": id, "application_id": AppID, "type": 5, "token": in.token, "version": 1,
		"channel_id": in.channel, "data": map[string]any{"custom_id": r.CustomID, "components": rows},
	}
	if message != nil {
		d["message"] = message
	}
	return s.dispatchInteraction(in, d, guild, roles)
}
