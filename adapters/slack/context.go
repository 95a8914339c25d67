package slack

import (
	"cmp"
	"context"
	"html"
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/neobot/neobot/adapters/internal/attach"
	"github.com/neobot/neobot/core"
)

// History limits: the thread's first message and the messages nearest the
// mention are kept, at most historyMessages of them and maxHistoryChars in
// all; a thread longer than historyPages pages of replies is read from its
// start up to there.
const (
	maxHistoryChars = 8000
	historyMessages = 50
	historyPages    = 10
	historyPageSize = 200
)

// history fetches the thread's earlier messages once, when Neo is first
// mentioned in the middle of it: the thread's first message, which says
// what it is about, and the messages nearest the mention. Failures leave
// the context empty: the turn goes on without it.
func (a *Adapter) history(ctx context.Context, t core.Thread, ts string) string {
	var (
		parent  *slack.Message
		recent  []slack.Message
		skipped int
		cursor  string
	)
	for range historyPages {
		var (
			msgs    []slack.Message
			hasMore bool
			next    string
		)
		err := a.retry(ctx, "conversations.replies", func(ctx context.Context) (err error) {
			msgs, hasMore, next, err = a.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
				ChannelID: t.Channel, Timestamp: t.ID, Latest: ts, Limit: historyPageSize, Cursor: cursor,
			})
			return err
		})
		if err != nil {
			a.log.Warn().Err(err).Str("channel", t.Channel).Msg("slack: thread history")
			break
		}
		for _, msg := range msgs {
			switch {
			case !parseTS(msg.Timestamp).Before(parseTS(ts)): // the mention itself, and anything after it
			case msg.Timestamp == t.ID:
				parent = &msg
			default:
				recent = append(recent, msg)
				if len(recent) > historyMessages {
					recent, skipped = recent[1:], skipped+1
				}
			}
		}
		if !hasMore || next == "" {
			break
		}
		cursor = next
	}
	me := a.me()
	line := func(msg slack.Message) string {
		who := "<@" + msg.User + ">"
		switch {
		case (me.UserID != "" && msg.User == me.UserID) || (me.BotID != "" && msg.BotID == me.BotID):
			who = "Neo"
		case msg.BotID != "":
			who = "bot " + cmp.Or(msg.Username, msg.BotID)
		}
		text := strings.TrimSpace(html.UnescapeString(msg.Text))
		if text == "" {
			return ""
		}
		return who + ": " + text
	}
	var head string
	if parent != nil {
		head = clipRunes(line(*parent), maxHistoryChars/4)
	}
	var lines []string
	for _, msg := range recent {
		if l := line(msg); l != "" {
			lines = append(lines, l)
		}
	}
	body := strings.Join(lines, "\n")
	if room := maxHistoryChars - len(head); len(body) > room {
		body = body[len(body)-room:]
		for !utf8.ValidString(body) {
			body = body[1:]
		}
		skipped++
	}
	switch {
	case head == "":
		if skipped > 0 {
			return "…" + body
		}
		return body
	case body == "":
		return head
	case skipped > 0:
		return head + "\n…\n" + body
	}
	return head + "\n" + body
}

// clipRunes cuts s to at most n bytes on a rune boundary, marking the cut.
func clipRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// readFiles downloads the text attachments under the size cap and returns
// them with a sentence about each file it declined.
func (a *Adapter) readFiles(ctx context.Context, files []core.Attachment) ([]core.File, string) {
	download := func(ctx context.Context, f core.Attachment, w *attach.Buffer) error {
		return a.retry(ctx, "files download", func(ctx context.Context) error {
			w.Reset()
			return a.api.GetFileContext(ctx, f.URL, w)
		})
	}
	return attach.Read(ctx, files, a.opts.MaxFileBytes, download, func(f core.Attachment, err error) {
		a.log.Warn().Err(err).Str("file", f.ID).Msg("slack: download attachment")
	})
}
