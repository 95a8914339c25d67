package slack

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"html"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/neobot/neobot/core"
)

// maxHistoryChars bounds the earlier messages passed as Inbound.Context;
// the most recent are kept.
const maxHistoryChars = 8000

// history fetches the thread's earlier messages once, when Neo is first
// mentioned in the middle of it. Failures leave the context empty: the
// turn goes on without it.
func (a *Adapter) history(ctx context.Context, m incoming) string {
	var msgs []slack.Message
	err := a.retry(ctx, "conversations.replies", func(ctx context.Context) (err error) {
		msgs, _, _, err = a.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
			ChannelID: m.channel, Timestamp: m.threadTS, Limit: 100,
		})
		return err
	})
	if err != nil {
		a.log.Warn().Err(err).Str("channel", m.channel).Msg("slack: thread history")
		return ""
	}
	me := a.me()
	var lines []string
	for _, msg := range msgs {
		if !parseTS(msg.Timestamp).Before(parseTS(m.ts)) {
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
func (a *Adapter) readFiles(ctx context.Context, files []slack.File) ([]core.File, string) {
	var out []core.File
	var declined []string
	for _, f := range files {
		cf := core.File{Name: f.Name, MIMEType: f.Mimetype, Size: int64(f.Size)}
		switch {
		case a.opts.MaxFileBytes < 0:
			declined = append(declined, fmt.Sprintf("%q (I don't read attachments here)", f.Name))
		case !isText(f):
			declined = append(declined, fmt.Sprintf("%q (I can only read text files)", f.Name))
		case int64(f.Size) > a.opts.MaxFileBytes:
			declined = append(declined, fmt.Sprintf("%q (larger than the %s I can read)", f.Name, sizeWords(a.opts.MaxFileBytes)))
		default:
			text, err := a.download(ctx, f)
			if err != nil {
				a.log.Warn().Err(err).Str("file", f.ID).Msg("slack: download attachment")
				declined = append(declined, fmt.Sprintf("%q (I couldn't download it)", f.Name))
				break
			}
			cf.Text = text
		}
		out = append(out, cf)
	}
	if len(declined) == 0 {
		return out, ""
	}
	return out, "[Attachments not read: " + strings.Join(declined, "; ") + ".]"
}

var errTooBig = errors.New("file larger than the cap")

// capped is a writer that refuses to grow past n bytes.
type capped struct {
	buf bytes.Buffer
	n   int64
}

func (c *capped) Write(p []byte) (int, error) {
	if int64(c.buf.Len()+len(p)) > c.n {
		return 0, errTooBig
	}
	return c.buf.Write(p)
}

func (a *Adapter) download(ctx context.Context, f slack.File) (string, error) {
	u := f.URLPrivateDownload
	if u == "" {
		u = f.URLPrivate
	}
	var w *capped
	err := a.retry(ctx, "files download", func(ctx context.Context) error {
		w = &capped{n: a.opts.MaxFileBytes}
		return a.api.GetFileContext(ctx, u, w)
	})
	if err != nil {
		return "", err
	}
	if !utf8.Valid(w.buf.Bytes()) {
		return "", errors.New("not UTF-8 text")
	}
	return w.buf.String(), nil
}

// textTypes are Slack filetypes and MIME types read as text.
var textTypes = map[string]bool{
	"text": true, "markdown": true, "md": true, "csv": true, "tsv": true, "json": true, "yaml": true, "yml": true,
	"xml": true, "html": true, "css": true, "javascript": true, "js": true, "typescript": true, "ts": true,
	"go": true, "python": true, "py": true, "ruby": true, "rust": true, "java": true, "kotlin": true, "c": true,
	"cpp": true, "csharp": true, "shell": true, "sh": true, "sql": true, "toml": true, "ini": true, "diff": true,
	"log": true, "txt": true, "php": true, "swift": true, "scala": true, "dockerfile": true, "makefile": true,
	"application/json": true, "application/xml": true, "application/x-yaml": true, "application/yaml": true,
	"application/javascript": true, "application/toml": true, "application/x-sh": true, "application/sql": true,
}

func isText(f slack.File) bool {
	mt, _, _ := mime.ParseMediaType(f.Mimetype)
	return strings.HasPrefix(mt, "text/") || textTypes[mt] || textTypes[strings.ToLower(f.Filetype)]
}

func sizeWords(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
