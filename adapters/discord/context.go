package discord

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/neobot/neobot/adapters/internal/attach"
	"github.com/neobot/neobot/core"
)

// maxHistoryChars bounds the earlier messages passed as Inbound.Context;
// the most recent are kept.
const maxHistoryChars = 8000

// history fetches the thread's earlier messages once, when Neo is first
// mentioned in a thread it is not part of. Failures leave the context
// empty: the turn goes on without it.
func (a *Adapter) history(ctx context.Context, channel, before string) string {
	msgs, err := a.s.ChannelMessages(channel, 50, before, "", "", call(ctx))
	if err != nil {
		a.log.Warn().Err(err).Str("channel", channel).Msg("discord: thread history")
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
func (a *Adapter) readFiles(ctx context.Context, files []core.Attachment) ([]core.File, string) {
	return attach.Read(ctx, files, a.opts.MaxFileBytes, func(ctx context.Context, f core.Attachment, w *attach.Buffer) error {
		return a.download(ctx, f.URL, w)
	}, func(f core.Attachment, err error) {
		a.log.Warn().Err(err).Str("file", f.ID).Msg("discord: download attachment")
	})
}

// download copies an attachment from Discord's CDN into w.
func (a *Adapter) download(ctx context.Context, url string, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := a.opts.HTTPClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("download: HTTP %d", resp.StatusCode)
	}
	_, err = io.Copy(w, resp.Body)
	return err
}
