package slacktest

import (
	"encoding/json"
	"net/url"
)

// Experience is how the fake app shows its direct messages: the Slack
// app manifest's features.assistant_view or features.agent_view.
type Experience int

// Experiences.
const (
	// AssistantView is the assistant pane (the default): each
	// conversation is a thread Slack opens with assistant_thread_started.
	// Apps made before July 2026 may keep it.
	AssistantView Experience = iota
	// AgentView is the agent messaging experience, the only one Slack
	// gives new apps: conversations in the app's Messages tab, a thread
	// per top-level message, app_home_opened with tab "messages" instead
	// of assistant_thread_started, app_context_changed saying what the
	// person has open, stamped on their DMs as app_context.
	AgentView
)

// SetExperience makes the fake app use e from now on.
func (s *Server) SetExperience(e Experience) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.experience = e
}

// Entity is one thing a person has open, as app_context_changed lists
// them; make them with [ChannelEntity], [MessageEntity], [CanvasEntity]
// or [ListEntity].
type Entity struct {
	Type string
	// Value is a channel, canvas or list ID, or for a message context
	// the object naming its channel and message.
	Value any
	// TeamID is the entity's workspace; "" leaves it out.
	TeamID string
}

// ChannelEntity is an open channel.
func ChannelEntity(id string) Entity { return Entity{Type: "slack#/types/channel_id", Value: id} }

// MessageEntity is an open message (a thread) in channel.
func MessageEntity(channel, ts string) Entity {
	return Entity{Type: "slack#/types/message_context", Value: map[string]string{"channel_id": channel, "message_ts": ts}}
}

// CanvasEntity is an open canvas.
func CanvasEntity(id string) Entity { return Entity{Type: "slack#/types/canvas_id", Value: id} }

// ListEntity is an open list.
func ListEntity(id string) Entity { return Entity{Type: "slack#/types/list_id", Value: id} }

// contextLocked is the app context of user as Slack sends it: the
// entities last set by AppContextChanged, or an empty object.
func (s *Server) contextLocked(user string) map[string]any {
	ents := s.viewing[user]
	if len(ents) == 0 {
		return map[string]any{}
	}
	list := make([]map[string]any, 0, len(ents))
	for _, e := range ents {
		m := map[string]any{"type": e.Type, "value": e.Value}
		if e.TeamID != "" {
			m["team_id"] = e.TeamID
		}
		list = append(list, m)
	}
	return map[string]any{"entities": list}
}

// AppContextChanged delivers app_context_changed: user, with the app's
// DM channel open, now has entities open beside it (none: an empty
// context), most relevant first. Their next DMs carry the same context
// as app_context. Slack sends it to agent-view apps only: on an
// assistant-view fake it panics.
func (s *Server) AppContextChanged(user, channel string, entities ...Entity) Delivery {
	s.mu.Lock()
	if s.experience != AgentView {
		s.mu.Unlock()
		panic("slacktest: app_context_changed is sent to agent_view apps only (SetExperience(AgentView))")
	}
	s.viewing[user] = entities
	id := s.nextIDLocked("Ev")
	ts := s.nextTSLocked()
	ev := map[string]any{"type": "app_context_changed", "user": user, "channel": channel,
		"context": s.contextLocked(user), "event_ts": ts}
	s.mu.Unlock()
	return s.deliverEvent(id, ev, 0)
}

// AppHomeOpened delivers app_home_opened: user opened tab ("home",
// "messages" or "about") of the app, whose DM with them is channel. The
// Home tab's event carries the view last published for user, the
// agent view's events the user's app context.
func (s *Server) AppHomeOpened(user, channel, tab string) Delivery {
	s.mu.Lock()
	id := s.nextIDLocked("Ev")
	ts := s.nextTSLocked()
	ev := map[string]any{"type": "app_home_opened", "user": user, "channel": channel, "tab": tab, "event_ts": ts}
	if h, ok := s.homes[user]; ok && tab == "home" {
		ev["view"] = map[string]any{"id": h.ViewID, "team_id": s.team(), "type": "home", "blocks": h.Blocks,
			"private_metadata": h.PrivateMetadata, "hash": h.Hash, "app_id": AppID, "bot_id": BotID}
	}
	if s.experience == AgentView {
		ev["context"] = s.contextLocked(user)
	}
	s.mu.Unlock()
	return s.deliverEvent(id, ev, 0)
}

// Prompt is one suggested prompt.
type Prompt struct {
	Title   string `json:"title"`
	Message string `json:"message"`
}

// Prompts are the suggested prompts a person sees.
type Prompts struct {
	Title   string
	Prompts []Prompt
}

// SuggestedPrompts returns the prompts a person sees in channel's thread
// threadTS (the assistant view), or in the channel itself for threadTS
// "" (the agent view): only what Slack shows, so prompts an agent-view
// app set on a thread, which Slack ignores, are not there.
func (s *Server) SuggestedPrompts(channel, threadTS string) (Prompts, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.prompts[channel+"\x00"+threadTS]
	return p, ok
}

// ThreadTitle returns the title set on the DM thread at channel and ts.
func (s *Server) ThreadTitle(channel, ts string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.titles[channel+"\x00"+ts]
}

// answerAssistantLocked carries out an assistant.threads.* method that
// checkCall let through.
func (s *Server) answerAssistantLocked(method string, p url.Values) map[string]any {
	key := p.Get("channel_id") + "\x00" + p.Get("thread_ts")
	switch method {
	case "assistant.threads.setSuggestedPrompts":
		// Slack's reference: in an agent-view app, prompts set on a
		// thread fail silently; set on the channel, they are shown there.
		if s.experience == AgentView && p.Get("thread_ts") != "" {
			break
		}
		var set Prompts
		_ = json.Unmarshal([]byte(p.Get("prompts")), &set.Prompts)
		set.Title = p.Get("title")
		s.prompts[key] = set
	case "assistant.threads.setTitle":
		s.titles[key] = p.Get("title")
	}
	return map[string]any{"ok": true}
}
