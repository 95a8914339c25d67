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

// maxHistoryChars bounds the earlier messages passed as Inbound.Context;
// the most recent are kept.
const maxHistoryChars = 8000

// history fetches the thread's earlier messages once, when Neo is first
// mentioned in the middle of it. Failures leave the context empty: the
// turn goes on without it.
func (a *Adapter) history(ctx context.Context, t core.Thread, ts string) string {
	var msgs []slack.Message
	err := a.retry(ctx, "conversations.replies", func(ctx context.Context) (err error) {
		msgs, _, _, err = a.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
			ChannelID: t.Channel, Timestamp: t.ID, Limit: 100,
		})
		return err
	})
	if err != nil {
		a.log.Warn().Err(err).Str("channel", t.Channel).Msg("slack: thread history")
		return ""
	}
	me := a.me()
	var lines []string
	for _, msg := range msgs {
		if !parseTS(msg.Timestamp).Before(parseTS(ts)) {
			continue // the mention itself, and anything after it
		}
		who := "<@" + msg.User + ">"
		switch {
		case (me.UserID != "" && msg.User == me.UserID) || (me.BotID != "" && msg.BotID == me.BotID):
			who = "Neo"
		case msg.BotID != "":
			who = "bot " + cmp.Or(msg.Username, msg.BotID)
		}
		text := strings.TrimSpace(html.UnescapeString(msg.Text))
		if text == "" {
			continue
		}
		lines = append(lines, who+": "+text)
	}
	out := strings.Join(lines, "\n")
	if len(out) > maxHistoryChars {
		out = "…" + out[len(out)-maxHistoryChars:]
		for !utf8.ValidString(out) {
			out = "…" + out[len("…")+1:]
		}
	}
	return out
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
