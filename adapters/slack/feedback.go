package slack

import (
	"cmp"
	"context"
	"strconv"
	"strings"

	"github.com/slack-go/slack"

	"github.com/neobot/neobot/core"
)

// Action IDs of the feedback buttons under an answer and of the reasons
// asked for after a thumbs down.
const (
	feedbackAction = "neo_feedback"
	reasonAction   = "neo_feedback_reason"
)

// feedbackReasons are what a thumbs down is asked to say, as buttons.
var feedbackReasons = []string{"Wrong or made up", "Incomplete", "Did not do what I asked", "Hard to follow"}

// offerFeedback posts the feedback buttons for the turn's answer: Slack's
// feedback_buttons element in a context_actions block, right under the
// answer. Without a Rater or a turn there is nothing to rate.
func (r reporter) offerFeedback(ctx context.Context) {
	turn, ok := core.TurnFrom(ctx)
	if r.a.opts.Rater == nil || !ok || turn.Inbound.EventID == "" {
		return
	}
	id := turn.Inbound.EventID
	fb := slack.NewFeedbackButtonsBlockElement(feedbackAction,
		slack.NewFeedbackButton(slack.NewTextBlockObject(slack.PlainTextType, "Good answer", false, false), "up:"+id).
			WithAccessibilityLabel("Mark this answer as good"),
		slack.NewFeedbackButton(slack.NewTextBlockObject(slack.PlainTextType, "Bad answer", false, false), "down:"+id).
			WithAccessibilityLabel("Mark this answer as bad"))
	m, err := blockMessage("Was this answer helpful?", slack.NewContextActionsBlock("feedback", fb))
	if err == nil {
		err = r.a.post(ctx, r.t, m)
	}
	if err != nil {
		r.a.log.Warn().Err(err).Str("thread", r.t.Key()).Msg("slack: offer feedback buttons")
	}
}

// feedbackClick handles a click on feedback buttons or on a reason, and
// reports whether it was one. A thumbs down asks, privately, what was
// wrong; the reason picked is stored with the rating.
func (a *Adapter) feedbackClick(ctx context.Context, cb slack.InteractionCallback) bool {
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
	if err := a.opts.Rater.Rate(ctx, r); err != nil {
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
	for i, reason := range feedbackReasons {
		buttons = append(buttons, slack.NewButtonBlockElement(reasonAction+"_"+strconv.Itoa(i), turn+"|"+reason,
			slack.NewTextBlockObject(slack.PlainTextType, reason, false, false)))
	}
	blocks := []slack.Block{
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "Thanks. What was wrong with the answer?", false, false), nil, nil),
		slack.NewActionBlock("feedback_reason", buttons...),
	}
	opts := []slack.MsgOption{slack.MsgOptionText("Thanks. What was wrong with the answer?", false), slack.MsgOptionBlocks(blocks...)}
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	err := a.retry(ctx, "chat.postEphemeral", func(ctx context.Context) error {
		_, err := a.api.PostEphemeralContext(ctx, channel, user, opts...)
		return err
	})
	if err != nil {
		a.log.Warn().Err(err).Str("channel", channel).Msg("slack: ask why an answer was bad")
	}
}
