package slacktest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Home is the Home tab the bot published for one user with views.publish.
type Home struct {
	User            string
	ViewID          string
	Hash            string
	CallbackID      string
	PrivateMetadata string
	// Blocks is the view's blocks as the bot sent them.
	Blocks json.RawMessage
	// Publishes counts the views.publish calls for the user.
	Publishes int
}

// Rendered returns what the person reads on the tab: the text of every
// block, one per line.
func (h Home) Rendered() string { return Message{Blocks: h.Blocks}.Rendered() }

// Buttons returns the tab's buttons, in order.
func (h Home) Buttons() []Button { return Message{Blocks: h.Blocks}.Buttons() }

// HomeTab returns the Home tab last published for user.
func (s *Server) HomeTab(user string) (Home, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.homes[user]
	return h, ok
}

// Block Kit limits Slack enforces on a published view.
const (
	maxViewBlocks     = 100
	maxViewBytes      = 250 << 10
	maxSectionText    = 3000
	maxSectionFields  = 10
	maxFieldText      = 2000
	maxHeaderText     = 150
	maxContextItems   = 10
	maxActionElements = 25
	maxButtonText     = 75
	maxButtonValue    = 2000
	maxURL            = 3000
	maxID             = 255
	maxMetadata       = 3000
)

// publishViewLocked answers views.publish as Slack does: a home view
// for user_id, within Block Kit's limits; a stale hash is a
// hash_conflict.
func (s *Server) publishViewLocked(p url.Values) map[string]any {
	user := p.Get("user_id")
	if user == "" {
		return fail("invalid_arguments")
	}
	raw := p.Get("view")
	if len(raw) > maxViewBytes {
		return fail("view_too_large")
	}
	var v struct {
		Type            string            `json:"type"`
		CallbackID      string            `json:"callback_id"`
		PrivateMetadata string            `json:"private_metadata"`
		Blocks          []json.RawMessage `json:"blocks"`
	}
	if err := json.Unmarshal([]byte(raw), &v); err != nil || v.Type != "home" {
		return fail("invalid_arguments")
	}
	if len(v.Blocks) > maxViewBlocks || utf8.RuneCountInString(v.PrivateMetadata) > maxMetadata || len(v.CallbackID) > maxID {
		return fail("invalid_arguments")
	}
	for _, b := range v.Blocks {
		if err := checkBlock(b); err != nil {
			return map[string]any{"ok": false, "error": "invalid_arguments",
				"response_metadata": map[string]any{"messages": []string{err.Error()}}}
		}
	}
	old, had := s.homes[user]
	if h := p.Get("hash"); h != "" && had && h != old.Hash {
		return fail("hash_conflict")
	}
	h := Home{User: user, ViewID: old.ViewID, CallbackID: v.CallbackID, PrivateMetadata: v.PrivateMetadata,
		Blocks: json.RawMessage(raw), Publishes: old.Publishes + 1}
	if !had {
		h.ViewID = s.nextIDLocked("V")
	}
	// Blocks keeps only the blocks, as a message's Blocks does.
	h.Blocks, _ = json.Marshal(v.Blocks)
	h.Hash = s.nextTSLocked()
	s.homes[user] = h
	s.notifyLocked()
	return map[string]any{"ok": true, "view": map[string]any{"id": h.ViewID, "team_id": s.team(), "type": "home",
		"blocks": h.Blocks, "hash": h.Hash, "callback_id": h.CallbackID, "private_metadata": h.PrivateMetadata}}
}

