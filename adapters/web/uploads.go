package web

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
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/neobot/neobot/adapters/internal/attach"
	"github.com/neobot/neobot/adapters/internal/intake"
	"github.com/neobot/neobot/core"
)

// Upload limits. A text file is read up to Options.MaxFileBytes, as on
// Slack and Discord; an image is kept up to DefaultMaxImageBytes.
const (
	// DefaultMaxFileBytes is the largest text file read, as Slack's and
	// Discord's default.
	DefaultMaxFileBytes = 256 << 10
	// DefaultMaxImageBytes is the largest image taken.
	DefaultMaxImageBytes = 5 << 20
	// maxFilesPerMessage bounds the files one message carries.
	maxFilesPerMessage = 10
	// maxUploadsPerUser and maxUploadBytes bound what is kept in memory:
	// past either, the oldest uploads go (a message that named one reads
	// it as "couldn't download").
	maxUploadsPerUser = 50
	maxUploadBytes    = 128 << 20
	// uploadTTL is how long an upload is kept.
	uploadTTL = 24 * time.Hour
)

// imageTypes are the image types taken, by MIME type.
var imageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// FileRef is a file as a message and the event stream show it.
type FileRef struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	MIMEType string `json:"mime_type"`
	Size     int64  `json:"size"`
}

type upload struct {
	FileRef
	user string
	conv string // the conversation it was sent in, once sent
	data []byte
	at   time.Time
}

// uploadSet is the files users uploaded, in memory: a restart forgets
// them, as it forgets the event feed.
type uploadSet struct {
	mu    sync.Mutex
	m     map[string]*upload
	bytes int64
}

func (u *uploadSet) add(up *upload, now time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.m == nil {
		u.m = map[string]*upload{}
	}
	mine := 0
	for id, x := range u.m {
		if now.Sub(x.at) > uploadTTL {
			u.dropLocked(id)
		} else if x.user == up.user {
			mine++
		}
	}
	for ; mine >= maxUploadsPerUser; mine-- {
		u.dropLocked(u.oldestLocked(up.user))
	}
	for u.bytes+int64(len(up.data)) > maxUploadBytes && len(u.m) > 0 {
		u.dropLocked(u.oldestLocked(""))
	}
	u.m[up.ID] = up
	u.bytes += int64(len(up.data))
}

// oldestLocked is the ID of the oldest upload, of user when not "".
func (u *uploadSet) oldestLocked(user string) string {
	oldest := ""
	for id, x := range u.m {
		if (user == "" || x.user == user) && (oldest == "" || x.at.Before(u.m[oldest].at)) {
			oldest = id
		}
	}
	return oldest
}

func (u *uploadSet) dropLocked(id string) {
	u.bytes -= int64(len(u.m[id].data))
	delete(u.m, id)
}

// get returns user's upload id, or nil.
func (u *uploadSet) get(user, id string) *upload {
	u.mu.Lock()
	defer u.mu.Unlock()
	if x := u.m[id]; x != nil && x.user == user {
		return x
	}
	return nil
}

// sent records that user's uploads ids went with a message in conv, and
// returns them, or an error naming one that is not there.
func (u *uploadSet) sent(user, conv string, ids []string) ([]FileRef, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []FileRef
	for _, id := range ids {
		x := u.m[id]
		if x == nil || x.user != user {
			return nil, fmt.Errorf("the file %q is not one of your uploads (uploads are kept for a day, and not across a restart); upload it again", id)
		}
		out = append(out, x.FileRef)
	}
	for _, id := range ids {
		u.m[id].conv = conv
	}
	return out, nil
}

// dropConversation forgets the files sent in user's conversation conv.
func (u *uploadSet) dropConversation(user, conv string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for id, x := range u.m {
		if x.user == user && x.conv == conv {
			u.dropLocked(id)
		}
	}
}

// uploadType is the MIME type an upload is kept as, or an error saying
// what is taken: text files (by type or extension, as attach reads them)
// and PNG, JPEG, GIF or WebP images.
func uploadType(name, declared string, head []byte) (string, bool, error) {
	mt, _, _ := mime.ParseMediaType(declared)
	sniffed, _, _ := mime.ParseMediaType(http.DetectContentType(head))
	if slices.Contains(imageTypes, sniffed) {
		return sniffed, true, nil
	}
	ext := strings.TrimPrefix(strings.ToLower(path.Ext(name)), ".")
	if attach.IsText(core.Attachment{MIMEType: mt, Kind: ext}) || (ext == "" && strings.HasPrefix(sniffed, "text/")) {
		if mt == "" || mt == "application/octet-stream" {
			mt = "text/plain"
		}
		return mt, false, nil
	}
	return "", false, errors.New("only text files and PNG, JPEG, GIF or WebP images can be sent")
}

