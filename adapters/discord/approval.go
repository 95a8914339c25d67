package discord

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/neobot/neobot/core"

	"github.com/neobot/neobot/adapters/internal/gatetext"
	"github.com/neobot/neobot/adapters/internal/mdsplit"
)

// gatePrefix starts the custom_id of every gate button:
// neobot_gate:<token>:<option index>.
const gatePrefix = "neobot_gate:"

// Approver returns the approver for turns in thread t started by
// requester: it posts the gate's question with one button per option,
// waits for an authorized click, and returns the decision, following
// [core.Gates.Ask]. When the turn is cancelled the gate is closed as
// expired and its message says so, unless the cancellation's cause is
// core.ErrShutdown or the adapter is stopping (core.Stopper): then the
// gate stays pending, so a click after the restart still completes it.
// With no Gates configured it returns nil, which denies.
func (a *Adapter) Approver(t core.Thread, requester string) core.Approver {
	return a.opts.Gates.Approver(t, requester, a.opts.Approvers, gateUI{a})
}

// gateUI shows gates as messages with button components.
type gateUI struct{ a *Adapter }

// Stopping reports whether Run is stopping: a turn cancelled then is a
// shutdown (core.Stopper).
func (u gateUI) Stopping() bool { return u.a.work.Stopping() }

// PostGate posts the pending gate and returns its channel:message ID.
func (u gateUI) PostGate(ctx context.Context, g core.Gate) (string, error) {
	m, err := u.a.send(ctx, g.Thread.ID, gateSend(g))
	if err != nil {
		return "", err
	}
	return m.ChannelID + ":" + m.ID, nil
}

// FindGate looks for g's message among the thread's latest messages: the
// one carrying a button for g's token (128 random bits, so no other
// message can). It lets a turn resumed after a crash reuse the approval it
// posted instead of posting it twice, even before the gateway is up.
func (u gateUI) FindGate(ctx context.Context, g core.Gate) (string, bool, error) {
	msgs, err := u.a.s.ChannelMessages(g.Thread.ID, 50, "", "", "", call(ctx))
	if err != nil {
		return "", false, fmt.Errorf("discord: list messages of %s: %w", g.Thread.ID, err)
	}
	for _, m := range msgs {
		for _, row := range m.Components {
			r, ok := row.(*discordgo.ActionsRow)
			if !ok {
				continue
			}
			for _, c := range r.Components {
				if b, ok := c.(*discordgo.Button); ok {
					if token, _, ok := parseCustomID(b.CustomID); ok && token == g.Token {
						return m.ChannelID + ":" + m.ID, true, nil
					}
				}
			}
		}
	}
	return "", false, nil
}

// ShowGate edits the gate's message, and its copies, to show its outcome.
func (u gateUI) ShowGate(ctx context.Context, g core.Gate) { u.a.showGate(ctx, g) }

// NotifyGate posts text in the gate's thread, pinging the people and
// roles it names, and sends each of people a copy of the question in
// their DMs with Neo, returning the copies' channel:message IDs.
func (u gateUI) NotifyGate(ctx context.Context, g core.Gate, text string, people []string) []string {
	if text != "" {
		_, err := u.a.send(ctx, g.Thread.ID, &discordgo.MessageSend{Content: text,
			AllowedMentions: &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{discordgo.AllowedMentionTypeUsers, discordgo.AllowedMentionTypeRoles}}})
		if err != nil {
			u.a.log.Warn().Err(err).Msg("discord: approval notice")
		}
	}
	var copies []string
	for _, p := range people {
		ch, err := u.a.s.UserChannelCreate(p, call(ctx))
		if err == nil {
			var m *discordgo.Message
			if m, err = u.a.send(ctx, ch.ID, gateSend(g)); err == nil {
				copies = append(copies, m.ChannelID+":"+m.ID)
				continue
			}
		}
		u.a.log.Warn().Err(err).Str("user", p).Msg("discord: send an approval copy")
	}
	return copies
}

