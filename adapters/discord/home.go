package discord

import (
	"context"
	"strconv"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/neobot/neobot/adapters/internal/gatetext"
	"github.com/neobot/neobot/adapters/internal/home"
	"github.com/neobot/neobot/adapters/internal/mdsplit"
	"github.com/neobot/neobot/core"
)

// /neo is each person's own page, answered privately (ephemeral) where
// they type it: what Neo may do in this server, the approvals waiting for
// their click (the gate's own buttons, decided through the same gate),
// their accounts on per-user MCP servers with Connect and Disconnect, and
// their recent spends. It is Slack's Home tab for Discord.

// Home is what each person's /neo page is read from: the skills, the
// per_user MCP servers, the spend ledger, the daily budgets and the main
// model ([Options] embeds it).
type Home = home.Parts

// homeCommand is the slash command's name.
const homeCommand = "neo"

// Custom ID prefixes of the page's account buttons; the server alias
// follows.
const (
	homeConnect    = "neobot_home_connect:"
	homeDisconnect = "neobot_home_disconnect:"
)

// maxHomeApprovals is how many approvals the page shows with buttons:
// Discord takes five action rows, one is kept for the accounts.
const maxHomeApprovals = 4

// homeCommands are the application commands neobot registers.
func homeCommands() []*discordgo.ApplicationCommand {
	return []*discordgo.ApplicationCommand{{
		Name: homeCommand, Type: discordgo.ChatApplicationCommand,
		Description: "Your Neo: what it may do here, approvals waiting for you, your accounts and spends",
	}}
}

// registerCommands replaces the application's global commands with
// neobot's, once per Run: the list is the same every time.
func (a *Adapter) registerCommands(appID string) {
	if appID == "" || !a.registered.CompareAndSwap(false, true) {
		return
	}
	a.work.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), submitTimeout)
		defer cancel()
		if _, err := a.s.ApplicationCommandBulkOverwrite(appID, "", homeCommands(), call(ctx)); err != nil {
			a.registered.Store(false) // try again at the next connection
			a.log.Warn().Err(err).Msg("discord: register the /neo command (the bot needs the applications.commands scope)")
		}
	})
}

// onHomeCommand answers /neo with the person's page, privately.
func (a *Adapter) onHomeCommand(ctx context.Context, i *discordgo.Interaction) {
	a.respond(ctx, i, a.homeResponse(ctx, i, ""))
}

// homeResponse is the person's page as a private reply, note first.
func (a *Adapter) homeResponse(ctx context.Context, i *discordgo.Interaction, note string) *discordgo.InteractionResponse {
	user, roles := clicker(i)
	workspace := i.GuildID
	if workspace == "" {
		workspace = DMWorkspace
	}
	page := home.Build(ctx, a.opts.Home.Sources(a.opts.Gates), home.Person{Platform: Platform, Workspace: workspace, User: user, Roles: roles})
	if i.GuildID != "" {
		// Asked in a channel: how Neo is governed there, for anyone who
		// can see the channel (a thread counts as its parent).
		channel := i.ChannelID
		if info, err := a.channel(ctx, channel); err == nil && info.thread {
			channel = info.parent
		}
		in := core.Inbound{Thread: core.Thread{Platform: Platform, Workspace: i.GuildID, Channel: channel, ID: i.ChannelID}}
		page.Settings = home.Settings(ctx, a.governed(), in)
	}
	content, components := homePage(page, note, a.opts.Spends != nil)
	return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: content, Components: components,
			Flags: discordgo.MessageFlagsEphemeral, AllowedMentions: &discordgo.MessageAllowedMentions{}}}
}

// governed is what a channel's settings on /neo are read from.
func (a *Adapter) governed() home.Governed {
	return a.opts.Home.Governed(a.opts.Approvers, func(id string) string {
		if role, ok := strings.CutPrefix(id, "role:"); ok {
			return "<@&" + role + ">"
		}
		return "<@" + id + ">"
	})
}

