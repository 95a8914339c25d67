package slacktest

import (
	"encoding/json"
	"net/url"
	"strings"
)

// View is a modal the bot opened with views.open.
type View struct {
	ID        string
	TriggerID string
	// CallbackID and PrivateMetadata are the view's own.
	CallbackID      string
	PrivateMetadata string
	Title           string
	// Inputs are the view's input blocks, in order.
	Inputs []Input
	// Raw is the view's JSON as the bot sent it.
	Raw json.RawMessage
}

// Input is one input block of a [View].
type Input struct {
	BlockID  string
	ActionID string
	Label    string
	// Type is the element's type: plain_text_input, number_input,
	// static_select.
	Type string
	// Initial is the element's initial value (initial_value, or the
	// initial option's value).
	Initial  string
	Optional bool
	// Options are a static_select's option values.
	Options []string
}

// Views returns the modals opened so far, oldest first.
func (s *Server) Views() []View {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]View(nil), s.views...)
}

// openViewLocked answers views.open as Slack does: the trigger_id of an
// interaction (single use), a modal view with a title and blocks, each
// input block with a label and an element with an action_id.
func (s *Server) openViewLocked(p url.Values) map[string]any {
	trigger := p.Get("trigger_id")
	if !strings.HasPrefix(trigger, "trigger-") {
		return fail("invalid_trigger_id")
	}
	for _, v := range s.views {
		if v.TriggerID == trigger {
			return fail("expired_trigger_id") // a trigger opens one view
		}
	}
	var raw struct {
		Type            string `json:"type"`
		CallbackID      string `json:"callback_id"`
		PrivateMetadata string `json:"private_metadata"`
		Title           struct {
			Text string `json:"text"`
		} `json:"title"`
		Submit *struct {
			Text string `json:"text"`
		} `json:"submit"`
		Blocks []struct {
			Type    string `json:"type"`
			BlockID string `json:"block_id"`
			Label   *struct {
				Text string `json:"text"`
			} `json:"label"`
			Optional bool `json:"optional"`
			Element  *struct {
				Type          string `json:"type"`
				ActionID      string `json:"action_id"`
				InitialValue  string `json:"initial_value"`
				InitialOption *struct {
					Value string `json:"value"`
				} `json:"initial_option"`
				Options []struct {
					Value string `json:"value"`
				} `json:"options"`
			} `json:"element"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal([]byte(p.Get("view")), &raw); err != nil {
		return fail("invalid_arguments")
	}
	if raw.Type != "modal" || raw.Title.Text == "" || len(raw.Title.Text) > 24 || len(raw.Blocks) == 0 || len(raw.Blocks) > 100 || len(raw.PrivateMetadata) > 3000 {
		return fail("invalid_arguments")
	}
	v := View{ID: s.nextIDLocked("V"), TriggerID: trigger, CallbackID: raw.CallbackID, PrivateMetadata: raw.PrivateMetadata,
		Title: raw.Title.Text, Raw: json.RawMessage(p.Get("view"))}
	for _, b := range raw.Blocks {
		if b.Type != "input" {
			continue
		}
		if b.Label == nil || b.Element == nil || b.Element.ActionID == "" || b.BlockID == "" {
			return fail("invalid_arguments")
		}
		if raw.Submit == nil {
			return fail("invalid_arguments") // a modal with inputs needs a submit button
		}
		in := Input{BlockID: b.BlockID, ActionID: b.Element.ActionID, Label: b.Label.Text, Type: b.Element.Type,
			Initial: b.Element.InitialValue, Optional: b.Optional}
		if b.Element.InitialOption != nil {
			in.Initial = b.Element.InitialOption.Value
		}
		for _, o := range b.Element.Options {
			in.Options = append(in.Options, o.Value)
		}
		v.Inputs = append(v.Inputs, in)
	}
	s.views = append(s.views, v)
	return map[string]any{"ok": true, "view": map[string]any{"id": v.ID, "type": "modal", "callback_id": v.CallbackID,
		"private_metadata": v.PrivateMetadata}}
}

// Submit delivers a view_submission interaction: user submits view with
// values typed (or chosen) by block ID; an input not in values is sent
// with its initial value, as the modal showed it. The bot's ack may carry
// response_action "errors" to keep the modal open (see [Server.WaitAck]).
func (s *Server) Submit(user string, v View, values map[string]string) Delivery {
	state := map[string]any{}
	for _, in := range v.Inputs {
		val, ok := values[in.BlockID]
		if !ok {
			val = in.Initial
		}
		el := map[string]any{"type": in.Type}
		switch in.Type {
		case "static_select":
			if val != "" {
				el["selected_option"] = map[string]any{"value": val, "text": map[string]any{"type": "plain_text", "text": val}}
			} else {
				el["selected_option"] = nil
			}
		default:
			el["value"] = val
		}
		state[in.BlockID] = map[string]any{in.ActionID: el}
	}
	payload, _ := json.Marshal(map[string]any{
		"type": "view_submission", "token": VerificationToken, "api_app_id": AppID,
		"user": map[string]any{"id": user, "username": strings.ToLower(user), "team_id": s.team()},
		"team": map[string]any{"id": s.team(), "domain": "fake"},
		"view": map[string]any{"id": v.ID, "type": "modal", "callback_id": v.CallbackID, "private_metadata": v.PrivateMetadata,
			"team_id": s.team(), "state": map[string]any{"values": state}},
	})
	return s.deliver("interactive", payload, 0)
}
