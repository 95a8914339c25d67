package slack

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/neobot/neobot/adapters/internal/gatetext"
	"github.com/neobot/neobot/adapters/internal/mdsplit"
	"github.com/neobot/neobot/core"
)

const (
	gateBlockID      = "neobot_gate"
	gateActionPrefix = "neobot_gate_"
)

// Approver returns the approver for turns in thread t started by
// requester: it posts the gate's question with one button per option,
// waits for an authorized click, and returns the decision, following
// [core.Gates.Ask]. A turn cancelled while the process is stopping (Run's
// context ended) counts as a shutdown whatever its cause, so the gate stays
// pending and a click after the restart still completes it. With no Gates
// configured it returns nil, which denies.
func (a *Adapter) Approver(t core.Thread, requester string) core.Approver {
	return a.opts.Gates.Approver(t, requester, a.opts.Approvers, gateUI{a})
}

// gateUI shows gates as Block Kit messages.
type gateUI struct{ a *Adapter }

// Stopping reports whether Run is stopping: a turn cancelled then is a
// shutdown (core.Stopper).
func (u gateUI) Stopping() bool { return u.a.isStopping() }

// PostGate posts the pending gate and returns its channel:ts.
func (u gateUI) PostGate(ctx context.Context, g core.Gate) (string, error) {
	m, err := gateMessage(g)
	if err != nil {
		return "", err
	}
	ts, err := u.a.postTS(ctx, g.Thread, m)
	if err != nil {
		return "", err
	}
	return g.Thread.Channel + ":" + ts, nil
}

// FindGate looks for g's message among the thread's replies since the gate
// was opened: the one carrying a button for g's token (128 random bits, so
// no other message can). It lets a turn resumed after a crash reuse the
// approval it posted instead of posting it twice.
func (u gateUI) FindGate(ctx context.Context, g core.Gate) (string, bool, error) {
	var msgs []slack.Message
	err := u.a.retry(ctx, "conversations.replies", func(ctx context.Context) (err error) {
		msgs, _, _, err = u.a.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
			ChannelID: g.Thread.Channel, Timestamp: g.Thread.ID,
			Oldest: strconv.FormatInt(g.Created.Unix()-1, 10) + ".000000", Inclusive: true, Limit: 200,
		})
		return err
	})
	if err != nil {
		return "", false, fmt.Errorf("slack: find approval message: %w", err)
	}
	for _, m := range msgs {
		for _, b := range m.Blocks.BlockSet {
			actions, ok := b.(*slack.ActionBlock)
			if !ok || actions.Elements == nil {
				continue
			}
			for _, el := range actions.Elements.ElementSet {
				if btn, ok := el.(*slack.ButtonBlockElement); ok {
					if token, _, ok := gatetext.ParseValue(btn.Value); ok && token == g.Token {
						return g.Thread.Channel + ":" + m.Timestamp, true, nil
					}
				}
			}
		}
	}
	return "", false, nil
}

// ShowGate edits the gate's message to show its outcome.
func (u gateUI) ShowGate(ctx context.Context, g core.Gate) { u.a.showGate(ctx, g, "", "") }

// click handles a button click on a gate message.
func (a *Adapter) click(ctx context.Context, cb slack.InteractionCallback, recorded func()) {
	if a.feedbackClick(ctx, cb, recorded) || a.homeClick(ctx, cb) {
		return
	}
	act := cb.ActionCallback.BlockActions[0]
	if !strings.HasPrefix(act.ActionID, gateActionPrefix) {
		return
	}
	channel := cmp.Or(cb.Container.ChannelID, cb.Channel.ID)
	msgTS := cmp.Or(cb.Container.MessageTs, cb.Message.Timestamp)
	threadTS := cmp.Or(cb.Container.ThreadTs, cb.Message.ThreadTimestamp)
	user := cb.User.ID
	say := func(text string) { a.ephemeral(ctx, channel, user, threadTS, text) }
	if cb.View.Type == slack.VTHomeTab { // clicked on the Home tab: the answer is the tab, published again
		say = func(text string) { a.noteHome(cb.Team.ID, user, text) }
		defer a.publishHome(ctx, cb.Team.ID, user)
	}

	gates := a.opts.Gates
	token, idx, ok := gatetext.ParseValue(act.Value)
	if gates == nil || !ok {
		say("Sorry, that button isn't one I can act on.")
		return
	}
	c, err := gates.Answer(ctx, token, idx, user, nil)
	if err != nil {
		a.log.Error().Err(err).Msg("slack: answer gate") // c.Refusal asks the clicker to click again
	}
	recorded() // the decision is stored (or refused): Slack may take the click as handled
	if c.OpenForm {
		if err := a.openForm(ctx, cb.TriggerID, c.Gate); err != nil {
			a.log.Warn().Err(err).Msg("slack: open a question's form")
			say("Sorry, I couldn't open the form just now. Please click again.")
		}
		return
	}
	if c.Redraw && (c.Gate.Token != "" || cb.Message.BotID == a.me().BotID && a.me().BotID != "") {
		a.showGate(ctx, c.Gate, channel, msgTS)
	}
	if c.Refusal != "" {
		say(c.Refusal)
	}
}

