package slacktest

import (
	"encoding/json"
	"strings"
	"time"
)

// Msg describes a user's message for [Server.Mention], [Server.Message]
// and [Server.DM]. Empty fields get defaults: TS a fresh timestamp,
// Channel "C0GENERAL" (a DM channel "D0DM" for DM), EventID a fresh one.
type Msg struct {
	User     string
	Channel  string
	Text     string
	TS       string
	ThreadTS string
	// ChannelType is "channel", "group" (a private channel), "im" or
	// "mpim" (a group DM); default: what the channel was set to
	// ([Server.SetChannelType]), else what its ID says. It becomes the
	// channel's type. Message events carry it; app_mention events do not,
	// as on Slack.
	ChannelType string
	// MentionAlone makes [Server.Mention] deliver the app_mention without
	// the message event Slack also sends an app subscribed to the
	// channel's messages, so nothing but conversations.info tells the
	// channel's kind.
	MentionAlone bool
	// BotID marks a message posted by another bot.
	BotID   string
	Subtype string
	Files   []File
	EventID string
	// Team is the workspace the message is in (default the server's
	// Team): with apps installed through [Server.AuthorizeURL], one fake
	// serves several workspaces.
	Team string
}

// Delivery is one envelope sent to the bot; pass it to [Server.WaitAck] or
// [Server.Redeliver].
type Delivery struct {
	EnvelopeID string
	Type       string // "events_api" or "interactive"
	// EventID is the Events API event_id ("" for interactions).
	EventID string
	// TS is the ts of the user's message the event carries, if any.
	TS      string
	Payload json.RawMessage
	Retry   int
	Sent    time.Time
	// Conn is the Socket Mode connection the envelope was written to (1
	// for the first the server accepted; 0 while queued, or in HTTP mode).
	Conn int
}

// Mention delivers an app_mention event, then, as Slack does for an app
// subscribed to both, the same message as a message event with its own
// event ID (an adapter must answer it once). The bot's mention is
// prepended to Text unless Text already mentions it. The message is also
// added to the workspace, so conversations.replies sees it. The app_mention
// delivery is returned.
func (s *Server) Mention(m Msg) Delivery {
	if !strings.Contains(m.Text, "<@"+BotUserID+">") {
		m.Text = "<@" + BotUserID + "> " + m.Text
	}
	d := s.deliverMessage("app_mention", m)
	if m.MentionAlone {
		return d
	}
	m.TS, m.EventID, m.Subtype = d.TS, "", "copy" // the same message, not added again
	s.deliverMessage("message", m)
	return d
}

// Message delivers a message event (message.channels and friends) for a
// message that does not necessarily mention the bot.
func (s *Server) Message(m Msg) Delivery {
	return s.deliverMessage("message", m)
}

// DM delivers a message event in a direct message with the bot.
func (s *Server) DM(m Msg) Delivery {
	m.ChannelType = "im"
	if m.Channel == "" {
		m.Channel = "D0DM"
	}
	return s.deliverMessage("message", m)
}

func (s *Server) deliverMessage(typ string, m Msg) Delivery {
	if m.Team == "" {
		m.Team = s.team()
	}
	if m.Channel == "" {
		m.Channel = "C0GENERAL"
	}
	s.mu.Lock()
	if m.ChannelType != "" {
		s.kinds[m.Channel] = m.ChannelType
	}
	if typ == "message" {
		// A message event says what kind of channel it is in; an
		// app_mention does not (conversations.info does).
		m.ChannelType = s.kindLocked(m.Channel)
	} else {
		m.ChannelType = ""
	}
	if m.TS == "" {
		m.TS = s.nextTSLocked()
	}
	if m.EventID == "" {
		m.EventID = s.nextIDLocked("Ev")
	}
	copied := m.Subtype == "copy"
	if copied {
		m.Subtype = ""
	} else if m.Subtype == "" {
		s.addLocked(Message{Channel: m.Channel, TS: m.TS, ThreadTS: m.ThreadTS,
			User: m.User, BotID: m.BotID, Text: m.Text})
		s.notifyLocked()
	}
	files := make([]map[string]any, 0, len(m.Files))
	for _, f := range m.Files {
		size := f.Size
		if size == 0 {
			size = len(f.Content)
		}
		files = append(files, map[string]any{
			"id": f.ID, "name": f.Name, "title": f.Name, "mimetype": f.MIMEType, "filetype": f.FileType,
			"size": size, "url_private": s.srv.URL + "/files/" + f.ID + "/" + f.Name,
			"url_private_download": s.srv.URL + "/files/" + f.ID + "/" + f.Name,
		})
	}
	ev := map[string]any{
		"type": typ, "user": m.User, "text": m.Text, "ts": m.TS, "channel": m.Channel,
		"event_ts": m.TS, "team": m.Team,
	}
	if s.experience == AgentView && typ == "message" && m.ChannelType == "im" && m.BotID == "" {
		// An agent-view app subscribed to app_context_changed gets the
		// author's context on their DMs.
		ev["app_context"] = s.contextLocked(m.User)
	}
	s.mu.Unlock()

	if m.ThreadTS != "" {
		ev["thread_ts"] = m.ThreadTS
	}
	if m.ChannelType != "" {
		ev["channel_type"] = m.ChannelType
	}
	if m.BotID != "" {
		ev["bot_id"] = m.BotID
	}
	if m.Subtype != "" {
		ev["subtype"] = m.Subtype
	}
	if len(files) > 0 {
		ev["files"] = files
	}
	d := s.deliverEventIn(m.Team, m.EventID, ev, 0)
	d.TS = m.TS
	return d
}

