package slack

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/neobot/neobot/adapters/internal/intake"
	"github.com/neobot/neobot/core"
)

// submitTimeout bounds the work done for one accepted message (history,
// files, journaling), which outlives Run's context so nothing acked is lost.
const submitTimeout = 30 * time.Second

// incoming is a user's message as the handlers see it, whatever event
// carried it.
type incoming struct {
	eventID, team, channel string
	// org is the Enterprise Grid organization of team, "" outside one.
	org string
	// channelType is what a message event says of its channel: "channel",
	// "group" (a private channel), "mpim" (a group DM) or "im"; empty for
	// an app_mention, which does not say.
	channelType                string
	user, botID, subtype, text string
	ts, threadTS               string
	files                      []slack.File
	mention                    bool // an app_mention
	// appContext is what the author has open, as a message.im event of
	// an agent-view app says (app_context); nil when the event does not
	// say, as every other event.
	appContext  *appContext
	redelivered bool // Slack's retry of an unacknowledged delivery
}

func (m incoming) dm() bool { return m.channelType == "im" }

func (m incoming) thread() core.Thread {
	id := m.threadTS
	if id == "" {
		id = m.ts
	}
	return core.Thread{Platform: Platform, Workspace: m.team, Channel: m.channel, ID: id}
}

// onEvent handles one Events API event on the reader: it filters and
// deduplicates, and queues the rest per thread. retry is true for Slack's
// retry of a delivery nobody acknowledged. ack acknowledges the envelope;
// it is called once, after the message is journaled (or at once for an
// event Neo does not take), so a crash before the journal leaves Slack to
// deliver it again.
func (a *Adapter) onEvent(ev event, retry bool, ack func()) {
	taken := false
	defer func() {
		if !taken {
			ack()
		}
	}()
	if ev.Type != slackevents.CallbackEvent {
		return
	}
	if me := a.me().TeamID; !a.routed && me != "" && ev.TeamID != "" && ev.TeamID != me {
		a.log.Debug().Str("team", ev.TeamID).Msg("slack: event for a workspace this installation does not serve")
		return
	}
	team := cmp.Or(ev.TeamID, a.me().TeamID)
	switch {
	case ev.assistant != nil:
		if a.seen.First(ev.EventID) {
			at := *ev.assistant
			a.work.Go(func() { a.greet(team, at) })
		}
		return
	case ev.home != nil:
		if a.seen.First(ev.EventID) {
			h := *ev.home
			a.work.Go(func() { a.onHomeOpened(team, h) })
		}
		return
	case ev.viewing != nil:
		// Noted on the reader, so a message that follows the change sees it.
		a.noteViewing(team, ev.viewing.user, ev.viewing.context)
		return
	}
	if ev.msg == nil {
		return
	}
	m := *ev.msg
	if m.channelType != "" {
		// Every message event says what its channel is, the copy of a
		// mention Neo drops included: the mention then needs no lookup.
		a.kinds.Put(m.channel, m.channelType)
	}
	if m.mention && (ev.edited || strings.HasPrefix(m.channel, "D")) {
		return // an edit is not a new message; in a DM, message.im carries it
	}
	m.eventID, m.team, m.redelivered = ev.EventID, ev.TeamID, retry
	m.org = cmp.Or(ev.Enterprise, a.me().Enterprise)
	if m.team == "" {
		m.team = a.me().TeamID
	}
	if m.appContext != nil && m.dm() && m.botID == "" {
		a.noteViewing(m.team, m.user, *m.appContext)
	}
	if m.channel == "" || m.ts == "" || (m.user == "" && m.botID == "") {
		a.log.Debug().Str("event", m.eventID).Msg("slack: dropped a message event missing its channel, author or ts")
		return
	}
	if !a.wanted(m) {
		return
	}
	if !a.seen.First(m.eventID) {
		// Slack's retry of an event still on its way to the journal is
		// acked only after the first delivery is: acked now, a crash
		// before that journal commit would lose the message for good.
		if taking := a.taking(m.eventID); taking != nil {
			taken = true
			a.work.Go(func() {
				<-taking
				ack()
			})
		}
		return
	}
	taken = true
	taking := a.take(m.eventID)
	a.work.Do(m.thread().Key(), func() {
		defer a.took(m.eventID, taking)
		defer ack()
		defer intake.Guard(a.log, "slack: message")
		ctx, cancel := context.WithTimeout(context.Background(), submitTimeout)
		defer cancel()
		a.accept(ctx, m)
	})
}

