package discordtest

import (
	"strings"
	"time"
)

// Msg describes a user's message for [Server.Mention], [Server.Message]
// and [Server.DM]. Empty fields get defaults: Channel is #general (the
// user's DM channel for DM), ID a fresh snowflake.
type Msg struct {
	User    string
	Channel string
	Text    string
	ID      string
	// Bot marks a message from another bot.
	Bot bool
	// Type is Discord's message type (default 0, a plain message).
	Type  int
	Files []File
}

// Delivery is one event dispatched over the gateway.
type Delivery struct {
	// ID is the message's or the interaction's ID.
	ID        string
	ChannelID string
	Seq       int64
	// Sent is when the event was handed to the gateway.
	Sent time.Time
}

// Mention dispatches MESSAGE_CREATE for a message that mentions the bot.
// The mention is prepended to Text unless Text already has it.
func (s *Server) Mention(m Msg) Delivery {
	if !strings.Contains(m.Text, "<@"+BotUserID+">") {
		m.Text = "<@" + BotUserID + "> " + m.Text
	}
	return s.message(m, GuildID)
}

// Message dispatches MESSAGE_CREATE for a guild message that does not
// necessarily mention the bot.
func (s *Server) Message(m Msg) Delivery { return s.message(m, GuildID) }

// DM dispatches MESSAGE_CREATE for a direct message to the bot, in the
// user's DM channel ([Server.DMChannel]).
func (s *Server) DM(m Msg) Delivery {
	if m.Channel == "" {
		m.Channel = s.DMChannel(m.User)
	}
	return s.message(m, "")
}

// DMChannel returns the ID of the DM channel between user and the bot,
// creating it on first use.
func (s *Server) DMChannel(user string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.channels {
		if c.Type == ChannelDM && c.Name == user {
			return c.ID
		}
	}
	c := Channel{ID: s.nextIDLocked(), Type: ChannelDM, Name: user}
	s.channels[c.ID] = c
	return c.ID
}

func (s *Server) message(m Msg, guild string) Delivery {
	if m.Channel == "" {
		m.Channel = ChannelID
	}
	s.mu.Lock()
	if c, ok := s.channels[m.Channel]; ok && guild != "" && c.GuildID != "" {
		guild = c.GuildID // a channel of another guild (AddGuildChannel)
	}
	if m.ID == "" {
		m.ID = s.nextIDLocked()
	}
	now := time.Now()
	s.messages = append(s.messages, Message{ID: m.ID, ChannelID: m.Channel, GuildID: guild, Author: m.User,
		Bot: m.Bot, Content: m.Text, At: now})
	s.notifyLocked()
	attachments := make([]map[string]any, 0, len(m.Files))
	for _, f := range m.Files {
		size := f.Size
		if size == 0 {
			size = len(f.Content)
		}
		attachments = append(attachments, map[string]any{"id": f.ID, "filename": f.Name,
			"content_type": f.ContentType, "size": size, "url": s.srv.URL + "/attachments/" + f.ID + "/" + f.Name,
			"proxy_url": s.srv.URL + "/attachments/" + f.ID + "/" + f.Name})
	}
	mentions := []any{}
	if strings.Contains(m.Text, "<@"+BotUserID+">") || strings.Contains(m.Text, "<@!"+BotUserID+">") {
		mentions = append(mentions, userJSON(BotUserID, true))
	}
	roles := s.roles[m.User]
	s.mu.Unlock()

	d := map[string]any{
		"id": m.ID, "channel_id": m.Channel, "content": m.Text, "type": m.Type,
		"author": userJSON(m.User, m.Bot), "timestamp": now.UTC().Format(time.RFC3339Nano),
		"mentions": mentions, "attachments": attachments, "embeds": []any{}, "mention_roles": []any{},
	}
	if guild != "" {
		d["guild_id"] = guild
		d["member"] = map[string]any{"roles": nonNil(roles), "joined_at": now.UTC().Format(time.RFC3339)}
	}
	seq, sent := s.Dispatch("MESSAGE_CREATE", d)
	return Delivery{ID: m.ID, ChannelID: m.Channel, Seq: seq, Sent: sent}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
