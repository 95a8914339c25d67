package discord

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/neobot/neobot/core"
)

// submitTimeout bounds the work done for one accepted message (thread
// creation, files, journaling), which outlives Run's context so nothing
// taken off the gateway is lost.
const submitTimeout = 30 * time.Second

// threadArchiveMinutes is how long a thread Neo starts stays open without
// activity (a day).
const threadArchiveMinutes = 1440

// onMessageCreate handles MESSAGE_CREATE on the gateway's reader: it only
// filters and deduplicates, and queues the rest per channel.
func (a *Adapter) onMessageCreate(_ *discordgo.Session, ev *discordgo.MessageCreate) {
	m := ev.Message
	if m == nil || !a.wanted(m) || !a.seen.First(m.ID) {
		return
	}
	a.queues.Do(m.ChannelID, func() {
		ctx, cancel := context.WithTimeout(context.Background(), submitTimeout)
		defer cancel()
		a.accept(ctx, m)
	})
}

// wanted applies the cheap filters: a person's plain message or reply,
// never Neo's own nor another bot's, never a system message.
func (a *Adapter) wanted(m *discordgo.Message) bool {
	switch {
	case m.Author == nil || m.Author.ID == "" || m.Author.ID == a.me():
		return false
	case m.Author.Bot || m.Author.System || m.WebhookID != "":
		return false
	case m.Type != discordgo.MessageTypeDefault && m.Type != discordgo.MessageTypeReply:
		return false // thread created, pins, joins, …
	}
	return true
}

// mentions reports whether m mentions Neo.
func (a *Adapter) mentions(m *discordgo.Message) bool {
	me := a.me()
	if me == "" {
		return false
	}
	for _, u := range m.Mentions {
		if u != nil && u.ID == me {
			return true
		}
	}
	return strings.Contains(m.Content, "<@"+me+">") || strings.Contains(m.Content, "<@!"+me+">")
}

// accept turns a wanted message into an Inbound and submits it. It runs
// off the reader, one message at a time per channel.
func (a *Adapter) accept(ctx context.Context, m *discordgo.Message) {
	dm := m.GuildID == ""
	mention := a.mentions(m)
	var (
		t      core.Thread
		known  bool
		info   channelInfo
		parent = m.ChannelID
	)
	switch {
	case dm:
		t = core.Thread{Platform: Platform, Workspace: DMWorkspace, Channel: m.ChannelID, ID: m.ChannelID}
	default:
		var err error
		info, err = a.channel(ctx, m.ChannelID)
		if err != nil {
			a.log.Warn().Err(err).Str("channel", m.ChannelID).Msg("discord: look up channel")
			if !mention {
				return
			}
		}
		if info.thread {
			parent = info.parent
			t = core.Thread{Platform: Platform, Workspace: m.GuildID, Channel: parent, ID: m.ChannelID}
			known = info.ours || a.threadKnown(ctx, t)
		}
	}
	if !mention && !dm && !known {
		return // chatter Neo is not part of
	}
	if reason := a.refusal(m.Author.ID, dm, m.ChannelID, parent); reason != "" {
		a.replyTo(ctx, m, reason)
		return
	}
	if !dm && !info.thread {
		t = a.startThread(ctx, m)
	}
	in := core.Inbound{
		Thread: t, User: m.Author.ID, UserName: cmp.Or(m.Author.GlobalName, m.Author.Username),
		Text: a.cleanText(m.Content), EventID: m.ID, DM: dm, At: m.Timestamp,
	}
	if m.Member != nil {
		in.Roles = slices.Clone(m.Member.Roles)
	}
	if info.thread && !known {
		in.Context = a.history(ctx, m)
	}
	if len(m.Attachments) > 0 {
		files, notes := a.readFiles(ctx, m.Attachments)
		in.Files = files
		if notes != "" {
			in.Text = strings.TrimSpace(in.Text + "\n\n" + notes)
		}
	}
	if _, err := a.opts.Hub.Submit(ctx, in); err != nil {
		a.seen.Forget(m.ID)
		a.log.Error().Err(err).Str("thread", t.Key()).Msg("discord: submit message")
		_ = a.post(ctx, t.ID, &discordgo.MessageSend{Content: "Sorry, I couldn't take that message just now. Please send it again in a moment."})
	}
}

// threadKnown asks the store whether Neo is part of t.
func (a *Adapter) threadKnown(ctx context.Context, t core.Thread) bool {
	if a.opts.Threads == nil {
		return false
	}
	k, err := a.opts.Threads.ThreadKnown(ctx, t)
	if err != nil {
		a.log.Error().Err(err).Str("thread", t.Key()).Msg("discord: look up thread")
	}
	return k
}

