package discord

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/neobot/neobot/core"

	"github.com/neobot/neobot/adapters/internal/live"
	"github.com/neobot/neobot/adapters/internal/mdsplit"
	"github.com/neobot/neobot/adapters/internal/speak"
	"github.com/neobot/neobot/adapters/internal/statusline"
)

// Reporter returns how Neo speaks in thread t (its messages go to t.ID: the
// thread, or the DM channel): Status as the typing indicator plus one
// status message edited in place at most once per StatusInterval; Say as
// messages split under 2,000 characters without breaking a code block, the
// first replacing the status message; Notice as subtext ("-# …").
func (a *Adapter) Reporter(t core.Thread) core.Reporter {
	return speak.Reporter[*Adapter]{P: a, T: t}
}

// Say says a whole answer in thread t: the status message, or the turn's
// progress message, becomes its first message, and the last carries the
// feedback buttons.
func (a *Adapter) Say(ctx context.Context, t core.Thread, text string) error {
	a.handOver(ctx, t)
	m := a.messages(ctx, t)
	return a.lines.Finish(t.Key(), func(st *statusline.Line[struct{}]) error {
		return live.Say(ctx, m, answerRender, st.Clear(), text)
	})
}

// Notice ends the turn's progress message in thread t, then posts text
// below it as subtext.
func (a *Adapter) Notice(ctx context.Context, t core.Thread, text string) error {
	a.endSteps(ctx, t)
	return a.notice(ctx, t, text)
}

// answerMentions lets an answer ping the people it names, never @everyone
// or a role.
func answerMentions() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{discordgo.AllowedMentionTypeUsers}}
}

// newStatusLines returns the reporter's per-thread status lines; their
// timers end by Run's return. Discord needs nothing else remembered.
func newStatusLines(a *Adapter) *statusline.Lines[struct{}] {
	return statusline.New(statusline.Options[struct{}]{
		Interval:     a.opts.StatusInterval,
		FlushTimeout: submitTimeout,
		FlushFailed: func(thread string, err error) {
			a.log.Warn().Err(err).Str("thread", thread).Msg("discord: update status")
		},
	})
}

// statusContent renders a status line as subtext.
func statusContent(text string) string {
	line := strings.Join(strings.Fields(text), " ")
	if r := []rune(line); len(r) > 300 {
		line = string(r[:299]) + "…"
	}
	return "-# ⏳ " + line
}

// Status shows text in thread t: the typing indicator, and the status
// message, posted or edited at the pace, unless the turn's progress
// message shows the turn is working.
func (a *Adapter) Status(ctx context.Context, t core.Thread, text string) error {
	if showsSteps(&a.steps, t.Key()) {
		a.typing(ctx, t.ID)
		return nil // the progress message shows the turn is working
	}
	return a.lines.With(t.Key(), func(st *statusline.Line[struct{}]) error {
		a.typing(ctx, t.ID)
		if st.ID() == "" {
			m, err := a.send(ctx, t.ID, &discordgo.MessageSend{Content: statusContent(text),
				AllowedMentions: &discordgo.MessageAllowedMentions{}})
			if err != nil {
				return err
			}
			st.Posted(m.ID)
			return nil
		}
		return st.Update(ctx, text, func(ctx context.Context, id, text string) error {
			content := statusContent(text)
			return a.edit(ctx, &discordgo.MessageEdit{Channel: t.ID, ID: id, Content: &content})
		})
	})
}

// typing shows "Neo is typing…" for ten seconds or until Neo posts.
func (a *Adapter) typing(ctx context.Context, channel string) {
	if err := a.s.ChannelTyping(channel, call(ctx)); err != nil {
		a.log.Debug().Err(err).Str("channel", channel).Msg("discord: typing indicator")
	}
}

// subtext renders text as Discord subtext: every non-empty line starts
// with "-# ". Code blocks are left as they are.
func subtext(text string) string {
	lines := strings.Split(strings.Trim(text, "\n"), "\n")
	inCode := false
	for i, l := range lines {
		if mdsplit.Fence(strings.TrimLeft(l, " \t")) != "" {
			inCode = !inCode
			continue
		}
		if !inCode && strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "-# ") {
			lines[i] = "-# " + l
		}
	}
	return strings.Join(lines, "\n")
}