// take marks eventID as being taken: queued for the journal, not acked
// yet. The returned channel is closed by took, once it is acked.
func (a *Adapter) take(eventID string) chan struct{} {
	a.inflightMu.Lock()
	defer a.inflightMu.Unlock()
	c := make(chan struct{})
	a.inflight[eventID] = c
	return c
}

// took ends take's mark for eventID.
func (a *Adapter) took(eventID string, c chan struct{}) {
	a.inflightMu.Lock()
	defer a.inflightMu.Unlock()
	if a.inflight[eventID] == c {
		delete(a.inflight, eventID)
	}
	close(c)
}

// taking returns the channel of an event being taken, or nil.
func (a *Adapter) taking(eventID string) chan struct{} {
	a.inflightMu.Lock()
	defer a.inflightMu.Unlock()
	return a.inflight[eventID]
}

// Redelivers reports that Slack delivers an event again until it is
// acknowledged (conversation.Redeliverer): the hub may start its turn
// while the journal commits, since the ack waits for the commit.
func (a *Adapter) Redelivers() bool { return true }

// wanted applies the cheap filters: not our own messages, not other bots
// unless allowed, no edits or deletions, and only messages Neo is meant to
// read (mentions, DMs, replies in threads).
func (a *Adapter) wanted(m incoming) bool {
	me := a.me()
	switch {
	case me.UserID != "" && m.user == me.UserID, me.BotID != "" && m.botID == me.BotID:
		return false
	case (m.botID != "" || m.subtype == "bot_message") && !a.opts.AllowBots:
		return false
	case m.subtype != "" && m.subtype != "file_share" && m.subtype != "thread_broadcast" && m.subtype != "bot_message":
		return false // message_changed, message_deleted, channel_join, …
	case m.mention, m.dm():
		return true
	case me.UserID != "" && strings.Contains(m.text, "<@"+me.UserID+">"):
		return false // the app_mention event for the same message carries it
	}
	return m.threadTS != "" // a reply in a thread, if Neo is part of it
}

// accept hands a wanted message to the intake. It runs off the reader, one
// message at a time per thread. Nothing here waits on a download: history
// and files are fetched by Prepare when the turn starts.
func (a *Adapter) accept(ctx context.Context, m incoming) {
	var viewing string
	if m.dm() {
		viewing = a.viewingOf(ctx, m.team, m.user)
	}
	msg, out := a.intake.Accept(ctx, intake.Message{
		Inbound: core.Inbound{
			Thread: m.thread(), User: m.user, Text: a.cleanText(m.text), EventID: m.eventID, MessageID: m.ts,
			DM: m.dm(), Org: m.org, PrivateChannel: a.private(ctx, m), At: parseTS(m.ts), Attachments: attachments(m.files),
			FetchContext: m.threadTS != "" && m.threadTS != m.ts && !m.dm(), Redelivered: m.redelivered, Viewing: viewing,
		},
		Mention:  m.mention,
		Channels: []string{m.channel},
		Lookup:   !m.mention || m.threadTS != "",
	}, intakePlatform{a, m})
	// A new DM thread gets a title: one in the assistant view (a reply
	// under Slack's root), or one the agent view starts with a top-level
	// message (which carries app_context there).
	if out == intake.Accepted && m.dm() && !msg.Known && (m.threadTS != "" || m.appContext != nil) {
		a.setTitle(ctx, msg.Inbound.Thread, msg.Inbound.Text)
	}
}

// kindTimeout bounds the conversations.info call that tells a mention's
// channel kind: the message is acknowledged after it, within Slack's 3 s.
const kindTimeout = 2 * time.Second

// private reports whether m was said where only the channel's members can
// read it: a private channel ("group") or a group DM ("mpim"). A message
// event says so; for an app_mention, which does not, the channel's kind
// is learned once, from an earlier message event or conversations.info.
// A channel whose kind cannot be learned counts as private: what is said
// there stays there rather than risk following its author into public
// channels.
func (a *Adapter) private(ctx context.Context, m incoming) bool {
	kind := m.channelType
	if kind == "" {
		kind, _ = a.kinds.Get(m.channel)
	}
	switch kind {
	case "group", "mpim":
		return true
	case "channel", "im":
		return false
	}
	if strings.HasPrefix(m.channel, "G") { // a private channel or group DM made before 2021
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, kindTimeout)
	defer cancel()
	ch, err := a.api.GetConversationInfoContext(ctx, &slack.GetConversationInfoInput{ChannelID: m.channel})
	if err != nil {
		if held, ok := a.kindFailures.Allow(time.Now()); ok {
			a.log.Warn().Err(err).Str("channel", m.channel).Int("suppressed", held).
				Msg("slack: conversations.info (needs channels:read, groups:read, mpim:read); the channel counts as private")
		}
		return true
	}
	switch {
	case ch.IsMpIM:
		kind = "mpim"
	case ch.IsPrivate || ch.IsGroup:
		kind = "group"
	case ch.IsIM:
		kind = "im"
	default:
		kind = "channel"
	}
	a.kinds.Put(m.channel, kind)
	a.names.Put(m.channel, ch.Name)
	return kind == "group" || kind == "mpim"
}

