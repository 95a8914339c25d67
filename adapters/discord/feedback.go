package discord

import (
	"context"
	"strconv"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/feedback"
)

// feedbackPrefix starts the custom_id of the feedback buttons under an
// answer (neo_fb:up:<turn>, neo_fb:down:<turn>) and of the reasons asked
// for after a thumbs down (neo_fb:why<i>:<turn>).
const feedbackPrefix = "neo_fb:"

// feedbackTurn returns the turn whose answer the feedback buttons rate
// (feedback.Rated).
func (a *Adapter) feedbackTurn(ctx context.Context) (string, bool) {
	return feedback.Rated(ctx, a.opts.Rater)
}

// feedbackRow is the 👍/👎 buttons for turn id, under the answer in its
// last message; nil for no turn.
func feedbackRow(id string) []discordgo.MessageComponent {
	if id == "" {
		return nil
	}
	return []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
		discordgo.Button{Label: "Good answer", Emoji: &discordgo.ComponentEmoji{Name: "👍"}, Style: discordgo.SecondaryButton, CustomID: feedbackPrefix + "up:" + id},
		discordgo.Button{Label: "Bad answer", Emoji: &discordgo.ComponentEmoji{Name: "👎"}, Style: discordgo.SecondaryButton, CustomID: feedbackPrefix + "down:" + id},
	}}}
}

// feedbackClick records a click on feedback buttons or on a reason. A
// thumbs down asks, privately, what was wrong; the reason picked is
// stored with the rating.
func (a *Adapter) feedbackClick(ctx context.Context, i *discordgo.Interaction) {
	user, _ := clicker(i)
	private := func(text string) { a.respond(ctx, i, ephemeral(text)) }
	kind, turn, ok := strings.Cut(strings.TrimPrefix(i.MessageComponentData().CustomID, feedbackPrefix), ":")
	if a.opts.Rater == nil || !ok || turn == "" {
		private("Sorry, that button isn't one I can act on.")
		return
	}
	t := core.Thread{Platform: Platform, Workspace: i.GuildID, Channel: i.ChannelID, ID: i.ChannelID}
	if i.GuildID == "" {
		t.Workspace = DMWorkspace
	} else if info, err := a.channel(ctx, i.ChannelID); err == nil && info.thread {
		t.Channel = info.parent
	}
	r := core.Rating{Thread: t, Turn: turn, User: user, DM: i.GuildID == "", Up: kind == "up"}
	if n, found := strings.CutPrefix(kind, "why"); found {
		k, err := strconv.Atoi(n)
		if err != nil || k < 0 || k >= len(feedback.Reasons) {
			private("Sorry, that button isn't one I can act on.")
			return
		}
		r.Reason, r.FollowUp = feedback.Reasons[k], true
	} else if kind != "up" && kind != "down" {
		private("Sorry, that button isn't one I can act on.")
		return
	}
	if err := a.opts.Rater.Rate(ctx, r); err != nil {
		a.log.Warn().Err(err).Str("thread", t.Key()).Msg("discord: rate an answer")
		private("Sorry, I could not record that rating.")
		return
	}
	switch {
	case r.Up:
		private("Thanks for the feedback!")
	case r.Reason != "":
		private("Thanks, noted: " + r.Reason + ".")
	default:
		var buttons []discordgo.MessageComponent
		for k, reason := range feedback.Reasons {
			buttons = append(buttons, discordgo.Button{Label: reason, Style: discordgo.SecondaryButton,
				CustomID: feedbackPrefix + "why" + strconv.Itoa(k) + ":" + turn})
		}
		a.respond(ctx, i, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Content: "Thanks. What was wrong with the answer?", Flags: discordgo.MessageFlagsEphemeral,
				Components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: buttons}}, AllowedMentions: &discordgo.MessageAllowedMentions{}}})
	}
}