// textObj is a Block Kit text object.
type textObj struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// checkBlock refuses a block Slack would: an unknown type, text past its
// limit, too many fields, elements or buttons, a button without text or
// action_id.
func checkBlock(raw json.RawMessage) error {
	var b struct {
		Type     string            `json:"type"`
		BlockID  string            `json:"block_id"`
		Text     *textObj          `json:"text"`
		Fields   []textObj         `json:"fields"`
		Elements []json.RawMessage `json:"elements"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return fmt.Errorf("a block is not an object: %w", err)
	}
	if len(b.BlockID) > maxID {
		return fmt.Errorf("block_id longer than %d", maxID)
	}
	runes := utf8.RuneCountInString
	switch b.Type {
	case "divider":
	case "header":
		if b.Text == nil || b.Text.Type != "plain_text" || b.Text.Text == "" || runes(b.Text.Text) > maxHeaderText {
			return fmt.Errorf("a header needs plain_text of 1 to %d characters", maxHeaderText)
		}
	case "section":
		if (b.Text == nil || b.Text.Text == "") && len(b.Fields) == 0 {
			return fmt.Errorf("a section needs text or fields")
		}
		if b.Text != nil && runes(b.Text.Text) > maxSectionText {
			return fmt.Errorf("section text longer than %d", maxSectionText)
		}
		if len(b.Fields) > maxSectionFields {
			return fmt.Errorf("more than %d fields", maxSectionFields)
		}
		for _, f := range b.Fields {
			if runes(f.Text) > maxFieldText {
				return fmt.Errorf("a field longer than %d", maxFieldText)
			}
		}
	case "context":
		if len(b.Elements) == 0 || len(b.Elements) > maxContextItems {
			return fmt.Errorf("a context block takes 1 to %d elements", maxContextItems)
		}
		for _, e := range b.Elements {
			var t textObj
			if json.Unmarshal(e, &t) == nil && (t.Type == "mrkdwn" || t.Type == "plain_text") && runes(t.Text) > maxSectionText {
				return fmt.Errorf("context text longer than %d", maxSectionText)
			}
		}
	case "actions":
		if len(b.Elements) == 0 || len(b.Elements) > maxActionElements {
			return fmt.Errorf("an actions block takes 1 to %d elements", maxActionElements)
		}
		for _, e := range b.Elements {
			if err := checkElement(e); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("block type %q is not one the Home tab takes here", b.Type)
	}
	return nil
}

// checkElement refuses an interactive element Slack would.
func checkElement(raw json.RawMessage) error {
	var e struct {
		Type     string   `json:"type"`
		ActionID string   `json:"action_id"`
		Text     *textObj `json:"text"`
		Value    string   `json:"value"`
		URL      string   `json:"url"`
		Style    string   `json:"style"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return fmt.Errorf("an element is not an object: %w", err)
	}
	if e.Type != "button" {
		return nil
	}
	switch {
	case e.Text == nil || e.Text.Type != "plain_text" || e.Text.Text == "" || utf8.RuneCountInString(e.Text.Text) > maxButtonText:
		return fmt.Errorf("a button needs plain_text of 1 to %d characters", maxButtonText)
	case e.ActionID == "" && e.URL == "", len(e.ActionID) > maxID:
		return fmt.Errorf("a button needs an action_id of at most %d characters", maxID)
	case utf8.RuneCountInString(e.Value) > maxButtonValue:
		return fmt.Errorf("a button value longer than %d", maxButtonValue)
	case utf8.RuneCountInString(e.URL) > maxURL:
		return fmt.Errorf("a button url longer than %d", maxURL)
	case e.Style != "" && e.Style != "primary" && e.Style != "danger":
		return fmt.Errorf("button style %q", e.Style)
	}
	return nil
}

// ClickHome delivers a block_actions interaction: user clicks the button
// at index button (see [Home.Buttons]) of their Home tab.
func (s *Server) ClickHome(user string, button int) Delivery {
	s.mu.Lock()
	h := s.homes[user]
	respID := s.nextIDLocked("resp")
	actionTS := s.nextTSLocked()
	s.mu.Unlock()
	var b Button
	if bs := h.Buttons(); button >= 0 && button < len(bs) {
		b = bs[button]
	}
	payload, _ := json.Marshal(map[string]any{
		"type": "block_actions", "token": VerificationToken, "api_app_id": AppID,
		"trigger_id": "trigger-" + respID,
		"user":       map[string]any{"id": user, "username": strings.ToLower(user), "team_id": s.team()},
		"team":       map[string]any{"id": s.team(), "domain": "fake"},
		"container":  map[string]any{"type": "view", "view_id": h.ViewID},
		"view": map[string]any{"id": h.ViewID, "team_id": s.team(), "type": "home", "blocks": h.Blocks,
			"private_metadata": h.PrivateMetadata, "callback_id": h.CallbackID, "hash": h.Hash, "app_id": AppID, "bot_id": BotID},
		"actions": []map[string]any{{
			"type": "button", "action_id": b.ActionID, "block_id": b.BlockID, "value": b.Value,
			"style": b.Style, "action_ts": actionTS,
			"text": map[string]any{"type": "plain_text", "text": b.Text},
		}},
	})
	return s.deliver("interactive", payload, 0)
}

// WaitHome waits until user's Home tab satisfies pred (nil: published at
// all) and returns it.
func (s *Server) WaitHome(ctx context.Context, user string, pred func(Home) bool) (Home, error) {
	var h Home
	err := s.wait(ctx, func() bool {
		got, ok := s.homes[user]
		if ok && (pred == nil || pred(got)) {
			h = got
			return true
		}
		return false
	})
	if err != nil {
		return Home{}, fmt.Errorf("slacktest: wait for %s's Home tab: %w", user, err)
	}
	return h, nil
}
