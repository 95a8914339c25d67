package slack

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/neobot/neobot/core"
)

// Slack shows Neo's direct messages in one of two ways, chosen by the
// app's manifest. The assistant view (features.assistant_view, which
// apps created before July 2026 may keep) opens each conversation as a
// thread under a root Slack posts, announced by assistant_thread_started.
// The agent view (features.agent_view, the only one new apps get) keeps
// conversations in the app's Messages tab: each top-level message starts
// a thread Neo answers in, app_home_opened with tab "messages" says the
// tab was opened, and app_context_changed (also stamped on message.im as
// app_context) says what the person has open beside it. neobot handles
// both; nothing needs to be configured to tell them apart.

// eventContextChanged is the agent view's event for a change of what a
// person has open (slack-go does not name it).
const eventContextChanged = "app_context_changed"

// Entity types of an app context, as Slack names them.
const (
	entityChannel = "slack#/types/channel_id"
	entityMessage = "slack#/types/message_context"
	entityCanvas  = "slack#/types/canvas_id"
	entityList    = "slack#/types/list_id"
)

// appContext is what a person has open in Slack, most relevant first:
// app_context_changed's and app_home_opened's context, message.im's
// app_context.
type appContext struct {
	Entities []contextEntity `json:"entities"`
}

// contextEntity is one thing a person has open. Value is a string ID,
// or for a message context an object naming its channel and message.
type contextEntity struct {
	Type   string          `json:"type"`
	Value  json.RawMessage `json:"value"`
	TeamID string          `json:"team_id"`
}

// homeOpened is an app_home_opened event: user opened tab ("home",
// "messages" or "about") of the app, whose DM with them is channel.
type homeOpened struct {
	user, channel, tab string
	context            *appContext
}

// contextChanged is an app_context_changed event.
type contextChanged struct {
	user, channel string
	context       appContext
}

// maxViewed is how many of a context's entities are told to Neo: the
// most relevant ones.
const maxViewed = 3

// viewingKey keys what a person has open: per workspace and user, so one
// person's context never reaches another's turn.
func viewingKey(team, user string) string { return team + "/" + user }

// noteViewing records what user of team has open now; an empty context
// forgets it.
func (a *Adapter) noteViewing(team, user string, c appContext) {
	if user == "" {
		return
	}
	if len(c.Entities) == 0 {
		a.viewing.Drop(viewingKey(team, user))
		return
	}
	a.viewing.Put(viewingKey(team, user), c)
}

// viewingOf says in words what user of team last had open, "" when Slack
// has not said: a channel by its name when Slack tells it.
func (a *Adapter) viewingOf(ctx context.Context, team, user string) string {
	c, ok := a.viewing.Get(viewingKey(team, user))
	if !ok {
		return ""
	}
	var parts []string
	for _, e := range c.Entities {
		if len(parts) == maxViewed {
			break
		}
		if s := a.describeEntity(ctx, e); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "; ")
}

// slackID matches a Slack ID (C0123ABC, F0456) and a message ts: only
// such values are told to Neo, so an odd payload can put no words of its
// own in the system block.
var slackID = regexp.MustCompile(`^[A-Z0-9][A-Z0-9.]{0,39}$`)

// describeEntity says what e is, "" for a kind Neo does not know or a
// value that is not an ID.
func (a *Adapter) describeEntity(ctx context.Context, e contextEntity) string {
	var id string
	_ = json.Unmarshal(e.Value, &id)
	if id != "" && !slackID.MatchString(id) {
		return ""
	}
	switch e.Type {
	case entityChannel:
		if id == "" {
			return ""
		}
		return a.describeChannel(ctx, id)
	case entityMessage:
		var m struct {
			ChannelID string `json:"channel_id"`
			MessageTS string `json:"message_ts"`
		}
		if json.Unmarshal(e.Value, &m) != nil || !slackID.MatchString(m.ChannelID) || !slackID.MatchString(m.MessageTS) {
			return ""
		}
		return "a message (ts " + m.MessageTS + ") in " + a.describeChannel(ctx, m.ChannelID)
	case entityCanvas:
		if id != "" {
			return "the canvas " + id
		}
	case entityList:
		if id != "" {
			return "the list " + id
		}
	}
	return ""
}