// showGate edits the gate's message to show its outcome, buttons removed.
// channel and ts locate the message; "" takes them from the gate's MessageRef.
func (a *Adapter) showGate(ctx context.Context, g core.Gate, channel, ts string) {
	if channel == "" || ts == "" {
		var ok bool
		if channel, ts, ok = strings.Cut(g.MessageRef, ":"); !ok {
			return
		}
	}
	m, err := gateMessage(g)
	if err == nil {
		err = a.update(ctx, channel, ts, m)
	}
	if err != nil {
		a.log.Warn().Err(err).Msg("slack: update approval message")
	}
}

// gateMessage renders a gate: the question with its buttons while pending,
// then who decided and when.
func gateMessage(g core.Gate) (message, error) {
	fallback, blocks := gateBlocks(g)
	return blockMessage(fallback, blocks...)
}

// gateBlocks is the gate's message as fallback text and Block Kit blocks.
func gateBlocks(g core.Gate) (fallback string, blocks []slack.Block) {
	question := mdsplit.Clip(mrkdwn(g.Question), 2800, mdsplit.Bytes)
	title := gatetext.Title(g)
	header := ":lock: *" + title + "*"
	if g.Form != nil {
		header = ":question: *" + title + "*"
	}
	var outcome string
	switch g.State {
	case core.GatePending:
		fallback = mdsplit.Clip(title+": "+g.Question, 3000, mdsplit.Bytes)
	case core.GateApproved:
		header = ":white_check_mark: *" + title + "*"
		outcome = ":white_check_mark: " + gatetext.Outcome(g, slackDate, escape)
	case core.GateDenied:
		header = ":x: *" + title + "*"
		outcome = ":x: " + gatetext.Outcome(g, slackDate, escape)
	default:
		header = ":hourglass: *" + title + "*"
		outcome = ":hourglass: " + gatetext.Outcome(g, slackDate, escape)
	}
	if fallback == "" {
		fallback = outcome
	}
	if question != "" {
		blocks = append(blocks, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, header+"\n"+question, false, false), nil, nil))
	}
	if g.State == core.GatePending {
		note := gatetext.Who(g)
		blocks = append(blocks, slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, note, false, false)))
		var buttons []slack.BlockElement
		for i, opt := range g.Options[:min(len(g.Options), maxButtons)] {
			b := slack.NewButtonBlockElement(gateActionPrefix+strconv.Itoa(i), gatetext.Value(g.Token, i),
				slack.NewTextBlockObject(slack.PlainTextType, gatetext.Label(opt.Label, i, 75), false, false))
			switch {
			case g.Form != nil && (opt.Label == core.ElicitDecline || opt.Label == core.ElicitCancel):
				// A question's refusals are plain; its answers primary.
			case g.Form != nil, opt.Approves:
				b.Style = slack.StylePrimary
			default:
				b.Style = slack.StyleDanger
			}
			buttons = append(buttons, b)
		}
		blocks = append(blocks, slack.NewActionBlock(gateBlockID, buttons...))
	} else {
		blocks = append(blocks, slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, outcome, false, false)))
	}
	return fallback, blocks
}

// maxButtons is the most elements Slack takes in one actions block.
const maxButtons = 25

// slackDate renders t in each reader's own time zone.
func slackDate(t time.Time) string {
	if t.IsZero() {
		t = time.Now()
	}
	return fmt.Sprintf("<!date^%d^{date_short_pretty} at {time}|%s>", t.Unix(), t.UTC().Format("2006-01-02 15:04 UTC"))
}
