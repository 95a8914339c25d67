package slack

import (
	"cmp"
	"context"
	"fmt"
	"slices"
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
	// linkActionID is a URL-mode question's link button: Slack opens the
	// page and tells neobot of the click, which decides nothing.
	linkActionID = "neobot_link"
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
func (u gateUI) Stopping() bool { return u.a.work.Stopping() }

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

// ShowGate edits the gate's message, and its copies, to show its outcome.
func (u gateUI) ShowGate(ctx context.Context, g core.Gate) { u.a.showGate(ctx, g, "", "") }

// NotifyGate posts text in the gate's thread as a notice, and sends each
// of people a copy of the question in their DM with Neo (the Messages
// tab), returning the copies' channel:ts.
func (u gateUI) NotifyGate(ctx context.Context, g core.Gate, text string, people []string) []string {
	if text != "" {
		if err := u.a.notice(ctx, g.Thread, text); err != nil {
			u.a.log.Warn().Err(err).Msg("slack: approval notice")
		}
	}
	var copies []string
	for _, p := range people {
		ref, err := u.a.copyGate(ctx, g, p)
		if err != nil {
			u.a.log.Warn().Err(err).Str("user", p).Msg("slack: send an approval copy")
			continue
		}
		copies = append(copies, ref)
	}
	return copies
}

// GroupMembers lists a Slack user group's members (core.GroupResolver).
func (u gateUI) GroupMembers(ctx context.Context, group string) ([]string, error) {
	var members []string
	err := u.a.retry(ctx, "usergroups.users.list", func(ctx context.Context) (err error) {
		members, err = u.a.api.GetUserGroupMembersContext(ctx, group)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("slack: members of user group %s: %w", group, err)
	}
	return members, nil
}

// copyGate posts a copy of the pending gate g in user's DM with Neo and
// returns its channel:ts.
func (a *Adapter) copyGate(ctx context.Context, g core.Gate, user string) (string, error) {
	var channel string
	err := a.retry(ctx, "conversations.open", func(ctx context.Context) error {
		ch, _, _, err := a.api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{user}})
		if err == nil {
			channel = ch.ID
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("open DM: %w", err)
	}
	m, err := gateMessage(g)
	if err != nil {
		return "", err
	}
	var ts string
	err = a.retry(ctx, "chat.postMessage", func(ctx context.Context) (err error) {
		ts, err = a.chat(ctx, channel, "", "", m)
		return err
	})
	if err != nil {
		return "", err
	}
	return channel + ":" + ts, nil
}

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
	surface := "thread"
	switch {
	case cb.View.Type == slack.VTHomeTab:
		surface = "home"
	case strings.HasPrefix(channel, "D"):
		surface = "dm"
	}
	c, err := gates.AnswerFrom(ctx, token, idx, user, nil, surface)
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
		if cb.View.Type != slack.VTHomeTab && c.Gate.Token != "" {
			// Every other copy (the thread's, the approvers' DMs) too.
			a.showGate(ctx, c.Gate, "", "", channel+":"+msgTS)
		}
		if g, stale := gates.Newer(ctx, c.Gate); stale {
			// Another click landed while these were redrawn from a vote:
			// its redraw may have come first, so the latest state goes last.
			a.showGate(ctx, g, "", "")
		}
	}
	if c.Refusal != "" {
		say(c.Refusal)
	}
}

// showGate redraws the gate's message from g: its outcome with buttons
// removed, or a pending gate's progress. channel and ts locate the
// message; "" redraws the gate's MessageRef and every copy of it, but for
// the refs in except.
func (a *Adapter) showGate(ctx context.Context, g core.Gate, channel, ts string, except ...string) {
	m, err := gateMessage(g)
	if err != nil {
		a.log.Warn().Err(err).Msg("slack: render approval message")
		return
	}
	refs := []string{channel + ":" + ts}
	if channel == "" || ts == "" {
		refs = append([]string{g.MessageRef}, g.Copies...)
	}
	for _, ref := range refs {
		channel, ts, ok := strings.Cut(ref, ":")
		if !ok || channel == "" || ts == "" || slices.Contains(except, ref) {
			continue
		}
		if err := a.update(ctx, channel, ts, m); err != nil {
			a.log.Warn().Err(err).Msg("slack: update approval message")
		}
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
		if g.Form != nil && g.Form.URL != "" {
			// A URL-mode question: a link button opens the page (its
			// click is Slack's, not a decision).
			link := slack.NewButtonBlockElement(linkActionID, "", slack.NewTextBlockObject(slack.PlainTextType, "Open link", false, false))
			link.URL = g.Form.URL
			buttons = append(buttons, link)
		}
		for i, opt := range g.Options[:min(len(g.Options), maxButtons-len(buttons))] {
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
