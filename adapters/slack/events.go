package slack

import (
	"context"
	"html"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/neobot/neobot/core"
)

// submitTimeout bounds the work done for one accepted message (history,
// files, journaling), which outlives Run's context so nothing acked is lost.
const submitTimeout = 30 * time.Second

// incoming is a user's message as the handlers see it, whatever event
// carried it.
type incoming struct {
	eventID, team, channel, channelType string
	user, botID, subtype, text          string
	ts, threadTS                        string
	files                               []slack.File
	mention                             bool // an app_mention
}

func (m incoming) dm() bool { return m.channelType == "im" }

func (m incoming) thread() core.Thread {
	id := m.threadTS
	if id == "" {
		id = m.ts
	}
	return core.Thread{Platform: Platform, Workspace: m.team, Channel: m.channel, ID: id}
}

// onEvent handles one acked Events API event. It runs on the reader: it
// only filters and deduplicates, and queues the rest per thread.
func (a *Adapter) onEvent(ev slackevents.EventsAPIEvent) {
	cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent)
	if !ok {
		return
	}
	var m incoming
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.AppMentionEvent:
		m = incoming{user: e.User, botID: e.BotID, text: e.Text, ts: e.TimeStamp, threadTS: e.ThreadTimeStamp,
			channel: e.Channel, channelType: "channel", files: e.Files, mention: true}
		if e.Edited != nil || strings.HasPrefix(e.Channel, "D") {
			return // an edit is not a new message; in a DM, message.im carries it
		}
	case *slackevents.MessageEvent:
		m = incoming{user: e.User, botID: e.BotID, subtype: e.SubType, text: e.Text, ts: e.TimeStamp,
			threadTS: e.ThreadTimeStamp, channel: e.Channel, channelType: e.ChannelType}
		if e.Message != nil {
			m.files = e.Message.Files
		}
	case *slackevents.AssistantThreadStartedEvent:
		if !a.seen.First(cb.EventID) {
			return
		}
		at := e.AssistantThread
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			a.greet(at)
		}()
		return
	default:
		return
	}
	m.eventID, m.team = cb.EventID, ev.TeamID
	if m.team == "" {
		m.team = a.me().TeamID
	}
	if !a.wanted(m) || !a.seen.First(m.eventID) {
		return
	}
	a.queues.Do(m.thread().Key(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), submitTimeout)
		defer cancel()
		a.accept(ctx, m)
	})
}

// wanted applies the cheap filters: not our own messages, not other bots
// unless allowed, no edits or deletions, and only messages Neo is meant to
// read (mentions, DMs, replies in threads).
func (a *Adapter) wanted(m incoming) bool {
	me := a.me()
	switch {
	case m.user == "" && m.botID == "":
		return false
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

// accept turns a wanted message into an Inbound and submits it. It runs
// off the reader, one message at a time per thread.
func (a *Adapter) accept(ctx context.Context, m incoming) {
	t := m.thread()
	known := false
	if a.opts.Threads != nil && (!m.mention || m.threadTS != "") {
		k, err := a.opts.Threads.ThreadKnown(ctx, t)
		if err != nil {
			a.log.Error().Err(err).Str("thread", t.Key()).Msg("slack: look up thread")
		}
		known = k
	}
	if !m.mention && !m.dm() && !known {
		return // chatter in a thread Neo is not part of
	}
	if reason := a.refusal(m); reason != "" {
		if m.mention || m.dm() {
			a.ephemeral(ctx, m.channel, m.user, m.threadTS, reason)
		}
		return
	}
	in := core.Inbound{
		Thread: t, User: m.user, Text: a.cleanText(m.text), EventID: m.eventID,
		DM: m.dm(), At: parseTS(m.ts),
	}
	if !known && m.threadTS != "" && m.threadTS != m.ts && !m.dm() {
		in.Context = a.history(ctx, m)
	}
	if len(m.files) > 0 {
		files, notes := a.readFiles(ctx, m.files)
		in.Files = files
		if notes != "" {
			in.Text = strings.TrimSpace(in.Text + "\n\n" + notes)
		}
	}
	if m.dm() && !known && m.threadTS != "" {
		a.setTitle(ctx, t, in.Text)
	}
	if _, err := a.opts.Hub.Submit(ctx, in); err != nil {
		a.seen.Forget(m.eventID)
		a.log.Error().Err(err).Str("thread", t.Key()).Msg("slack: submit message")
		_ = a.post(ctx, t, slack.MsgOptionText("Sorry, I couldn't take that message just now. Please send it again in a moment.", false))
	}
}

// refusal returns the polite reply for a user or channel outside the
// allowlists, or "".
func (a *Adapter) refusal(m incoming) string {
	if len(a.opts.AllowUsers) > 0 && !slices.Contains(a.opts.AllowUsers, m.user) {
		return "Sorry, I can only help people my operator has added to my allowlist. Ask them if you'd like access."
	}
	if !m.dm() && len(a.opts.AllowChannels) > 0 && !slices.Contains(a.opts.AllowChannels, m.channel) {
		return "Sorry, I'm not enabled in this channel. You can message me directly, or ask my operator to add this channel."
	}
	return ""
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

// greet answers assistant_thread_started with suggested prompts.
func (a *Adapter) greet(at slackevents.AssistantThread) {
	ctx, cancel := context.WithTimeout(context.Background(), submitTimeout)
	defer cancel()
	p := slack.AssistantThreadsSetSuggestedPromptsParameters{
		ChannelID: at.ChannelID, ThreadTS: at.ThreadTimeStamp, Title: "Here are a few things I can help with:",
	}
	p.AddPrompt("What can you do?", "What can you do, and which tools do you have?")
	p.AddPrompt("Summarize a thread", "Summarize the discussion I paste next in five bullet points.")
	p.AddPrompt("Check my balance", "What is my current balance?")
	err := a.retry(ctx, "assistant.threads.setSuggestedPrompts", func(ctx context.Context) error {
		return a.api.SetAssistantThreadsSuggestedPromptsContext(ctx, p)
	})
	if err != nil {
		a.log.Warn().Err(err).Msg("slack: suggested prompts")
	}
}

// setTitle names a new assistant thread after its first message.
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

// onInteraction handles one acked interaction off the reader.
func (a *Adapter) onInteraction(cb slack.InteractionCallback) {
	if cb.Type != slack.InteractionTypeBlockActions || len(cb.ActionCallback.BlockActions) == 0 {
		return
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), submitTimeout)
		defer cancel()
		a.click(ctx, cb)
	}()
}
