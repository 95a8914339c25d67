package discordtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Interaction response types (Discord's values).
const (
	ResponseMessage         = 4 // CHANNEL_MESSAGE_WITH_SOURCE
	ResponseDeferredMessage = 5
	ResponseDeferredUpdate  = 6 // DEFERRED_UPDATE_MESSAGE
	ResponseUpdate          = 7 // UPDATE_MESSAGE
	ResponseModal           = 9 // MODAL (modals.go)
)

// FlagEphemeral marks a reply only the clicking user sees.
const FlagEphemeral = 64

// Response is the bot's first response to an interaction.
type Response struct {
	InteractionID string
	Type          int
	Content       string
	Components    json.RawMessage
	Flags         int
	// CustomID and Title are a modal's (type 9).
	CustomID, Title string
	// Sent is when the click was dispatched; At when the response arrived.
	Sent, At time.Time
}

// interaction is a click the server dispatched.
type interaction struct {
	id, token, user, channel, message string
	sent                              time.Time
	responded                         bool
}

// Click dispatches INTERACTION_CREATE: user clicks the button at index
// button (see [Message.Buttons]) of msg. In a guild the user's roles
// ([Server.SetRoles]) come with the click.
func (s *Server) Click(user string, msg Message, button int) Delivery {
	buttons := msg.Buttons()
	var b Button
	if button >= 0 && button < len(buttons) {
		b = buttons[button]
	}
	s.mu.Lock()
	id := s.nextIDLocked()
	in := &interaction{id: id, token: "itoken-" + id, user: user, channel: msg.ChannelID, message: msg.ID, sent: time.Now()}
	s.interactions[in.token] = in
	message := s.messageJSONLocked(msg)
	roles := s.roles[user]
	s.mu.Unlock()

	d := map[string]any{
		"id": id, "application_id": AppID, "type": 3, "token": in.token, "version": 1,
		"channel_id": msg.ChannelID, "message": message,
		"data": map[string]any{"custom_id": b.CustomID, "component_type": 2},
	}
	return s.dispatchInteraction(in, d, msg.GuildID, roles)
}

// dispatchInteraction sends the interaction in as INTERACTION_CREATE with
// payload d, from a member holding roles in guild, or from a user outside
// one, and starts its response deadline when it is sent.
func (s *Server) dispatchInteraction(in *interaction, d map[string]any, guild string, roles []string) Delivery {
	if guild != "" {
		d["guild_id"] = guild
		d["member"] = map[string]any{"user": userJSON(in.user, false), "roles": nonNil(roles)}
	} else {
		d["user"] = userJSON(in.user, false)
	}
	seq, sent := s.Dispatch("INTERACTION_CREATE", d)
	s.mu.Lock()
	in.sent = sent
	s.mu.Unlock()
	return Delivery{ID: in.id, ChannelID: in.channel, Seq: seq, Sent: sent}
}

// callbackBody is what the fake reads of an interaction's first response.
type callbackBody struct {
	Type int `json:"type"`
	Data struct {
		Content    *string          `json:"content"`
		Components *json.RawMessage `json:"components"`
		Flags      int              `json:"flags"`
		CustomID   string           `json:"custom_id"`
		Title      string           `json:"title"`
	} `json:"data"`
}

// callback answers POST /interactions/{id}/{token}/callback: the first
// response, within InteractionDeadline of the click.
func (s *Server) callback(r *http.Request, body []byte) (int, any) {
	var b callbackBody
	if err := json.Unmarshal(body, &b); err != nil {
		return http.StatusBadRequest, apiError(50109, "The request body contains invalid JSON.")
	}
	if b.Type == ResponseModal {
		if status, resp := checkModal(body); status != 0 {
			return status, resp
		}
	}
	if b.Data.Content != nil {
		// A message response must say something; an update may clear the
		// text when components remain.
		if status, resp := checkContent(*b.Data.Content, b.Type == ResponseMessage && b.Data.Components == nil); status != 0 {
			return status, resp
		}
	} else if b.Type == ResponseMessage && b.Data.Components == nil {
		return http.StatusBadRequest, apiError(50006, "Cannot send an empty message")
	}
	if b.Data.Components != nil {
		if status, resp := checkComponents(*b.Data.Components); status != 0 {
			return status, resp
		}
	}
	now := time.Now()
	s.mu.Lock()
	status, out, resp := s.respondLocked(r, now, b)
	hooks := s.responseHooks
	s.mu.Unlock()
	if resp != nil {
		for _, fn := range hooks {
			fn(*resp)
		}
	}
	return status, out
}

// OnResponse calls fn with every first response to an interaction as it
// arrives, before the bot hears that Discord took it: a test that kills
// the bot from fn kills it the moment the person sees their click
// handled.
func (s *Server) OnResponse(fn func(Response)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.responseHooks = append(s.responseHooks, fn)
}

// respondLocked records a first response to the interaction the request
// names, as Discord takes it, and returns the HTTP answer and the
// response kept (nil when refused).
func (s *Server) respondLocked(r *http.Request, now time.Time, b callbackBody) (int, any, *Response) {
	in, ok := s.interactions[r.PathValue("token")]
	switch {
	case !ok || in.id != r.PathValue("id") || now.Sub(in.sent) > InteractionDeadline:
		return http.StatusNotFound, apiError(10062, "Unknown interaction"), nil
	case in.responded:
		return http.StatusBadRequest, apiError(40060, "Interaction has already been acknowledged."), nil
	}
	in.responded = true
	resp := Response{InteractionID: in.id, Type: b.Type, Flags: b.Data.Flags, CustomID: b.Data.CustomID, Title: b.Data.Title, Sent: in.sent, At: now}
	if b.Data.Content != nil {
		resp.Content = *b.Data.Content
	}
	if b.Data.Components != nil {
		resp.Components = *b.Data.Components
	}
	s.responses = append(s.responses, resp)
	switch b.Type {
	case ResponseUpdate:
		i := s.findLocked(in.channel, in.message)
		if i < 0 {
			i = s.findEphemeralLocked(in.channel, in.message, in.user)
		}
		if i >= 0 {
			m := &s.messages[i]
			if b.Data.Content != nil {
				m.Content = *b.Data.Content
			}
			if b.Data.Components != nil {
				m.Components = *b.Data.Components
			}
			m.Edits++
		}
	case ResponseMessage:
		s.addReplyLocked(in, resp.Content, resp.Flags)
		if len(resp.Components) > 0 {
			// A reply may carry buttons, ephemeral ones too.
			s.messages[len(s.messages)-1].Components = resp.Components
		}
	}
	s.notifyLocked()
	return http.StatusNoContent, nil, &resp
}

func (s *Server) addReplyLocked(in *interaction, content string, flags int) Message {
	m := Message{ID: s.nextIDLocked(), ChannelID: in.channel, Author: BotUserID, Bot: true, Content: content,
		Flags: flags, At: time.Now()}
	if c, ok := s.channels[in.channel]; ok {
		m.GuildID = c.GuildID
	}
	if flags&FlagEphemeral != 0 {
		m.Ephemeral, m.Recipient = true, in.user
	}
	s.messages = append(s.messages, m)
	return m
}

// followup answers POST /webhooks/{app}/{token}: a message after the first
// response, ephemeral with flag 64.
func (s *Server) followup(r *http.Request, body []byte) (int, any) {
	var b struct {
		Content string `json:"content"`
		Flags   int    `json:"flags"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return http.StatusBadRequest, apiError(50109, "The request body contains invalid JSON.")
	}
	if status, resp := checkContent(b.Content, true); status != 0 {
		return status, resp
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.interactions[r.PathValue("token")]
	switch {
	case r.PathValue("app") != AppID || !ok:
		return http.StatusNotFound, apiError(10015, "Unknown Webhook")
	case !in.responded:
		return http.StatusBadRequest, apiError(10062, "Unknown interaction: respond before following up")
	}
	m := s.addReplyLocked(in, b.Content, b.Flags)
	s.notifyLocked()
	return http.StatusOK, s.messageJSONLocked(m)
}

// editFollowup answers PATCH /webhooks/{app}/{token}/messages/{message}
// (@original is the clicked message for a component interaction).
func (s *Server) editFollowup(r *http.Request, body []byte) (int, any) {
	var b messageBody
	if err := json.Unmarshal(body, &b); err != nil {
		return http.StatusBadRequest, apiError(50109, "The request body contains invalid JSON.")
	}
	if b.Content != nil {
		if status, resp := checkContent(*b.Content, false); status != 0 {
			return status, resp
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.interactions[r.PathValue("token")]
	if !ok || !in.responded {
		return http.StatusNotFound, apiError(10015, "Unknown Webhook")
	}
	id := r.PathValue("message")
	if id == "@original" {
		id = in.message
	}
	i := s.findLocked(in.channel, id)
	if i < 0 {
		return http.StatusNotFound, apiError(10008, "Unknown Message")
	}
	m := &s.messages[i]
	if b.Content != nil {
		m.Content = *b.Content
	}
	if b.Components != nil {
		m.Components = *b.Components
	}
	m.Edits++
	s.notifyLocked()
	return http.StatusOK, s.messageJSONLocked(*m)
}

// Responses returns the first responses to interactions, in order.
func (s *Server) Responses() []Response {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Response(nil), s.responses...)
}

// WaitResponse waits for the first response to the click d.
func (s *Server) WaitResponse(ctx context.Context, d Delivery) (Response, error) {
	var found Response
	err := s.wait(ctx, func() bool {
		for _, r := range s.responses {
			if r.InteractionID == d.ID {
				found = r
				return true
			}
		}
		return false
	})
	if err != nil {
		return Response{}, fmt.Errorf("discordtest: wait for the response to interaction %s: %w", d.ID, err)
	}
	return found, nil
}

// findEphemeralLocked returns the index of user's own ephemeral message
// id in channel, or -1: a component on it updates it as on any other.
func (s *Server) findEphemeralLocked(channel, id, user string) int {
	for i, m := range s.messages {
		if m.ChannelID == channel && m.ID == id && m.Ephemeral && m.Recipient == user {
			return i
		}
	}
	return -1
}