// intakePlatform is the adapter as the intake sees one message.
type intakePlatform struct {
	a *Adapter
	m incoming
}

// Refuse answers only the author, ephemerally, where they wrote.
func (p intakePlatform) Refuse(ctx context.Context, _ intake.Message, text string) {
	p.a.ephemeral(ctx, p.m.channel, p.m.user, p.m.threadTS, text)
}

// IsAdmin reports whether user is an admin or owner of the workspace the
// message was written in (users.info, scope users:read); false when Slack
// cannot tell, so a failed look-up never lets anyone stop a turn.
func (p intakePlatform) IsAdmin(ctx context.Context, user string) bool {
	var u *slack.User
	err := p.a.retry(ctx, "users.info", func(ctx context.Context) (err error) {
		u, err = p.a.api.GetUserInfoContext(ctx, user)
		return err
	})
	if err != nil {
		p.a.log.Warn().Err(err).Str("user", user).Msg("slack: look up whether a user is an admin")
		return false
	}
	return (u.IsAdmin || u.IsOwner || u.IsPrimaryOwner) && !u.IsRestricted && !u.IsUltraRestricted &&
		(u.TeamID == "" || u.TeamID == p.m.thread().Workspace)
}

// Place keeps the thread: a Slack thread exists as soon as it is replied to.
func (p intakePlatform) Place(_ context.Context, m intake.Message) core.Thread {
	return m.Inbound.Thread
}

// Reply posts text in the thread.
func (p intakePlatform) Reply(ctx context.Context, t core.Thread, text string) error {
	return p.a.post(ctx, t, textMessage(text))
}

// Forget lets a redelivered event through the duplicate filter.
func (p intakePlatform) Forget(eventID string) { p.a.seen.Forget(eventID) }

// Prepare reads a journaled message's attachments and, on a first mention
// in the middle of a thread, its earlier messages; the hub calls it when
// the turn starts.
func (a *Adapter) Prepare(ctx context.Context, in core.Inbound) core.Inbound {
	return intake.Prepare(ctx, in, func(ctx context.Context, in core.Inbound) string {
		return a.history(ctx, in.Thread, in.MessageID)
	}, a.readFiles)
}

// attachments describes a message's files for the journal.
func attachments(files []slack.File) []core.Attachment {
	var out []core.Attachment
	for _, f := range files {
		out = append(out, core.Attachment{ID: f.ID, Name: f.Name, MIMEType: f.Mimetype, Kind: f.Filetype,
			Size: int64(f.Size), URL: cmp.Or(f.URLPrivateDownload, f.URLPrivate)})
	}
	return out
}

var leadingMention = regexp.MustCompile(`^\s*<@[A-Z0-9]+(?:\|[^>]*)?>\s*`)

// cleanText removes the bot's mention and Slack's escaping, keeping the
// rest of the message (line breaks, code) as written.
func (a *Adapter) cleanText(text string) string {
	if me := a.me().UserID; me != "" {
		text = strings.ReplaceAll(text, "<@"+me+"> ", "")
		text = strings.ReplaceAll(text, "<@"+me+">", "")
	} else {
		text = leadingMention.ReplaceAllString(text, "")
	}
	return strings.TrimSpace(html.UnescapeString(text)) // Slack escapes only &, < and >
}

// onInteraction handles one interaction off the reader. recorded acks it
// with Slack: it is called once what the click decides is durable (a
// gate's decision, a rating), or once the person has been told it could
// not be, and at the latest when the click is handled. Slack does not
// deliver an acked interaction again, so a crash before the decision is
// stored leaves the click unacked: Slack shows the person it failed, and
// their next click reaches the restarted bot.
func (a *Adapter) onInteraction(cb slack.InteractionCallback, recorded func()) {
	if cb.Type != slack.InteractionTypeBlockActions || len(cb.ActionCallback.BlockActions) == 0 {
		recorded()
		return
	}
	a.work.Go(func() {
		done := sync.OnceFunc(recorded)
		defer done()
		ctx, cancel := context.WithTimeout(context.Background(), submitTimeout)
		defer cancel()
		defer intake.Guard(a.log, "slack: click")
		a.click(ctx, cb, done)
	})
}

