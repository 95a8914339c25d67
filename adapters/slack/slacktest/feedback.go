package slacktest

import (
	"encoding/json"
)

// FeedbackButtons is a message's feedback_buttons element, in a
// context_actions block, as Slack documents it: a positive and a negative
// button, each with plain_text text and a value.
type FeedbackButtons struct {
	BlockID, ActionID           string
	PositiveText, PositiveValue string
	NegativeText, NegativeValue string
}

type feedbackJSON struct {
	Type           string `json:"type"`
	ActionID       string `json:"action_id"`
	PositiveButton *struct {
		Text  textJSON `json:"text"`
		Value string   `json:"value"`
	} `json:"positive_button"`
	NegativeButton *struct {
		Text  textJSON `json:"text"`
		Value string   `json:"value"`
	} `json:"negative_button"`
}

// Feedback returns the message's feedback buttons, if it has any.
func (m Message) Feedback() (FeedbackButtons, bool) {
	for _, b := range m.blocks() {
		if b.Type != "context_actions" {
			continue
		}
		var els []feedbackJSON
		_ = json.Unmarshal(b.Elements, &els)
		for _, e := range els {
			if e.Type == "feedback_buttons" && e.PositiveButton != nil && e.NegativeButton != nil {
				return FeedbackButtons{BlockID: b.BlockID, ActionID: e.ActionID,
					PositiveText: e.PositiveButton.Text.Text, PositiveValue: e.PositiveButton.Value,
					NegativeText: e.NegativeButton.Text.Text, NegativeValue: e.NegativeButton.Value}, true
			}
		}
	}
	return FeedbackButtons{}, false
}

// ClickFeedback delivers the block_actions interaction of user clicking
// msg's positive or negative feedback button: an action of type
// feedback_buttons whose value is the clicked button's.
func (s *Server) ClickFeedback(user string, msg Message, positive bool) Delivery {
	fb, _ := msg.Feedback()
	value := fb.NegativeValue
	if positive {
		value = fb.PositiveValue
	}
	s.mu.Lock()
	respID := s.nextIDLocked("resp")
	actionTS := s.nextTSLocked()
	s.mu.Unlock()
	payload, _ := json.Marshal(map[string]any{
		"type": "block_actions", "token": VerificationToken, "api_app_id": AppID,
		"trigger_id": "trigger-" + respID,
		"user":       map[string]any{"id": user, "username": user, "team_id": s.team()},
		"team":       map[string]any{"id": s.team(), "domain": "fake"},
		"channel":    map[string]any{"id": msg.Channel, "name": "general"},
		"container": map[string]any{"type": "message", "message_ts": msg.TS, "channel_id": msg.Channel,
			"thread_ts": msg.ThreadTS, "is_ephemeral": false},
		"message":      map[string]any{"type": "message", "ts": msg.TS, "thread_ts": msg.ThreadTS, "text": msg.Text, "user": msg.User, "bot_id": msg.BotID, "blocks": msg.Blocks},
		"response_url": s.srv.URL + "/response/" + respID,
		"actions": []map[string]any{{
			"type": "feedback_buttons", "action_id": fb.ActionID, "block_id": fb.BlockID, "value": value, "action_ts": actionTS,
		}},
	})
	return s.deliver("interactive", payload, 0)
}

// checkContextActions refuses context_actions blocks Slack refuses: an
// element other than feedback_buttons or icon_button, or feedback buttons
// without both buttons, each with plain_text text and a value.
func checkContextActions(blocks string) string {
	if blocks == "" {
		return ""
	}
	var bs []blockJSON
	if json.Unmarshal([]byte(blocks), &bs) != nil {
		return ""
	}
	for _, b := range bs {
		if b.Type != "context_actions" {
			continue
		}
		var els []feedbackJSON
		if json.Unmarshal(b.Elements, &els) != nil || len(els) == 0 {
			return "invalid_blocks"
		}
		for _, e := range els {
			switch e.Type {
			case "icon_button":
			case "feedback_buttons":
				for _, btn := range []*struct {
					Text  textJSON `json:"text"`
					Value string   `json:"value"`
				}{e.PositiveButton, e.NegativeButton} {
					if btn == nil || btn.Text.Type != "plain_text" || btn.Text.Text == "" || btn.Value == "" {
						return "invalid_blocks"
					}
				}
			default:
				return "invalid_blocks"
			}
		}
	}
	return ""
}