// upload takes one file as the request body: its name in ?name=, its
// type in Content-Type. It answers {"id", "name", "mime_type", "size"}.
func (a *Adapter) upload(w http.ResponseWriter, r *http.Request, user string) {
	name := path.Base(strings.ReplaceAll(r.URL.Query().Get("name"), `\`, "/"))
	if name == "" || name == "." || name == "/" || len(name) > 255 {
		apiError(w, http.StatusBadRequest, "name the file: POST /v1/uploads?name=<file name>")
		return
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			apiError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("%s is too large: images up to %s and text files up to %s can be sent", name, sizeWords(a.maxImage()), sizeWords(a.maxFile())))
			return
		}
		apiError(w, http.StatusBadRequest, "the upload was cut short; send it again")
		return
	}
	if len(data) == 0 {
		apiError(w, http.StatusBadRequest, name+" is empty")
		return
	}
	mt, image, err := uploadType(name, r.Header.Get("Content-Type"), data[:min(len(data), 512)])
	if err != nil {
		apiError(w, http.StatusUnsupportedMediaType, name+": "+err.Error())
		return
	}
	if !image && int64(len(data)) > a.maxFile() {
		apiError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("%s is larger than the %s Neo reads from a text file", name, sizeWords(a.maxFile())))
		return
	}
	up := &upload{FileRef: FileRef{ID: newID(), Name: name, MIMEType: mt, Size: int64(len(data))}, user: user, data: data, at: a.opts.Now()}
	a.uploads.add(up, up.at)
	writeJSON(w, http.StatusCreated, up.FileRef)
}

// download serves one of the caller's uploads back (the page shows
// images with it), never run as a page.
func (a *Adapter) download(w http.ResponseWriter, r *http.Request, user string) {
	up := a.uploads.get(user, r.PathValue("id"))
	if up == nil {
		apiError(w, http.StatusNotFound, "no such upload (uploads are kept for a day, and not across a restart)")
		return
	}
	h := w.Header()
	h.Set("Content-Type", up.MIMEType)
	if !strings.HasPrefix(up.MIMEType, "image/") {
		h.Set("Content-Type", "text/plain; charset=utf-8")
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": up.Name}))
	}
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	h.Set("Cache-Control", "private, max-age=86400")
	h.Set("Content-Length", strconv.Itoa(len(up.data)))
	_, _ = io.Copy(w, bytes.NewReader(up.data))
}

func (a *Adapter) maxFile() int64 {
	if a.opts.MaxFileBytes > 0 {
		return a.opts.MaxFileBytes
	}
	return DefaultMaxFileBytes
}

func (a *Adapter) maxImage() int64 {
	if a.opts.MaxImageBytes > 0 {
		return a.opts.MaxImageBytes
	}
	return DefaultMaxImageBytes
}

// attachments describes files for the journal, as Slack and Discord
// describe theirs: the URL is the upload's, read back by Prepare.
func attachments(files []FileRef) []core.Attachment {
	var out []core.Attachment
	for _, f := range files {
		out = append(out, core.Attachment{ID: f.ID, Name: f.Name, MIMEType: f.MIMEType,
			Kind: strings.TrimPrefix(strings.ToLower(path.Ext(f.Name)), "."), Size: f.Size, URL: "/v1/uploads/" + f.ID})
	}
	return out
}

// Prepare reads a journaled message's uploads when its turn starts, with
// the rules Slack's and Discord's attachments are read by.
func (a *Adapter) Prepare(ctx context.Context, in core.Inbound) core.Inbound {
	return intake.Prepare(ctx, in, func(context.Context, core.Inbound) string { return "" },
		func(ctx context.Context, files []core.Attachment) ([]core.File, string) {
			return attach.Read(ctx, files, a.maxFile(), func(_ context.Context, f core.Attachment, w *attach.Buffer) error {
				up := a.uploads.get(in.Thread.Channel, f.ID)
				if up == nil {
					return errors.New("the upload is no longer kept")
				}
				_, err := w.Write(up.data)
				return err
			}, func(f core.Attachment, err error) {
				a.log.Warn().Err(err).Str("file", f.ID).Msg("web: read upload")
			})
		})
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