// callback is an Events API payload, its inner event left raw.
type callback struct {
	TeamID       string          `json:"team_id"`
	EnterpriseID string          `json:"enterprise_id"`
	Type         string          `json:"type"`
	EventID      string          `json:"event_id"`
	Event        json.RawMessage `json:"event"`
}

// event is what Neo reads of an Events API payload: the callback and, for
// the inner events Neo handles, what it needs of them. slack-go's event
// types would decode every field, rich-text blocks included, in several
// passes; FuzzParseCallback checks that these fields read exactly what
// slack-go's types read.
type event struct {
	Type   string // the payload's: event_callback, or a kind Neo ignores
	TeamID string
	// Enterprise is the Enterprise Grid organization of the event's
	// workspace, "" outside one.
	Enterprise string
	EventID    string
	Inner      string // the inner event's type

	// msg is an app_mention or message event, with only its event's own
	// fields set (not eventID, team or redelivered); edited marks an
	// app_mention of an edit.
	msg    *incoming
	edited bool
	// assistant is an assistant_thread_started event's thread.
	assistant *slackevents.AssistantThread
	// home is an app_home_opened event.
	home *homeOpened
	// viewing is an app_context_changed event.
	viewing *contextChanged
}

// eventFields are the fields Neo reads of both app_mention and message
// events.
type eventFields struct {
	User            string       `json:"user"`
	BotID           string       `json:"bot_id"`
	Text            string       `json:"text"`
	TimeStamp       string       `json:"ts"`
	ThreadTimeStamp string       `json:"thread_ts"`
	Channel         string       `json:"channel"`
	Files           []slack.File `json:"files"`
}

// incoming returns the message the fields describe.
func (f *eventFields) incoming() *incoming {
	return &incoming{user: f.User, botID: f.BotID, text: f.Text, ts: f.TimeStamp, threadTS: f.ThreadTimeStamp,
		channel: f.Channel, files: f.Files}
}

// mentionEvent is what Neo reads of an app_mention event
// (slackevents.AppMentionEvent).
type mentionEvent struct {
	eventFields
	Edited *slackevents.Edited `json:"edited"`
}

// read sets the mention in ev.
func (e *mentionEvent) read(ev *event) {
	ev.msg = e.incoming()
	ev.msg.mention = true // an app_mention does not say what its channel is
	ev.edited = e.Edited != nil
}

// messageEvent is what Neo reads of a message event
// (slackevents.MessageEvent). Its files are the nested message's when it
// has one (an edit, a file share), else the event's own.
type messageEvent struct {
	eventFields
	SubType     string         `json:"subtype"`
	ChannelType string         `json:"channel_type"`
	Message     *nestedMessage `json:"message"`
	AppContext  *appContext    `json:"app_context"`
}

// nestedMessage is what Neo reads of the message a message event nests
// (an edit, a file share).
type nestedMessage struct {
	Files []slack.File `json:"files"`
}

// read sets the message in ev.
func (e *messageEvent) read(ev *event) {
	ev.msg = e.incoming()
	ev.msg.subtype, ev.msg.channelType, ev.msg.appContext = e.SubType, e.ChannelType, e.AppContext
	if e.Message != nil {
		ev.msg.files = e.Message.Files
	}
}

// parseCallback reads an Events API payload, from Socket Mode or HTTP
// mode. Only the inner events Neo handles are decoded; any other comes
// back with its type alone, and is acked and ignored.
func parseCallback(raw []byte) (event, error) {
	var cb unionCallback
	if json.Unmarshal(raw, &cb) == nil {
		if ev, ok := cb.event(); ok {
			return ev, nil
		}
	}
	return parseCallbackTyped(raw)
}

// unionCallback is an Events API payload read in one pass: its inner
// event decoded into the union of the fields Neo reads of the events it
// handles. A payload this cannot read (a field one event type lacks
// holding the wrong JSON type for another, say) is read again by
// parseCallbackTyped, event type by event type, which is what decides.
type unionCallback struct {
	TeamID       string      `json:"team_id"`
	EnterpriseID string      `json:"enterprise_id"`
	Type         string      `json:"type"`
	EventID      string      `json:"event_id"`
	Event        *unionEvent `json:"event"`
}