// describeChannel names a channel: "channel #name (C0123)" when Slack
// tells its name, else by its kind and ID.
func (a *Adapter) describeChannel(ctx context.Context, id string) string {
	if strings.HasPrefix(id, "D") {
		return "a direct message (" + id + ")"
	}
	if name := a.channelName(ctx, id); name != "" && !strings.ContainsAny(name, "\n\r") {
		return "channel #" + name + " (" + id + ")"
	}
	return "channel " + id
}

// channelName returns a channel's name, learned once with
// conversations.info (bounded by kindTimeout); "" when Slack will not
// say, which is remembered too.
func (a *Adapter) channelName(ctx context.Context, id string) string {
	if name, ok := a.names.Get(id); ok {
		return name
	}
	ctx, cancel := context.WithTimeout(ctx, kindTimeout)
	defer cancel()
	ch, err := a.api.GetConversationInfoContext(ctx, &slack.GetConversationInfoInput{ChannelID: id})
	if err != nil {
		a.log.Debug().Err(err).Str("channel", id).Msg("slack: name of the channel a person has open")
		a.names.Put(id, "")
		return ""
	}
	a.names.Put(id, ch.Name)
	return ch.Name
}

// onHomeOpened answers app_home_opened: the Messages tab gets the
// suggested prompts of the skill of direct messages (the agent view
// offers them there), the Home tab the person's own page.
func (a *Adapter) onHomeOpened(team string, h homeOpened) {
	ctx, cancel := context.WithTimeout(context.Background(), submitTimeout)
	defer cancel()
	if h.context != nil {
		a.noteViewing(team, h.user, *h.context)
	}
	switch h.tab {
	case "messages":
		a.offerPrompts(ctx, team, h.channel, "")
	case "home":
		a.publishHome(ctx, team, h.user)
	}
}

// greet answers assistant_thread_started with the suggested prompts of
// the skill bound to direct messages (the assistant pane is one).
func (a *Adapter) greet(team string, at slackevents.AssistantThread) {
	ctx, cancel := context.WithTimeout(context.Background(), submitTimeout)
	defer cancel()
	a.offerPrompts(ctx, team, at.ChannelID, at.ThreadTimeStamp)
}

// offerPrompts sets the suggested prompts of the DM skill in channel: in
// the thread threadTS (the assistant view), or with no thread for the
// agent view, where Slack ignores prompts set on a thread.
func (a *Adapter) offerPrompts(ctx context.Context, team, channel, threadTS string) {
	place := core.Inbound{Thread: core.Thread{Platform: Platform, Workspace: team, Channel: channel, ID: threadTS}, DM: true}
	prompts := a.opts.Skills.For(place).Prompts
	if len(prompts) == 0 || channel == "" {
		return
	}
	p := slack.AssistantThreadsSetSuggestedPromptsParameters{
		ChannelID: channel, ThreadTS: threadTS, Title: "Here are a few things I can help with:",
	}
	for _, pr := range prompts {
		p.AddPrompt(pr.Title, pr.Message)
	}
	err := a.retry(ctx, "assistant.threads.setSuggestedPrompts", func(ctx context.Context) error {
		return a.api.SetAssistantThreadsSuggestedPromptsContext(ctx, p)
	})
	if err != nil {
		a.log.Warn().Err(err).Msg("slack: suggested prompts")
	}
}

// setTitle names a new DM thread after its first message: an assistant
// thread, or an agent-view conversation (both list their threads by
// title).
func (a *Adapter) setTitle(ctx context.Context, t core.Thread, text string) {
	title := strings.TrimSpace(strings.SplitN(text, "\n", 2)[0])
	if r := []rune(title); len(r) > 60 {
		title = string(r[:59]) + "…"
	}
	if title == "" {
		return
	}
	err := a.retry(ctx, "assistant.threads.setTitle", func(ctx context.Context) error {
		return a.api.SetAssistantThreadsTitleContext(ctx, slack.AssistantThreadsSetTitleParameters{
			ChannelID: t.Channel, ThreadTS: t.ID, Title: title})
	})
	if err != nil {
		a.log.Debug().Err(err).Msg("slack: thread title") // not an assistant thread
	}
}