// AssistantThreadStarted delivers assistant_thread_started: the user
// opened a new thread in the assistant pane of the DM channel. Slack
// sends it to assistant-view apps only: on an agent-view fake it panics.
func (s *Server) AssistantThreadStarted(user, channel, threadTS string) Delivery {
	s.mu.Lock()
	if s.experience == AgentView {
		s.mu.Unlock()
		panic("slacktest: an agent_view app gets app_home_opened (tab messages), not assistant_thread_started")
	}
	id := s.nextIDLocked("Ev")
	s.mu.Unlock()
	ev := map[string]any{
		"type": "assistant_thread_started",
		"assistant_thread": map[string]any{
			"user_id": user, "channel_id": channel, "thread_ts": threadTS,
			"context": map[string]any{"team_id": s.team()},
		},
		"event_ts": threadTS,
	}
	return s.deliverEvent(id, ev, 0)
}

// Event delivers any Events API inner event (a JSON object with a "type")
// under a fresh event_id.
func (s *Server) Event(inner map[string]any) Delivery {
	s.mu.Lock()
	id := s.nextIDLocked("Ev")
	s.mu.Unlock()
	return s.deliverEvent(id, inner, 0)
}

func (s *Server) deliverEvent(eventID string, inner map[string]any, retry int) Delivery {
	return s.deliverEventIn(s.team(), eventID, inner, retry)
}

// deliverEventIn delivers an event of workspace team, its envelope saying
// which installation it is for (authorizations) as Slack's does.
func (s *Server) deliverEventIn(team, eventID string, inner map[string]any, retry int) Delivery {
	s.mu.Lock()
	enterprise, auth := s.authorizationLocked(team)
	s.mu.Unlock()
	outer := map[string]any{
		"token": VerificationToken, "team_id": team, "api_app_id": AppID,
		"type": "event_callback", "event_id": eventID, "event_time": time.Now().Unix(),
		"event":          inner,
		"authorizations": []map[string]any{auth},
	}
	if enterprise != "" {
		outer["enterprise_id"] = enterprise
	}
	payload, _ := json.Marshal(outer)
	d := s.deliver("events_api", payload, retry)
	d.EventID = eventID
	return d
}

// Redeliver sends d again as Slack's retry does: same payload and event_id,
// a new envelope, retry_attempt (or X-Slack-Retry-Num) one higher.
func (s *Server) Redeliver(d Delivery) Delivery {
	r := s.deliver(d.Type, d.Payload, d.Retry+1)
	r.EventID, r.TS = d.EventID, d.TS
	return r
}

// Click delivers a block_actions interaction: user clicks the button at
// index button (see [Message.Buttons]) of msg.
func (s *Server) Click(user string, msg Message, button int) Delivery {
	buttons := msg.Buttons()
	var b Button
	if button >= 0 && button < len(buttons) {
		b = buttons[button]
	}
	s.mu.Lock()
	respID := s.nextIDLocked("resp")
	actionTS := s.nextTSLocked()
	s.mu.Unlock()
	message := map[string]any{"type": "message", "ts": msg.TS, "text": msg.Text, "user": msg.User, "bot_id": msg.BotID}
	if msg.ThreadTS != "" {
		message["thread_ts"] = msg.ThreadTS
	}
	if len(msg.Blocks) > 0 {
		message["blocks"] = msg.Blocks
	}
	payload, _ := json.Marshal(map[string]any{
		"type": "block_actions", "token": VerificationToken, "api_app_id": AppID,
		"trigger_id": "trigger-" + respID,
		"user":       map[string]any{"id": user, "username": strings.ToLower(user), "team_id": s.team()},
		"team":       map[string]any{"id": s.team(), "domain": "fake"},
		"channel":    map[string]any{"id": msg.Channel, "name": "general"},
		"container": map[string]any{"type": "message", "message_ts": msg.TS, "channel_id": msg.Channel,
			"thread_ts": msg.ThreadTS, "is_ephemeral": false},
		"message":      message,
		"response_url": s.srv.URL + "/response/" + respID,
		"actions": []map[string]any{{
			"type": "button", "action_id": b.ActionID, "block_id": b.BlockID, "value": b.Value,
			"style": b.Style, "action_ts": actionTS,
			"text": map[string]any{"type": "plain_text", "text": b.Text},
		}},
	})
	return s.deliver("interactive", payload, 0)
}

// deliver sends a payload by the current delivery mode.
func (s *Server) deliver(typ string, payload json.RawMessage, retry int) Delivery {
	s.mu.Lock()
	target := s.httpMode
	s.mu.Unlock()
	if target != nil {
		return s.postHTTP(target, typ, payload, retry)
	}
	return s.sendEnvelope(typ, payload, retry)
}

// Raw delivers payload exactly as given, under envelope type typ
// ("events_api", "interactive"): for shapes the helpers above never
// produce, such as an event_callback without an event.
func (s *Server) Raw(typ string, payload json.RawMessage) Delivery {
	return s.deliver(typ, payload, 0)
}