// click handles a button click on a gate message. Its first response
// goes out as soon as the decision is recorded: the message updated in
// place (type 7), or a private reply (flags 64) when nothing changes.
func (a *Adapter) click(ctx context.Context, i *discordgo.Interaction) {
	user, roles := clicker(i)
	private := func(text string) { a.respond(ctx, i, ephemeral(text)) }
	gates := a.opts.Gates
	token, idx, ok := parseCustomID(i.MessageComponentData().CustomID)
	if gates == nil || !ok {
		private("Sorry, that button isn't one I can act on.")
		return
	}
	surface := "thread"
	switch {
	case i.Message != nil && i.Message.Flags&discordgo.MessageFlagsEphemeral != 0:
		surface = "home" // the /neo list, shown only to them
	case i.GuildID == "":
		surface = "dm"
	}
	c, err := gates.AnswerFrom(ctx, token, idx, user, roles, surface)
	if err != nil {
		a.log.Error().Err(err).Msg("discord: answer gate")
	}
	if c.OpenForm {
		a.openForm(ctx, i, c.Gate)
		return
	}
	if c.Redraw && i.Message != nil && c.Gate.Token != "" {
		// Every other copy (the thread's, the approvers' DMs, after a
		// click on one of them or on a /neo page) shows it too.
		defer func() {
			a.showGate(ctx, c.Gate, i.ChannelID+":"+i.Message.ID)
			if g, stale := gates.Newer(ctx, c.Gate); stale {
				// Another click landed while these were redrawn from a
				// vote: the latest state goes last, on every copy.
				a.showGate(ctx, g)
			}
		}()
	}
	switch {
	case c.Redraw && c.Refusal != "":
		a.updateThenTell(ctx, i, c.Gate, c.Refusal)
	case c.Redraw:
		a.respond(ctx, i, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseUpdateMessage, Data: gateData(c.Gate)})
	default:
		private(c.Refusal)
	}
}

// clicker returns who clicked and, in a guild, their role IDs.
func clicker(i *discordgo.Interaction) (user string, roles []string) {
	if i.Member != nil {
		if i.Member.User != nil {
			user = i.Member.User.ID
		}
		return user, i.Member.Roles
	}
	if i.User != nil {
		user = i.User.ID
	}
	return user, nil
}

func ephemeral(text string) *discordgo.InteractionResponse {
	return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: text, Flags: discordgo.MessageFlagsEphemeral,
			AllowedMentions: &discordgo.MessageAllowedMentions{}}}
}

// updateThenTell shows g's outcome on the clicked message, then tells the
// clicker privately why their click changed nothing.
func (a *Adapter) updateThenTell(ctx context.Context, i *discordgo.Interaction, g core.Gate, text string) {
	if !a.respond(ctx, i, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseUpdateMessage, Data: gateData(g)}) {
		return
	}
	_, err := a.s.FollowupMessageCreate(i, false, &discordgo.WebhookParams{Content: text,
		Flags: discordgo.MessageFlagsEphemeral, AllowedMentions: &discordgo.MessageAllowedMentions{}}, call(ctx))
	if err != nil {
		a.log.Warn().Err(err).Msg("discord: private followup")
	}
}

// respond sends the interaction's first response and reports whether it
// was accepted.
func (a *Adapter) respond(ctx context.Context, i *discordgo.Interaction, r *discordgo.InteractionResponse) bool {
	if err := a.s.InteractionRespond(i, r, call(ctx)); err != nil {
		a.log.Warn().Err(err).Str("interaction", i.ID).Msg("discord: respond to a click")
		if r.Type == discordgo.InteractionResponseUpdateMessage && i.Message != nil {
			// Too late for the interaction: edit the message directly.
			content := r.Data.Content
			_ = a.edit(ctx, &discordgo.MessageEdit{Channel: i.ChannelID, ID: i.Message.ID, Content: &content,
				Components: &r.Data.Components, AllowedMentions: &discordgo.MessageAllowedMentions{}})
		}
		return false
	}
	return true
}

// showGate redraws the gate's message and every copy of it from g (its
// outcome with buttons removed, or a pending gate's progress), but for
// the messages in except (channel:ID).
func (a *Adapter) showGate(ctx context.Context, g core.Gate, except ...string) {
	data := gateData(g)
	for _, ref := range append([]string{g.MessageRef}, g.Copies...) {
		channel, id, ok := strings.Cut(ref, ":")
		if !ok || slices.Contains(except, ref) {
			continue
		}
		err := a.edit(ctx, &discordgo.MessageEdit{Channel: channel, ID: id, Content: &data.Content,
			Components: &data.Components, AllowedMentions: &discordgo.MessageAllowedMentions{}})
		if err != nil {
			a.log.Warn().Err(err).Msg("discord: update approval message")
		}
	}
}