// unionEvent has the fields of mentionEvent, messageEvent and
// slackevents.AssistantThreadStartedEvent, each under the same key with
// the same type, so a field reads here as it reads there.
type unionEvent struct {
	Type string `json:"type"`
	mentionEvent
	SubType         string                      `json:"subtype"`
	ChannelType     string                      `json:"channel_type"`
	Message         *nestedMessage              `json:"message"`
	AssistantThread slackevents.AssistantThread `json:"assistant_thread"`
	EventTimestamp  string                      `json:"event_ts"`
	AppContext      *appContext                 `json:"app_context"`
	Tab             string                      `json:"tab"`
	Context         *appContext                 `json:"context"`
}

// homeEvent is what Neo reads of an app_home_opened event.
type homeEvent struct {
	User    string      `json:"user"`
	Channel string      `json:"channel"`
	Tab     string      `json:"tab"`
	Context *appContext `json:"context"`
}

// read sets the event in ev.
func (e *homeEvent) read(ev *event) {
	ev.home = &homeOpened{user: e.User, channel: e.Channel, tab: e.Tab, context: e.Context}
}

// contextEvent is what Neo reads of an app_context_changed event.
type contextEvent struct {
	User    string     `json:"user"`
	Channel string     `json:"channel"`
	Context appContext `json:"context"`
}

// read sets the event in ev.
func (e *contextEvent) read(ev *event) {
	ev.viewing = &contextChanged{user: e.User, channel: e.Channel, context: e.Context}
}

// event returns what Neo reads of cb, as parseCallbackTyped reads it; ok
// is false for a callback without an event object, whose reading (and
// error) is parseCallbackTyped's.
func (cb *unionCallback) event() (ev event, ok bool) {
	ev = event{Type: cb.Type, TeamID: cb.TeamID, Enterprise: cb.EnterpriseID, EventID: cb.EventID}
	if cb.Type != slackevents.CallbackEvent {
		return ev, true
	}
	e := cb.Event
	if e == nil {
		return ev, false
	}
	ev.Inner = e.Type
	switch e.Type {
	case string(slackevents.AppMention):
		e.mentionEvent.read(&ev)
	case string(slackevents.Message):
		m := messageEvent{eventFields: e.eventFields, SubType: e.SubType, ChannelType: e.ChannelType, Message: e.Message,
			AppContext: e.AppContext}
		m.read(&ev)
	case string(slackevents.AssistantThreadStarted):
		at := e.AssistantThread
		ev.assistant = &at
	case string(slackevents.AppHomeOpened):
		h := homeEvent{User: e.User, Channel: e.Channel, Tab: e.Tab, Context: e.Context}
		h.read(&ev)
	case eventContextChanged:
		c := contextEvent{User: e.User, Channel: e.Channel}
		if e.Context != nil {
			c.Context = *e.Context
		}
		c.read(&ev)
	}
	return ev, true
}

// parseCallbackTyped is parseCallback reading the inner event by its type,
// into that type's own fields.
func parseCallbackTyped(raw []byte) (event, error) {
	var cb callback
	if err := json.Unmarshal(raw, &cb); err != nil {
		return event{}, fmt.Errorf("events api payload: %w", err)
	}
	ev := event{Type: cb.Type, TeamID: cb.TeamID, Enterprise: cb.EnterpriseID, EventID: cb.EventID}
	if cb.Type != slackevents.CallbackEvent {
		return ev, nil
	}
	if len(cb.Event) == 0 {
		return ev, errors.New("events api payload: a callback without its event")
	}
	var probe struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(cb.Event, &probe); err != nil {
		return ev, fmt.Errorf("events api payload: inner event: %w", err)
	}
	ev.Inner = probe.Type
	var err error
	switch probe.Type {
	case string(slackevents.AppMention):
		var e mentionEvent
		if err = json.Unmarshal(cb.Event, &e); err == nil {
			e.read(&ev)
		}
	case string(slackevents.Message):
		var e messageEvent
		if err = json.Unmarshal(cb.Event, &e); err == nil {
			e.read(&ev)
		}
	case string(slackevents.AssistantThreadStarted):
		var e slackevents.AssistantThreadStartedEvent
		if err = json.Unmarshal(cb.Event, &e); err == nil {
			ev.assistant = &e.AssistantThread
		}
	case string(slackevents.AppHomeOpened):
		var e homeEvent
		if err = json.Unmarshal(cb.Event, &e); err == nil {
			e.read(&ev)
		}
	case eventContextChanged:
		var e contextEvent
		if err = json.Unmarshal(cb.Event, &e); err == nil {
			e.read(&ev)
		}
	}
	if err != nil {
		return ev, fmt.Errorf("events api payload: %s event: %w", probe.Type, err)
	}
	return ev, nil
}