// startThread creates a thread from the mention in a text channel and
// returns its key. Where no thread can be made (a channel type without
// threads, a missing permission) the conversation lives in the channel
// itself and continues on mentions.
func (a *Adapter) startThread(ctx context.Context, m *discordgo.Message) core.Thread {
	t := core.Thread{Platform: Platform, Workspace: m.GuildID, Channel: m.ChannelID, ID: m.ChannelID}
	ch, err := a.s.MessageThreadStartComplex(m.ChannelID, m.ID, &discordgo.ThreadStart{
		Name: threadName(a.cleanText(m.Content)), AutoArchiveDuration: threadArchiveMinutes,
	}, call(ctx))
	if re, ok := errors.AsType[*discordgo.RESTError](err); ok && re.Message != nil && re.Message.Code == discordgo.ErrCodeThreadAlreadyCreatedForThisMessage {
		// A redelivered mention: the thread started from a message has its ID.
		ch, err = &discordgo.Channel{ID: m.ID}, nil
	}
	if err != nil {
		a.log.Warn().Err(err).Str("channel", m.ChannelID).Msg("discord: start thread; answering in the channel")
		return t
	}
	a.channels.put(ch.ID, channelInfo{thread: true, parent: m.ChannelID, ours: true})
	t.ID = ch.ID
	return t
}

// threadName names a new thread after the first line of the message.
func threadName(text string) string {
	name := strings.TrimSpace(strings.SplitN(text, "\n", 2)[0])
	if r := []rune(name); len(r) > 90 {
		name = strings.TrimSpace(string(r[:89])) + "…"
	}
	if name == "" {
		name = "Conversation with Neo"
	}
	return name
}

// refusal returns the polite reply for a user or channel outside the
// allowlists, or "".
func (a *Adapter) refusal(user string, dm bool, channel, parent string) string {
	if len(a.opts.AllowUsers) > 0 && !slices.Contains(a.opts.AllowUsers, user) {
		return "Sorry, I can only help people my operator has added to my allowlist. Ask them if you'd like access."
	}
	if !dm && len(a.opts.AllowChannels) > 0 &&
		!slices.Contains(a.opts.AllowChannels, channel) && !slices.Contains(a.opts.AllowChannels, parent) {
		return "Sorry, I'm not enabled in this channel. You can message me directly, or ask my operator to add this channel."
	}
	return ""
}

// replyTo answers m in its channel, as a reply to it.
func (a *Adapter) replyTo(ctx context.Context, m *discordgo.Message, text string) {
	err := a.post(ctx, m.ChannelID, &discordgo.MessageSend{Content: text, Reference: m.Reference(),
		AllowedMentions: &discordgo.MessageAllowedMentions{}})
	if err != nil {
		a.log.Warn().Err(err).Str("channel", m.ChannelID).Msg("discord: reply")
	}
}

// cleanText removes Neo's mention, keeping the rest as written.
func (a *Adapter) cleanText(text string) string {
	if me := a.me(); me != "" {
		text = strings.ReplaceAll(text, "<@"+me+">", "")
		text = strings.ReplaceAll(text, "<@!"+me+">", "")
	}
	return strings.TrimSpace(text)
}

// channelInfo is what Neo needs to know of a guild channel.
type channelInfo struct {
	thread bool
	parent string // the thread's parent channel
	ours   bool   // a thread this process started
}

// channel returns what kind of channel id is, from the cache or REST.
func (a *Adapter) channel(ctx context.Context, id string) (channelInfo, error) {
	if info, ok := a.channels.get(id); ok {
		return info, nil
	}
	ch, err := a.s.Channel(id, call(ctx))
	if err != nil {
		if re, ok := errors.AsType[*discordgo.RESTError](err); ok && re.Response != nil && re.Response.StatusCode == http.StatusNotFound {
			a.channels.put(id, channelInfo{})
		}
		return channelInfo{}, err
	}
	info := channelInfo{thread: ch.IsThread(), parent: ch.ParentID}
	a.channels.put(id, info)
	return info, nil
}

// onInteractionCreate handles a button click: it runs the click off the
// reader, which the 3 s response budget allows.
func (a *Adapter) onInteractionCreate(_ *discordgo.Session, ev *discordgo.InteractionCreate) {
	i := ev.Interaction
	if i == nil || i.Type != discordgo.InteractionMessageComponent || !a.seen.First("i:"+i.ID) {
		return
	}
	if !strings.HasPrefix(i.MessageComponentData().CustomID, gatePrefix) {
		return
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), submitTimeout)
		defer cancel()
		a.click(ctx, i)
	}()
}