// maxQuestion bounds the question shown, leaving room for the header and
// the outcome under Discord's 2,000 characters.
const maxQuestion = 1600

// gateContent renders a gate: the question while pending, then who
// decided and when.
func gateContent(g core.Gate) string {
	question := strings.TrimSpace(g.Question)
	question = mdsplit.Clip(inert(question), maxQuestion, width)
	var header, outcome string
	title := "**" + gatetext.Title(g) + "**"
	switch g.State {
	case core.GatePending:
		header, outcome = "🔒 "+title, gatetext.Who(g)
		if g.Form != nil {
			header = "❓ " + title
		}
	case core.GateApproved:
		header, outcome = "✅ "+title, gatetext.Outcome(g, discordDate, escape)
	case core.GateDenied:
		header, outcome = "❌ "+title, gatetext.Outcome(g, discordDate, escape)
	default:
		header, outcome = "⌛ "+title, gatetext.Outcome(g, discordDate, escape)
	}
	parts := []string{header}
	if question != "" {
		parts = append(parts, question)
	}
	return strings.Join(append(parts, "-# "+outcome), "\n")
}

// gateData is the gate's message as an interaction's message data: its
// content, and its buttons while pending (none after).
func gateData(g core.Gate) *discordgo.InteractionResponseData {
	return &discordgo.InteractionResponseData{Content: gateContent(g), Components: gateButtons(g),
		AllowedMentions: &discordgo.MessageAllowedMentions{}}
}

// gateSend is the gate's first posting, pinging the requester.
func gateSend(g core.Gate) *discordgo.MessageSend {
	m := &discordgo.MessageSend{Content: gateContent(g), Components: gateButtons(g),
		AllowedMentions: &discordgo.MessageAllowedMentions{}}
	if g.Requester != "" {
		m.AllowedMentions.Users = []string{g.Requester}
	}
	return m
}

// gateButtons returns one button per option while the gate is pending (up
// to Discord's 25, five to a row), else an empty list, which removes them.
func gateButtons(g core.Gate) []discordgo.MessageComponent {
	rows := []discordgo.MessageComponent{}
	if g.State != core.GatePending {
		return rows
	}
	var row discordgo.ActionsRow
	most := 25
	if g.Form != nil && g.Form.URL != "" {
		// A URL-mode question: a link button opens the page (Discord
		// sends no interaction for it).
		row.Components = append(row.Components, discordgo.Button{Label: "Open link", Style: discordgo.LinkButton, URL: g.Form.URL})
		most--
	}
	for i, opt := range g.Options {
		if i == most {
			break
		}
		label := gatetext.Label(opt.Label, i, 80)
		style := discordgo.DangerButton
		switch {
		case g.Form != nil && (opt.Label == core.ElicitDecline || opt.Label == core.ElicitCancel):
			style = discordgo.SecondaryButton
		case g.Form != nil, opt.Approves:
			style = discordgo.SuccessButton
		}
		row.Components = append(row.Components, discordgo.Button{Label: label, Style: style,
			CustomID: gatePrefix + gatetext.Value(g.Token, i)})
		if len(row.Components) == 5 {
			rows = append(rows, row)
			row = discordgo.ActionsRow{}
		}
	}
	if len(row.Components) > 0 {
		rows = append(rows, row)
	}
	return rows
}

// discordDate renders t in each reader's own time zone.
func discordDate(t time.Time) string {
	if t.IsZero() {
		t = time.Now()
	}
	return fmt.Sprintf("<t:%d:f>", t.Unix())
}

// escape keeps an option's text from being read as markdown.
func escape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "~", `\~`, "`", "\\`", "|", `\|`, ">", `\>`)
	return r.Replace(s)
}

// parseCustomID splits a button's custom_id, neobot_gate:<token>:<index>.
func parseCustomID(id string) (token string, idx int, ok bool) {
	rest, ok := strings.CutPrefix(id, gatePrefix)
	if !ok {
		return "", 0, false
	}
	return gatetext.ParseValue(rest)
}
