package slack

import (
	"context"
	"strconv"
	"strings"

	"github.com/slack-go/slack"

	"github.com/neobot/neobot/adapters/internal/gatetext"
	"github.com/neobot/neobot/adapters/internal/home"
	"github.com/neobot/neobot/adapters/internal/mdsplit"
	"github.com/neobot/neobot/core"
)

// The Home tab is each person's own page, published with views.publish
// when they open it and again after they act on it: what Neo may do in
// this workspace, the approvals waiting for their click (the same buttons
// as in the thread, answered by the same gate), their accounts on
// per-user MCP servers, and their recent spends. Only they see it.

// Home is what each person's Home tab is read from: the skills, the
// per_user MCP servers, the spend ledger, the daily budgets and the main
// model ([Options] embeds it).
type Home = home.Parts

// Action IDs of the Home tab's own buttons.
const (
	homeConnect    = "neobot_home_connect"
	homeDisconnect = "neobot_home_disconnect"
)

// homeKey keys a person's pending Home notice.
func homeKey(team, user string) string { return team + "/" + user }

// noteHome keeps a sentence for the top of user's next Home tab: the
// answer to what they just did there.
func (a *Adapter) noteHome(team, user, text string) {
	a.homeNotes.Put(homeKey(cmpOr(team, a.me().TeamID), user), text)
}

// publishHome publishes user's Home tab.
func (a *Adapter) publishHome(ctx context.Context, team, user string) {
	if user == "" {
		return
	}
	team = cmpOr(team, a.me().TeamID)
	page := home.Build(ctx, a.opts.Home.Sources(a.opts.Gates), home.Person{Platform: Platform, Workspace: team, User: user})
	// The workspace's settings: the Home tab is not in a channel, and a
	// channel's own settings are for its members only.
	page.Settings = home.Settings(ctx, a.opts.Home.Governed(a.opts.Approvers, mentionOf),
		core.Inbound{Thread: core.Thread{Platform: Platform, Workspace: team}, Org: a.me().Enterprise})
	note, _ := a.homeNotes.Get(homeKey(team, user))
	a.homeNotes.Drop(homeKey(team, user))
	view := slack.HomeTabViewRequest{Type: slack.VTHomeTab, CallbackID: "neobot_home",
		Blocks: slack.Blocks{BlockSet: a.homeBlocks(page, note)}}
	err := a.retry(ctx, "views.publish", func(ctx context.Context) error {
		_, err := a.api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: user, View: view})
		return err
	})
	if err != nil {
		a.log.Warn().Err(err).Str("user", user).Msg("slack: publish the Home tab")
	}
}

// mentionOf writes an approver for Slack: a person as <@U…>, a user
// group ("group:S…") as <!subteam^S…>, with \x00 and \x01 for the
// brackets, which homeBlocks puts back after escaping the page's text.
func mentionOf(id string) string {
	if g, ok := strings.CutPrefix(id, "group:"); ok {
		return "\x00!subteam^" + g + "\x01"
	}
	return "\x00@" + id + "\x01"
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// homeBlocks renders a page: at most 1 + 4 headers, MaxSkills,
// 2 × MaxApprovals + 1, 2 × MaxAccounts and 1 blocks, well under the 100
// Slack takes; every text within its block's limit.
func (a *Adapter) homeBlocks(page home.Page, note string) []slack.Block {
	section := func(text string) slack.Block {
		return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, clip(text, 3000), false, false), nil, nil)
	}
	header := func(text string) slack.Block {
		return slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, text, false, false))
	}
	var blocks []slack.Block
	if note != "" {
		blocks = append(blocks, section(note))
	}
	for _, p := range page.Problems {
		blocks = append(blocks, section(":warning: "+escape(p)))
	}

	if len(page.Settings) > 0 {
		text := strings.NewReplacer("\x00", "<", "\x01", ">").Replace(escape(strings.Join(page.Settings, " ")))
		blocks = append(blocks, header("How Neo is set up in this workspace"), section(text))
	}
	blocks = append(blocks, header("What Neo may do here"))
	for _, sk := range page.Skills {
		// Slack shows each channel's name to its members.
		where := escape(sk.Place(func(c string) string { return "\x00" + c + "\x01" }))
		where = strings.NewReplacer("\x00", "<#", "\x01", ">").Replace(where)
		blocks = append(blocks, section("*"+where+"* (skill `"+escape(sk.Name)+"`)\n"+
			escape(strings.Join(sk.Does, " "))))
	}

	blocks = append(blocks, header("Approvals waiting for you"))
	if len(page.Approvals) == 0 {
		blocks = append(blocks, section("Nothing is waiting for your click."))
	}
	for n, g := range page.Approvals {
		question := mdsplit.Clip(mrkdwn(g.Question), 2400, mdsplit.Bytes)
		link := a.permalink(g)
		text := ":lock: *" + escape(gatetext.Title(g)) + "*\n" + question
		if p := g.Progress(); p != "" {
			text += "\n_" + p + "_"
		}
		if link != "" {
			text += "\n<" + escape(link) + "|Open the thread>"
		}
		blocks = append(blocks, section(text))
		var buttons []slack.BlockElement
		for i, opt := range g.Options[:min(len(g.Options), 5)] {
			b := slack.NewButtonBlockElement(gateActionPrefix+strconv.Itoa(i), gatetext.Value(g.Token, i),
				slack.NewTextBlockObject(slack.PlainTextType, gatetext.Label(opt.Label, i, 75), false, false))
			if opt.Approves {
				b.Style = slack.StylePrimary
			} else {
				b.Style = slack.StyleDanger
			}
			buttons = append(buttons, b)
		}
		blocks = append(blocks, slack.NewActionBlock(gateBlockID+"_home_"+strconv.Itoa(n), buttons...))
	}
	if page.MoreApprovals > 0 {
		blocks = append(blocks, section(strconv.Itoa(page.MoreApprovals)+" more wait for you in their threads."))
	}

	if len(page.Accounts) > 0 { // only when some server takes each person's own account
		blocks = append(blocks, header("Your connected accounts"))
		for _, acct := range page.Accounts {
			state, label, action := "not connected", "Connect", homeConnect
			if acct.Connected {
				state, label, action = "connected: Neo's calls to it act as you", "Disconnect", homeDisconnect
			}
			blocks = append(blocks, section("*"+escape(acct.Alias)+"*: "+state))
			b := slack.NewButtonBlockElement(action, acct.Alias, slack.NewTextBlockObject(slack.PlainTextType, label+" "+clip(acct.Alias, 60), false, false))
			if acct.Connected {
				b.Style = slack.StyleDanger
			}
			blocks = append(blocks, slack.NewActionBlock("neobot_home_account_"+clip(acct.Alias, 200), b))
		}
	}

	if a.opts.Spends != nil {
		blocks = append(blocks, header("Your recent spends"))
		if len(page.Spends) == 0 {
			blocks = append(blocks, section("You have asked for no spends in the last 30 days."))
		} else {
			var lines []string
			for _, s := range page.Spends {
				line := "• " + escape(home.SpendLine(s))
				if link := a.threadLink(s.Thread, ""); link != "" {
					line += " <" + escape(link) + "|thread>"
				}
				lines = append(lines, line)
			}
			blocks = append(blocks, section(strings.Join(lines, "\n")))
		}
	}
	return blocks
}