// homePage renders a page as a message of at most 2,000 characters and
// five action rows: one per approval shown, one for the accounts;
// spends says whether the ledger is there to show.
func homePage(page home.Page, note string, spends bool) (string, []discordgo.MessageComponent) {
	var b strings.Builder
	if note != "" {
		b.WriteString(note + "\n\n")
	}
	for _, p := range page.Problems {
		b.WriteString("⚠️ " + p + "\n")
	}
	if len(page.Settings) > 0 {
		b.WriteString("**How Neo is set up in this channel**\n" + strings.Join(page.Settings, " ") + "\n\n")
	}
	b.WriteString("**What Neo may do here**\n")
	for _, sk := range page.Skills {
		where := sk.Place(func(c string) string { return "<#" + c + ">" })
		b.WriteString("- **" + where + "** (skill `" + sk.Name + "`): " + strings.Join(sk.Does, " ") + "\n")
	}
	rows := []discordgo.MessageComponent{}
	b.WriteString("\n**Approvals waiting for you**\n")
	if len(page.Approvals) == 0 {
		b.WriteString("Nothing is waiting for your click.\n")
	}
	shown := page.Approvals[:min(len(page.Approvals), maxHomeApprovals)]
	for n, g := range shown {
		question := mdsplit.Clip(inert(strings.TrimSpace(g.Question)), 300, width)
		line := "🔒 **" + gatetext.Title(g) + "**: " + question
		if p := g.Progress(); p != "" {
			line += " (" + p + ")"
		}
		if link := gateLink(g); link != "" {
			line += " (" + link + ")"
		}
		b.WriteString(strconv.Itoa(n+1) + ". " + line + "\n")
		buttons := gateButtons(g)
		if len(buttons) > 0 {
			rows = append(rows, buttons[0]) // the first five options: approve and deny
		}
	}
	if more := len(page.Approvals) - len(shown) + page.MoreApprovals; more > 0 {
		b.WriteString(strconv.Itoa(more) + " more wait for you in their threads.\n")
	}
	if len(page.Accounts) > 0 {
		b.WriteString("\n**Your connected accounts**\n")
		var row discordgo.ActionsRow
		for _, acct := range page.Accounts {
			state, label, id, style := "not connected", "Connect ", homeConnect, discordgo.PrimaryButton
			if acct.Connected {
				state, label, id, style = "connected: Neo's calls to it act as you", "Disconnect ", homeDisconnect, discordgo.DangerButton
			}
			b.WriteString("- **" + acct.Alias + "**: " + state + "\n")
			if len(row.Components) < 5 {
				row.Components = append(row.Components, discordgo.Button{Label: mdsplit.Clip(label+acct.Alias, 80, width),
					Style: style, CustomID: mdsplit.Clip(id+acct.Alias, 100, func(s string) int { return len(s) })})
			}
		}
		rows = append(rows, row)
	}
	if spends {
		b.WriteString("\n**Your recent spends**\n")
		if len(page.Spends) == 0 {
			b.WriteString("You have asked for no spends in the last 30 days.\n")
		}
		for _, s := range page.Spends {
			line := "- " + home.SpendLine(s)
			if s.Thread.Channel != "" {
				line += " <#" + s.Thread.Channel + ">"
			}
			b.WriteString(line + "\n")
		}
	}
	return mdsplit.Clip(strings.TrimSpace(b.String()), maxMessageChars, width), rows
}

// gateLink links to a gate's message (its thread when not posted yet).
func gateLink(g core.Gate) string {
	guild := g.Thread.Workspace
	if guild == "" || guild == DMWorkspace {
		guild = "@me"
	}
	if ch, id, ok := strings.Cut(g.MessageRef, ":"); ok {
		return "https://discord.com/channels/" + guild + "/" + ch + "/" + id
	}
	if g.Thread.ID != "" { // Discord's thread (or DM) is the channel Neo posts in
		return "https://discord.com/channels/" + guild + "/" + g.Thread.ID
	}
	return ""
}

// homeClick handles the page's Connect and Disconnect buttons: the answer
// is the page again, privately, with what happened on top (and, for
// Connect, the person's own link).
func (a *Adapter) homeClick(ctx context.Context, i *discordgo.Interaction) {
	id := i.MessageComponentData().CustomID
	user, _ := clicker(i)
	workspace := i.GuildID
	if workspace == "" {
		workspace = DMWorkspace
	}
	place := home.PlaceOf(home.Person{Platform: Platform, Workspace: workspace, User: user})
	var note string
	switch {
	case a.opts.Accounts == nil:
		note = "Sorry, no tool server here connects to your own account."
	case strings.HasPrefix(id, homeDisconnect):
		alias := strings.TrimPrefix(id, homeDisconnect)
		if err := a.opts.Accounts.Disconnect(ctx, alias, place); err != nil {
			a.log.Warn().Err(err).Str("server", alias).Msg("discord: disconnect an account from /neo")
			note = "Sorry, I couldn't disconnect your **" + alias + "** account just now. Please try again."
		} else {
			note = "✅ Your **" + alias + "** account is disconnected: Neo no longer holds its token."
		}
	default:
		alias := strings.TrimPrefix(id, homeConnect)
		link, err := a.opts.Accounts.Connect(ctx, alias, place)
		if err != nil {
			a.log.Warn().Err(err).Str("server", alias).Msg("discord: connect an account from /neo")
			note = "Sorry, I couldn't start connecting **" + alias + "** just now. Please try again."
		} else {
			// The reply is ephemeral: only this person sees the link.
			note = "🔗 Connect your **" + alias + "** account: <" + link + "> (it works once, for 15 minutes, and only for you; don't forward it)."
		}
	}
	r := a.homeResponse(ctx, i, note)
	r.Type = discordgo.InteractionResponseUpdateMessage
	a.respond(ctx, i, r)
}
