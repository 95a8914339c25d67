package slack

import (
	"cmp"
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/slack-go/slack"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/feedback"
)

// Action IDs of the feedback buttons under an answer and of the reasons
// asked for after a thumbs down.
const (
	feedbackAction = "neo_feedback"
	reasonAction   = "neo_feedback_reason"
)

// feedbackTurn returns the turn whose answer the feedback buttons rate
// (feedback.Rated).
func (a *Adapter) feedbackTurn(ctx context.Context) (string, bool) {
	return feedback.Rated(ctx, a.opts.Rater)
}

// feedbackBlock is the feedback buttons for turn id: Slack's
// feedback_buttons element in a context_actions block, the last block of
// the answer's last message.
func feedbackBlock(id string) slack.Block {
	fb := slack.NewFeedbackButtonsBlockElement(feedbackAction,
		slack.NewFeedbackButton(slack.NewTextBlockObject(slack.PlainTextType, "Good answer", false, false), "up:"+id).
			WithAccessibilityLabel("Mark this answer as good"),
		slack.NewFeedbackButton(slack.NewTextBlockObject(slack.PlainTextType, "Bad answer", false, false), "down:"+id).
			WithAccessibilityLabel("Mark this answer as bad"))
	return slack.NewContextActionsBlock("feedback", fb)
}

// feedbackJSON is feedbackBlock(id) in a JSON array, byte for byte as
// slack-go encodes it, but without reflection: every answer edited in
// place carries one.
func feedbackJSON(id string) string {
	up, _ := json.Marshal("up:" + id) // a string always encodes
	down, _ := json.Marshal("down:" + id)
	out := make([]byte, 0, 512+2*len(up))
	out = append(out, `[{"type":"context_actions","block_id":"feedback","elements":[{"type":"feedback_buttons","action_id":"`+feedbackAction+`",`...)
	out = append(out, `"positive_button":{"text":{"type":"plain_text","text":"Good answer","emoji":false},"value":`...)
	out = append(out, up...)
	out = append(out, `,"accessibility_label":"Mark this answer as good"},"negative_button":{"text":{"type":"plain_text","text":"Bad answer","emoji":false},"value":`...)
	out = append(out, down...)
	return string(append(out, `,"accessibility_label":"Mark this answer as bad"}}]}]`...))
}

// feedbackClick handles a click on feedback buttons or on a reason, and
// reports whether it was one. A thumbs down asks, privately, what was
// wrong; the reason picked is stored with the rating.
func (a *Adapter) feedbackClick(ctx context.Context, cb slack.InteractionCallback, recorded func()) bool {
	act := cb.ActionCallback.BlockActions[0]
	isReason := strings.HasPrefix(act.ActionID, reasonAction)
	if act.ActionID != feedbackAction && !isReason {
		return false
	}
	channel := cmp.Or(cb.Container.ChannelID, cb.Channel.ID)
	threadTS := cmp.Or(cb.Container.ThreadTs, cb.Message.ThreadTimestamp)
	user := cb.User.ID
	say := func(text string) { a.ephemeral(ctx, channel, user, threadTS, text) }
	if a.opts.Rater == nil {
		say("Sorry, ratings are not kept here.")
		return true
	}
	t := core.Thread{Platform: Platform, Workspace: cmp.Or(cb.Team.ID, a.me().TeamID), Channel: channel, ID: threadTS}
	r := core.Rating{Thread: t, User: user, DM: assistantThread(t)}
	kind, turn, _ := strings.Cut(act.Value, ":")
	if isReason {
		var reason string
		turn, reason, _ = strings.Cut(act.Value, "|")
		r.Reason, r.FollowUp, kind = reason, true, "down"
	}
	r.Turn, r.Up = turn, kind == "up"
	if kind != "up" && kind != "down" || turn == "" {
		say("Sorry, that button isn't one I can act on.")
		return true
	}
	err := a.opts.Rater.Rate(ctx, r)
	recorded()
	if err != nil {
		a.log.Warn().Err(err).Str("thread", t.Key()).Msg("slack: rate an answer")
		say("Sorry, I could not record that rating.")
		return true
	}
	switch {
	case r.Up:
		say("Thanks for the feedback!")
	case r.Reason == "":
		a.askReason(ctx, channel, user, threadTS, turn)
	default:
		say("Thanks, noted: " + r.Reason + ".")
	}
	return true
}

// askReason asks the person who gave a thumbs down what was wrong, with a
// button per reason, visible to them alone.
func (a *Adapter) askReason(ctx context.Context, channel, user, threadTS, turn string) {
	var buttons []slack.BlockElement
	for i, reason := range feedback.Reasons {
		buttons = append(buttons, slack.NewButtonBlockElement(reasonAction+"_"+strconv.Itoa(i), turn+"|"+reason,
			slack.NewTextBlockObject(slack.PlainTextType, reason, false, false)))
	}
	blocks := []slack.Block{
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "Thanks. What was wrong with the answer?", false, false), nil, nil),
		slack.NewActionBlock("feedback_reason", buttons...),
	}
	a.postEphemeral(ctx, channel, user, threadTS, "ask why an answer was bad",
		slack.MsgOptionText("Thanks. What was wrong with the answer?", false), slack.MsgOptionBlocks(blocks...))
}
