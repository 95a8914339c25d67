package discord

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/neobot/neobot/core"
)

// maxHistoryChars bounds the earlier messages passed as Inbound.Context;
// the most recent are kept.
const maxHistoryChars = 8000

// history fetches the thread's earlier messages once, when Neo is first
// mentioned in a thread it is not part of. Failures leave the context
// empty: the turn goes on without it.
func (a *Adapter) history(ctx context.Context, m *discordgo.Message) string {
	msgs, err := a.s.ChannelMessages(m.ChannelID, 50, m.ID, "", "", call(ctx))
	if err != nil {
		a.log.Warn().Err(err).Str("channel", m.ChannelID).Msg("discord: thread history")
		return ""
	}
	slices.Reverse(msgs) // Discord lists newest first
	me := a.me()
	var lines []string
	for _, msg := range msgs {
		text := strings.TrimSpace(msg.Content)
		if text == "" || msg.Author == nil {
			continue
		}
		who := "<@" + msg.Author.ID + ">"
		switch {
		case msg.Author.ID == me:
			who = "Neo"
		case msg.Author.Bot:
			who = "bot " + msg.Author.Username
		}
		lines = append(lines, who+": "+text)
	}
	out := strings.Join(lines, "\n")
	if len(out) > maxHistoryChars {
		out = out[len(out)-maxHistoryChars:]
		for len(out) > 0 && !utf8.RuneStart(out[0]) {
			out = out[1:]
		}
		out = "…" + out
	}
	return out
}

// readFiles downloads the text attachments under the size cap and returns
// them with a sentence about each file it declined.
func (a *Adapter) readFiles(ctx context.Context, files []*discordgo.MessageAttachment) ([]core.File, string) {
	var out []core.File
	var declined []string
	for _, f := range files {
		if f == nil {
			continue
		}
		cf := core.File{Name: f.Filename, MIMEType: f.ContentType, Size: int64(f.Size)}
		switch {
		case a.opts.MaxFileBytes < 0:
			declined = append(declined, fmt.Sprintf("%q (I don't read attachments here)", f.Filename))
		case !isText(f):
			declined = append(declined, fmt.Sprintf("%q (I can only read text files)", f.Filename))
		case int64(f.Size) > a.opts.MaxFileBytes:
			declined = append(declined, fmt.Sprintf("%q (larger than the %s I can read)", f.Filename, sizeWords(a.opts.MaxFileBytes)))
		default:
			text, err := a.download(ctx, f.URL)
			if err != nil {
				a.log.Warn().Err(err).Str("file", f.ID).Msg("discord: download attachment")
				declined = append(declined, fmt.Sprintf("%q (I couldn't download it)", f.Filename))
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

// download fetches an attachment from Discord's CDN, refusing more than
// MaxFileBytes whatever the event claimed.
func (a *Adapter) download(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := a.opts.HTTPClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("download: HTTP %d", resp.StatusCode)
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(resp.Body, a.opts.MaxFileBytes+1))
	switch {
	case err != nil:
		return "", err
	case n > a.opts.MaxFileBytes:
		return "", errTooBig
	case !utf8.Valid(buf.Bytes()):
		return "", errors.New("not UTF-8 text")
	}
	return buf.String(), nil
}

// textTypes are file extensions and MIME types read as text.
var textTypes = map[string]bool{
	"txt": true, "md": true, "markdown": true, "csv": true, "tsv": true, "json": true, "yaml": true, "yml": true,
	"xml": true, "html": true, "css": true, "js": true, "ts": true, "go": true, "py": true, "rb": true, "rs": true,
	"java": true, "kt": true, "c": true, "h": true, "cpp": true, "cs": true, "sh": true, "sql": true, "toml": true,
	"ini": true, "diff": true, "patch": true, "log": true, "php": true, "swift": true, "scala": true,
	"application/json": true, "application/xml": true, "application/x-yaml": true, "application/yaml": true,
	"application/javascript": true, "application/toml": true, "application/x-sh": true, "application/sql": true,
}

func isText(f *discordgo.MessageAttachment) bool {
	mt, _, _ := mime.ParseMediaType(f.ContentType)
	ext := strings.ToLower(strings.TrimPrefix(path.Ext(f.Filename), "."))
	return strings.HasPrefix(mt, "text/") || textTypes[mt] || textTypes[ext]
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
