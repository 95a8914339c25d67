package discord

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/neobot/neobot/adapters/internal/intake"
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
// filters and deduplicates, and queues the rest by channel.
func (a *Adapter) onMessageCreate(_ *discordgo.Session, ev *discordgo.MessageCreate) {
	m := ev.Message
	if m == nil || !a.wanted(m) || !a.seen.First(m.ID) {
		return
	}
	a.work.Do(m.ChannelID, func() {
		ctx, cancel := context.WithTimeout(context.Background(), submitTimeout)
		defer cancel()
		defer intake.Guard(a.log, "discord: message")
		a.route(ctx, m)
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
	case m.ChannelID == "" || m.ID == "":
		a.log.Debug().Str("message", m.ID).Msg("discord: dropped a message missing its channel or ID")
		return false
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

// incoming is a wanted message with what its channel turned out to be.
type incoming struct {
	m       *discordgo.Message
	dm      bool
	mention bool
	info    channelInfo
	// hidden is true in a channel @everyone cannot view, or a thread in
	// one: only the channel's members read what is said there.
	hidden bool
}

// route learns what kind of channel m is in (one REST call the first time,
// so it runs in the channel's queue, in arrival order) and queues the rest
// under the conversation's own key: the thread it is in, or for a mention
// in a text channel the thread that mention starts, whose ID is the
// message's. A follow-up in that new thread therefore waits for the
// mention that started it, however long the mention takes.
func (a *Adapter) route(ctx context.Context, m *discordgo.Message) {
	in := incoming{m: m, dm: m.GuildID == "", mention: a.mentions(m)}
	key := m.ChannelID
	if !in.dm {
		info, err := a.channel(ctx, m.ChannelID)
		if err != nil {
			a.log.Warn().Err(err).Str("channel", m.ChannelID).Msg("discord: look up channel")
			if !in.mention {
				return
			}
		}
		in.info = info
		in.hidden = a.hidden(ctx, info, err)
		if !info.thread {
			key = m.ID
		}
	}
	a.work.Do(key, func() {
		ctx, cancel := context.WithTimeout(context.Background(), submitTimeout)
		defer cancel()
		defer intake.Guard(a.log, "discord: message")
		a.accept(ctx, in)
	})
}

// accept hands a routed message to the intake. Nothing here waits on a
// download: history and files are fetched by Prepare when the turn starts.
func (a *Adapter) accept(ctx context.Context, im incoming) {
	m := im.m
	t := core.Thread{Platform: Platform, Workspace: m.GuildID, Channel: m.ChannelID, ID: m.ChannelID}
	channels := []string{m.ChannelID}
	if im.dm {
		t.Workspace = DMWorkspace
	}
	if im.info.thread {
		t.Channel = im.info.parent
		channels = append(channels, im.info.parent)
	}
	in := core.Inbound{
		Thread: t, User: m.Author.ID, UserName: cmp.Or(m.Author.GlobalName, m.Author.Username),
		Text: a.cleanText(m.Content), EventID: m.ID, MessageID: m.ID, DM: im.dm, At: m.Timestamp,
		Attachments: attachments(m.Attachments), FetchContext: im.info.thread, Private: im.info.private,
		PrivateChannel: im.hidden,
	}
	if m.Member != nil {
		in.Roles = slices.Clone(m.Member.Roles)
	}
	a.intake.Accept(ctx, intake.Message{
		Inbound: in, Mention: im.mention, Channels: channels,
		Known: im.info.ours, Lookup: im.info.thread,
	}, intakePlatform{a, im})
}

// intakePlatform is the adapter as the intake sees one message.
type intakePlatform struct {
	a  *Adapter
	im incoming
}

// Refuse replies to the message where it was written; a refused stop,
// which concerns someone else's approval, goes to the author's DMs instead
// (Discord has no private answer to a message), and only when they cannot
// be reached there is it a reply.
func (p intakePlatform) Refuse(ctx context.Context, _ intake.Message, text string) {
	if text == intake.RefuseStop && !p.im.dm {
		err := p.a.direct(ctx, p.im.m.Author.ID, text)
		if err == nil {
			return
		}
		p.a.log.Warn().Err(err).Str("user", p.im.m.Author.ID).Msg("discord: refuse a stop in DMs")
	}
	p.a.replyTo(ctx, p.im.m, text)
}

// Place starts a thread from a mention in a text channel; elsewhere the
// conversation stays where it is.
func (p intakePlatform) Place(ctx context.Context, m intake.Message) core.Thread {
	if p.im.dm || p.im.info.thread {
		return m.Inbound.Thread
	}
	return p.a.startThread(ctx, p.im.m)
}

// Reply posts text in the thread.
func (p intakePlatform) Reply(ctx context.Context, t core.Thread, text string) error {
	return p.a.post(ctx, t.ID, &discordgo.MessageSend{Content: text, AllowedMentions: &discordgo.MessageAllowedMentions{}})
}

// Forget lets a redelivered message through the duplicate filter.
func (p intakePlatform) Forget(eventID string) { p.a.seen.Forget(eventID) }

// Prepare reads a journaled message's attachments and, on a first mention
// in a thread Neo is not part of, its earlier messages; the hub calls it
// when the turn starts.
func (a *Adapter) Prepare(ctx context.Context, in core.Inbound) core.Inbound {
	return intake.Prepare(ctx, in, func(ctx context.Context, in core.Inbound) string {
		return a.history(ctx, in.Thread.ID, in.MessageID)
	}, a.readFiles)
}

// attachments describes a message's files for the journal.
func attachments(files []*discordgo.MessageAttachment) []core.Attachment {
	var out []core.Attachment
	for _, f := range files {
		if f == nil {
			continue
		}
		out = append(out, core.Attachment{ID: f.ID, Name: f.Filename, MIMEType: f.ContentType,
			Kind: strings.TrimPrefix(path.Ext(f.Filename), "."), Size: int64(f.Size), URL: f.URL})
	}
	return out
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
	a.channels.Put(ch.ID, channelInfo{thread: true, parent: m.ChannelID, ours: true})
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

// replyTo answers m in its channel, as a reply to it.
func (a *Adapter) replyTo(ctx context.Context, m *discordgo.Message, text string) {
	err := a.post(ctx, m.ChannelID, &discordgo.MessageSend{Content: text, Reference: m.Reference(),
		AllowedMentions: &discordgo.MessageAllowedMentions{}})
	if err != nil {
		a.log.Warn().Err(err).Str("channel", m.ChannelID).Msg("discord: reply")
	}
}

// direct sends text to user in their DMs with Neo.
func (a *Adapter) direct(ctx context.Context, user, text string) error {
	ch, err := a.s.UserChannelCreate(user, call(ctx))
	if err != nil {
		return fmt.Errorf("discord: open DMs with %s: %w", user, err)
	}
	return a.post(ctx, ch.ID, &discordgo.MessageSend{Content: text, AllowedMentions: &discordgo.MessageAllowedMentions{}})
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
	// private is a private thread: only its members can read it.
	private bool
	// hidden is a guild channel @everyone cannot view (see viewDenied).
	hidden bool
}

// hidden reports whether a message in the channel described by info (err
// is how looking it up went) is said where @everyone cannot read it: a
// channel hidden from @everyone, or a thread in one. A channel Neo could
// not look up counts as hidden: what is said there stays there rather than
// risk following its author into public channels.
func (a *Adapter) hidden(ctx context.Context, info channelInfo, err error) bool {
	if err != nil {
		return true
	}
	if !info.thread {
		return info.hidden
	}
	// The parent is read each time (from the cache): a channel made
	// private later is dropped from the cache, and its threads follow.
	parent, err := a.channel(ctx, info.parent)
	if err != nil {
		a.log.Warn().Err(err).Str("channel", info.parent).Msg("discord: look up a thread's parent channel")
		return true
	}
	return parent.hidden
}

// viewDenied reports whether ch's permission overwrites deny VIEW_CHANNEL
// to the guild's @everyone role, whose ID is the guild's: the channel is
// private to the roles and members let in.
func viewDenied(ch *discordgo.Channel, guild string) bool {
	for _, o := range ch.PermissionOverwrites {
		if o != nil && o.Type == discordgo.PermissionOverwriteTypeRole && o.ID == guild &&
			o.Deny&discordgo.PermissionViewChannel != 0 {
			return true
		}
	}
	return false
}

// channel returns what kind of channel id is, from the cache or REST.
func (a *Adapter) channel(ctx context.Context, id string) (channelInfo, error) {
	if info, ok := a.channels.Get(id); ok {
		return info, nil
	}
	ch, err := a.s.Channel(id, call(ctx))
	if err != nil {
		if re, ok := errors.AsType[*discordgo.RESTError](err); ok && re.Response != nil && re.Response.StatusCode == http.StatusNotFound {
			a.channels.Put(id, channelInfo{})
		}
		return channelInfo{}, err
	}
	info := channelInfo{thread: ch.IsThread(), parent: ch.ParentID, private: ch.Type == discordgo.ChannelTypeGuildPrivateThread,
		hidden: !ch.IsThread() && viewDenied(ch, ch.GuildID)}
	a.channels.Put(id, info)
	return info, nil
}

// onChannelUpdate forgets what Neo knew of a channel that changed: one
// made private since is looked up again before its next message, and so
// are its threads' parent.
func (a *Adapter) onChannelUpdate(_ *discordgo.Session, ev *discordgo.ChannelUpdate) {
	if ev.Channel != nil {
		a.channels.Drop(ev.ID)
	}
}

// onInteractionCreate handles a button click: it runs the click off the
// reader, which the 3 s response budget allows.
func (a *Adapter) onInteractionCreate(_ *discordgo.Session, ev *discordgo.InteractionCreate) {
	i := ev.Interaction
	if i != nil && i.Type == discordgo.InteractionModalSubmit && isFormSubmit(i) && a.seen.First("i:"+i.ID) {
		a.onFormSubmit(i)
		return
	}
	if i != nil && i.Type == discordgo.InteractionApplicationCommand && i.ApplicationCommandData().Name == homeCommand &&
		a.seen.First("i:"+i.ID) {
		a.work.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), submitTimeout)
			defer cancel()
			defer intake.Guard(a.log, "discord: /neo")
			a.onHomeCommand(ctx, i)
		})
		return
	}
	if i == nil || i.Type != discordgo.InteractionMessageComponent || !a.seen.First("i:"+i.ID) {
		return
	}
	click := a.click
	switch id := i.MessageComponentData().CustomID; {
	case strings.HasPrefix(id, feedbackPrefix):
		click = a.feedbackClick
	case strings.HasPrefix(id, homeConnect), strings.HasPrefix(id, homeDisconnect):
		click = a.homeClick
	case !strings.HasPrefix(id, gatePrefix):
		return
	}
	a.work.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), submitTimeout)
		defer cancel()
		defer intake.Guard(a.log, "discord: click")
		click(ctx, i)
	})
}