// clip cuts s to at most n bytes on a rune boundary.
func clip(s string, n int) string { return cutRunes(s, n) }

// permalink links to a gate's message in its thread, else to the thread.
func (a *Adapter) permalink(g core.Gate) string {
	ts := ""
	if ch, msg, ok := strings.Cut(g.MessageRef, ":"); ok && ch == g.Thread.Channel {
		ts = msg
	}
	return a.threadLink(g.Thread, ts)
}

// threadLink is the web link to message ts (the thread's root when "")
// in thread t, from the workspace's URL auth.test told; "" before Run.
func (a *Adapter) threadLink(t core.Thread, ts string) string {
	base := a.me().URL
	if base == "" || t.Channel == "" || t.ID == "" {
		return ""
	}
	if ts == "" {
		ts = t.ID
	}
	link := strings.TrimSuffix(base, "/") + "/archives/" + t.Channel + "/p" + strings.Replace(ts, ".", "", 1)
	if ts != t.ID {
		link += "?thread_ts=" + t.ID + "&cid=" + t.Channel
	}
	return link
}

// homeClick handles the Home tab's own buttons (Connect, Disconnect) and
// reports whether the click was one.
func (a *Adapter) homeClick(ctx context.Context, cb slack.InteractionCallback) bool {
	act := cb.ActionCallback.BlockActions[0]
	if act.ActionID != homeConnect && act.ActionID != homeDisconnect {
		return false
	}
	team, user, alias := cmpOr(cb.Team.ID, a.me().TeamID), cb.User.ID, act.Value
	defer a.publishHome(ctx, team, user)
	if a.opts.Accounts == nil {
		a.noteHome(team, user, "Sorry, no tool server here connects to your own account.")
		return true
	}
	place := home.PlaceOf(home.Person{Platform: Platform, Workspace: team, User: user})
	if act.ActionID == homeDisconnect {
		if err := a.opts.Accounts.Disconnect(ctx, alias, place); err != nil {
			a.log.Warn().Err(err).Str("server", alias).Msg("slack: disconnect an account from the Home tab")
			a.noteHome(team, user, "Sorry, I couldn't disconnect your *"+escape(alias)+"* account just now. Please try again.")
			return true
		}
		a.noteHome(team, user, ":white_check_mark: Your *"+escape(alias)+"* account is disconnected: Neo no longer holds its token.")
		return true
	}
	link, err := a.opts.Accounts.Connect(ctx, alias, place)
	if err != nil {
		a.log.Warn().Err(err).Str("server", alias).Msg("slack: connect an account from the Home tab")
		a.noteHome(team, user, "Sorry, I couldn't start connecting *"+escape(alias)+"* just now. Please try again.")
		return true
	}
	// The Home tab is the person's own: the link may be shown here.
	a.noteHome(team, user, ":link: <"+escape(link)+"|Connect your *"+escape(alias)+"* account>: the link works once, for 15 minutes, and only for you. Don't forward it.")
	return true
}