func (a *Adapter) notice(ctx context.Context, t core.Thread, text string) error {
	for _, c := range split(subtext(text), sayLimit) {
		if err := a.post(ctx, t.ID, &discordgo.MessageSend{Content: c, AllowedMentions: &discordgo.MessageAllowedMentions{}}); err != nil {
			return err
		}
	}
	return nil
}

// post sends a message to channel.
func (a *Adapter) post(ctx context.Context, channel string, m *discordgo.MessageSend) error {
	_, err := a.send(ctx, channel, m)
	return err
}

// send sends a message to channel and returns it.
func (a *Adapter) send(ctx context.Context, channel string, m *discordgo.MessageSend) (*discordgo.Message, error) {
	msg, err := a.s.ChannelMessageSendComplex(channel, m, call(ctx))
	if err != nil {
		return nil, fmt.Errorf("discord: send message to %s: %w", channel, err)
	}
	return msg, nil
}

func (a *Adapter) edit(ctx context.Context, m *discordgo.MessageEdit) error {
	if _, err := a.s.ChannelMessageEditComplex(m, call(ctx)); err != nil {
		return fmt.Errorf("discord: edit message %s: %w", m.ID, err)
	}
	return nil
}

// maskedLink is a markdown link whose text hides its URL.
var maskedLink = regexp.MustCompile(`\[([^\]\n]+)\]\(<?(https?://[^)\s>]+)>?(?:\s+"[^"]*")?\)`)

// inert makes model or daemon text safe to post: a masked link shows its
// real URL after its text (no "[Approve here](https://evil.example)"),
// outside code, where Discord would render it. Mentions are handled by
// each message's allowed mentions, which never include @everyone, @here
// or roles.
func inert(text string) string {
	lines := strings.Split(text, "\n")
	fence := ""
	for i, line := range lines {
		if f := mdsplit.Fence(strings.TrimLeft(line, " \t")); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(f, fence):
				fence = ""
			}
			continue
		}
		if fence == "" {
			lines[i] = maskedLink.ReplaceAllStringFunc(line, func(m string) string {
				p := maskedLink.FindStringSubmatch(m)
				if mdsplit.SaysURL(p[1], p[2]) {
					return "<" + p[2] + ">"
				}
				return p[1] + " (<" + p[2] + ">)"
			})
		}
	}
	return strings.Join(lines, "\n")
}

// Tidy deletes the status messages and unfinished answers Neo left in
// thread t: a turn cut short by a crash never edited its "⏳" line into an
// answer, nor finished an answer it was writing, and a resumed turn posts
// its own (conversation.Tidier). It returns the newest one's ID, "" when
// there was none. A thread it cannot read counts as tidy.
func (a *Adapter) Tidy(ctx context.Context, t core.Thread) (newest string) {
	msgs, err := a.s.ChannelMessages(t.ID, 50, "", "", "", call(ctx))
	if err != nil {
		a.log.Warn().Err(err).Str("thread", t.Key()).Msg("discord: look for stale status messages")
		return ""
	}
	me := a.me()
	if me == "" { // a turn resumed before Run has connected
		u, err := a.s.User("@me", call(ctx))
		if err != nil {
			a.log.Warn().Err(err).Str("thread", t.Key()).Msg("discord: look for stale status messages")
			return ""
		}
		me = u.ID
		a.self.CompareAndSwap(nil, u)
	}
	for _, m := range msgs {
		if m.Author == nil || m.Author.ID != me ||
			!strings.HasPrefix(m.Content, statusContent("")) && !strings.HasSuffix(m.Content, writingMark) {
			continue
		}
		if newest == "" || a.Before(newest, m.ID) {
			newest = m.ID
		}
		if err := a.s.ChannelMessageDelete(t.ID, m.ID, call(ctx)); err != nil {
			a.log.Warn().Err(err).Str("thread", t.Key()).Msg("discord: delete a stale status message")
		}
	}
	return newest
}

// Before reports whether Discord message a was posted before b
// (conversation.Tidier): IDs are decimal numbers that grow with time.
func (*Adapter) Before(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// PrivateNotice tells user text in their direct messages with Neo, not in
// thread t (core.PrivateNoticer): outside a button click Discord has no
// reply only one person sees.
func (a *Adapter) PrivateNotice(ctx context.Context, _ core.Thread, user, text string) error {
	return a.direct(ctx, user, text)
}
