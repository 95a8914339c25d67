// Package attach decides which of a message's attachments Neo reads: text
// files under a size cap and pictures under MaxImageBytes, downloaded
// through the platform's own client. Every file it declines is named in
// one sentence the agent can pass on.
package attach

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
)

// MaxImageBytes caps one picture: the smallest per-image limit of the
// providers that take images (Anthropic's 5 MB), so a picture read is
// one every vision model accepts. It also bounds what a picture adds to
// the stored transcript.
const MaxImageBytes = 5 << 20

// MaxImages caps the pictures read from one message; the rest are named
// as not read.
const MaxImages = 4

// Download fetches f's content into w, which refuses to grow past the cap.
// A download that retries calls w.Reset before each attempt.
type Download func(ctx context.Context, f core.Attachment, w *Buffer) error

// ErrTooBig reports content past the cap, whatever the event claimed.
var ErrTooBig = errors.New("file larger than the cap")

// Read returns files as core.Files, with the text of each readable one:
// text by type, at most max bytes (negative max reads none), valid UTF-8;
// and the bytes of each picture: an image by type, at most MaxImageBytes,
// PNG, JPEG, GIF or WebP by its content whatever the type claimed.
// note is a sentence naming every declined file and why, "" when none;
// failed reports a download error for the caller to log.
func Read(ctx context.Context, files []core.Attachment, max int64, download Download, failed func(core.Attachment, error)) (out []core.File, note string) {
	var declined []string
	images := 0
	for _, f := range files {
		cf := core.File{Name: f.Name, MIMEType: f.MIMEType, Size: f.Size}
		switch {
		case max < 0:
			declined = append(declined, fmt.Sprintf("%q (I don't read attachments here)", f.Name))
		case IsImage(f) && images >= MaxImages:
			declined = append(declined, fmt.Sprintf("%q (I look at %d pictures per message at most)", f.Name, MaxImages))
		case IsImage(f) && f.Size > MaxImageBytes:
			declined = append(declined, fmt.Sprintf("%q (a picture larger than the %s I can look at)", f.Name, SizeWords(MaxImageBytes)))
		case IsImage(f):
			data, mt, err := fetchImage(ctx, f, download)
			switch {
			case errors.Is(err, errNotPicture):
				declined = append(declined, fmt.Sprintf("%q (not a PNG, JPEG, GIF or WebP picture)", f.Name))
			case err != nil:
				if failed != nil {
					failed(f, err)
				}
				declined = append(declined, fmt.Sprintf("%q (I couldn't download it)", f.Name))
			default:
				images++
				cf.Image, cf.MIMEType, cf.Size = data, mt, int64(len(data))
			}
		case !IsText(f):
			declined = append(declined, fmt.Sprintf("%q (I can only read text files)", f.Name))
		case f.Size > max:
			declined = append(declined, fmt.Sprintf("%q (larger than the %s I can read)", f.Name, SizeWords(max)))
		default:
			text, err := fetch(ctx, f, max, download)
			if err != nil {
				if failed != nil {
					failed(f, err)
				}
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

func fetch(ctx context.Context, f core.Attachment, max int64, download Download) (string, error) {
	w := &Buffer{n: max}
	if err := download(ctx, f, w); err != nil {
		return "", err
	}
	if !utf8.Valid(w.buf) {
		return "", errors.New("not UTF-8 text")
	}
	return string(w.buf), nil
}

// errNotPicture reports bytes that are not a picture a model takes.
var errNotPicture = errors.New("not a PNG, JPEG, GIF or WebP picture")

// fetchImage downloads a picture and returns its bytes and the type its
// content shows.
func fetchImage(ctx context.Context, f core.Attachment, download Download) ([]byte, string, error) {
	w := &Buffer{n: MaxImageBytes}
	if err := download(ctx, f, w); err != nil {
		return nil, "", err
	}
	mt, ok := llm.SniffImage(w.buf)
	if !ok {
		return nil, "", errNotPicture
	}
	return w.buf, mt, nil
}

// imageKinds are file types and extensions of pictures.
var imageKinds = map[string]bool{"png": true, "jpg": true, "jpeg": true, "gif": true, "webp": true}

// IsImage reports whether f is offered as a picture: an image/* MIME type
// or a picture's file type or extension. Its content decides whether it
// is one.
func IsImage(f core.Attachment) bool {
	mt, _, _ := mime.ParseMediaType(f.MIMEType)
	return strings.HasPrefix(mt, "image/") || imageKinds[strings.ToLower(f.Kind)]
}

// Buffer is a writer that refuses to grow past the cap with ErrTooBig.
type Buffer struct {
	buf []byte
	n   int64
}

// Write appends p, or fails with ErrTooBig when that would pass the cap.
func (b *Buffer) Write(p []byte) (int, error) {
	if int64(len(b.buf)+len(p)) > b.n {
		return 0, ErrTooBig
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// Reset empties the buffer, for a download starting over.
func (b *Buffer) Reset() { b.buf = b.buf[:0] }

// textKinds are file types, extensions and MIME types read as text.
var textKinds = map[string]bool{
	"text": true, "txt": true, "markdown": true, "md": true, "csv": true, "tsv": true, "json": true, "yaml": true,
	"yml": true, "xml": true, "html": true, "css": true, "javascript": true, "js": true, "typescript": true,
	"ts": true, "go": true, "python": true, "py": true, "ruby": true, "rb": true, "rust": true, "rs": true,
	"java": true, "kotlin": true, "kt": true, "c": true, "h": true, "cpp": true, "csharp": true, "cs": true,
	"shell": true, "sh": true, "sql": true, "toml": true, "ini": true, "diff": true, "patch": true, "log": true,
	"php": true, "swift": true, "scala": true, "dockerfile": true, "makefile": true,
	"application/json": true, "application/xml": true, "application/x-yaml": true, "application/yaml": true,
	"application/javascript": true, "application/toml": true, "application/x-sh": true, "application/sql": true,
}

// IsText reports whether f is read as text: a text/* or known MIME type,
// or a known file type or extension.
func IsText(f core.Attachment) bool {
	mt, _, _ := mime.ParseMediaType(f.MIMEType)
	return strings.HasPrefix(mt, "text/") || textKinds[mt] || textKinds[strings.ToLower(f.Kind)]
}

// SizeWords says n bytes for people: "2 MB", "512 KB", "100 bytes".
func SizeWords(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
