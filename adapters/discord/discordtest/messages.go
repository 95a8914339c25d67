package discordtest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Message is a message in the fake: sent by a user through an event
// helper, or by the bot through REST, an interaction response or a
// followup.
type Message struct {
	ID        string
	ChannelID string
	GuildID   string
	// Author is the author's user ID; Bot marks a bot's message.
	Author string
	Bot    bool
	// Content is the text as last posted or edited.
	Content string
	// Components is the message's components JSON as last posted or edited.
	Components json.RawMessage
	Flags      int
	// Ephemeral marks an interaction reply visible to Recipient only.
	Ephemeral bool
	Recipient string
	// ReferenceID is the message this one replies to.
	ReferenceID string
	// ThreadID is the thread started from this message, if any.
	ThreadID string
	// AllowedMentions is the allowed_mentions JSON the bot sent.
	AllowedMentions json.RawMessage
	// Edits counts edits of the message.
	Edits int
	At    time.Time
	// Files are the message's attachments, as the bot sent them
	// (multipart files[n]).
	Files []File
}

// FromBot reports whether the bot posted the message.
func (m Message) FromBot() bool { return m.Author == BotUserID }

// Button is one button of a message's action rows.
type Button struct {
	CustomID string
	Label    string
	Style    int
	Disabled bool
}

type componentJSON struct {
	Type       int             `json:"type"`
	CustomID   string          `json:"custom_id"`
	Label      string          `json:"label"`
	Style      int             `json:"style"`
	Disabled   bool            `json:"disabled"`
	Components []componentJSON `json:"components"`
}

// Buttons returns the message's buttons, in order.
func (m Message) Buttons() []Button {
	var rows []componentJSON
	_ = json.Unmarshal(m.Components, &rows)
	var out []Button
	var walk func([]componentJSON)
	walk = func(cs []componentJSON) {
		for _, c := range cs {
			if c.Type == 2 {
				out = append(out, Button{CustomID: c.CustomID, Label: c.Label, Style: c.Style, Disabled: c.Disabled})
			}
			walk(c.Components)
		}
	}
	walk(rows)
	return out
}

// Messages returns every message, in posting order.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// In returns the messages of a channel or thread, ephemeral ones included,
// in posting order.
func (s *Server) In(channel string) []Message {
	var out []Message
	for _, m := range s.Messages() {
		if m.ChannelID == channel {
			out = append(out, m)
		}
	}
	return out
}

// MessageByID returns the message with id.
func (s *Server) MessageByID(id string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.messages {
		if m.ID == id {
			return m, true
		}
	}
	return Message{}, false
}

// WaitMessage waits for a message that satisfies pred and returns it as it
// is then. Messages are checked in posting order, including edits made
// since they were posted.
func (s *Server) WaitMessage(ctx context.Context, pred func(Message) bool) (Message, error) {
	var found Message
	err := s.wait(ctx, func() bool {
		for _, m := range s.messages {
			if pred(m) {
				found = m
				return true
			}
		}
		return false
	})
	if err != nil {
		return Message{}, fmt.Errorf("discordtest: wait for message: %w", err)
	}
	return found, nil
}

// messageJSONLocked renders m as Discord's message object; s.mu is held.
func (s *Server) messageJSONLocked(m Message) map[string]any {
	out := map[string]any{
		"id": m.ID, "channel_id": m.ChannelID, "content": m.Content, "type": 0,
		"author": userJSON(m.Author, m.Bot), "timestamp": m.At.UTC().Format(time.RFC3339Nano),
		"flags": m.Flags, "mentions": []any{}, "attachments": []any{}, "embeds": []any{},
	}
	if m.GuildID != "" {
		out["guild_id"] = m.GuildID
	}
	if len(m.Components) > 0 {
		out["components"] = m.Components
	}
	if m.ReferenceID != "" {
		out["message_reference"] = map[string]any{"message_id": m.ReferenceID, "channel_id": m.ChannelID}
	}
	if len(m.Files) > 0 {
		atts := make([]any, 0, len(m.Files))
		for _, f := range m.Files {
			u := s.srv.URL + "/attachments/" + f.ID + "/" + f.Name
			atts = append(atts, map[string]any{"id": f.ID, "filename": f.Name, "content_type": f.ContentType,
				"size": len(f.Content), "url": u, "proxy_url": u})
		}
		out["attachments"] = atts
	}
	return out
}
