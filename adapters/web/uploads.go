package web

import (
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
	"github.com/neobot/neobot/core/quota"
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
	// maxUploadsPerUser and maxUploadBytes bound what is kept in memory
	// when the adapter has no store: past either, the oldest files go (a
	// message that named one reads it as "couldn't download").
	maxUploadsPerUser = 50
	maxUploadBytes    = 128 << 20
	// uploadTTL is how long an upload is kept in memory.
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

// Files keeps uploads and tools' files (the store: every instance reads
// them, and they survive a restart). The adapter checks owners; the store
// drops a file with its thread.
type Files interface {
	// PutFile stores f; an ID in use is an error.
	PutFile(ctx context.Context, f core.StoredFile) error
	// File returns the file with id, or core.ErrNotFound.
	File(ctx context.Context, id string) (core.StoredFile, error)
	// SendFile records that upload id went with a message in thread.
	SendFile(ctx context.Context, id, thread string) error
}

// memFiles keeps files in this process's memory, for an adapter given no
// store: a restart forgets them, and other instances never see them.
// Past maxUploadsPerUser files of one owner or maxUploadBytes in all, the
// oldest go; an upload goes after uploadTTL.
type memFiles struct {
	mu    sync.Mutex
	m     map[string]core.StoredFile
	bytes int64
}

func (u *memFiles) PutFile(_ context.Context, f core.StoredFile) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.m == nil {
		u.m = map[string]core.StoredFile{}
	}
	if _, ok := u.m[f.ID]; ok {
		return errors.New("web: put file: ID in use")
	}
	mine := 0
	for id, x := range u.m {
		if f.At.Sub(x.At) > uploadTTL {
			u.dropLocked(id)
		} else if x.Owner == f.Owner {
			mine++
		}
	}
	for ; mine >= maxUploadsPerUser; mine-- {
		u.dropLocked(u.oldestLocked(f.Owner))
	}
	for u.bytes+int64(len(f.Data)) > maxUploadBytes && len(u.m) > 0 {
		u.dropLocked(u.oldestLocked(""))
	}
	u.m[f.ID] = f
	u.bytes += int64(len(f.Data))
	return nil
}

func (u *memFiles) File(_ context.Context, id string) (core.StoredFile, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	f, ok := u.m[id]
	if !ok {
		return core.StoredFile{}, core.ErrNotFound
	}
	return f, nil
}

func (u *memFiles) SendFile(_ context.Context, id, thread string) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	f, ok := u.m[id]
	if !ok {
		return core.ErrNotFound
	}
	f.Thread = thread
	u.m[id] = f
	return nil
}

// oldestLocked is the ID of the oldest file, of owner when not "".
func (u *memFiles) oldestLocked(owner string) string {
	oldest := ""
	for id, x := range u.m {
		if (owner == "" || x.Owner == owner) && (oldest == "" || x.At.Before(u.m[oldest].At)) {
			oldest = id
		}
	}
	return oldest
}

func (u *memFiles) dropLocked(id string) {
	u.bytes -= int64(len(u.m[id].Data))
	delete(u.m, id)
}

// dropThread forgets the files of thread (a store drops them itself when
// the thread is deleted).
func (u *memFiles) dropThread(thread string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for id, x := range u.m {
		if x.Thread == thread {
			u.dropLocked(id)
		}
	}
}

// ownFile returns the file id if user owns it; ok is false when there is
// no such file of theirs, and err says the store could not be read.
func (a *Adapter) ownFile(ctx context.Context, user, id string) (f core.StoredFile, ok bool, err error) {
	f, err = a.files.File(ctx, id)
	if errors.Is(err, core.ErrNotFound) {
		return core.StoredFile{}, false, nil
	}
	if err != nil {
		return core.StoredFile{}, false, err
	}
	return f, f.Owner == user, nil
}

// sent records that user's uploads ids went with a message in conv, and
// returns them; a *refusal names one that is not there.
func (a *Adapter) sent(ctx context.Context, user string, t core.Thread, ids []string) ([]FileRef, *refusal) {
	var out []FileRef
	for _, id := range ids {
		f, ok, err := a.ownFile(ctx, user, id)
		if err != nil {
			a.log.Error().Err(err).Str("file", id).Msg("web: read an upload")
			return nil, &refusal{status: http.StatusServiceUnavailable, message: "your uploads could not be read just now; try again"}
		}
		if !ok {
			return nil, &refusal{status: http.StatusBadRequest, message: fmt.Sprintf("the file %q is not one of your uploads (an upload is kept for a day until it is sent); upload it again", id)}
		}
		if f.Thread != "" && f.Thread != t.Key() {
			// It goes with that conversation: sent here too, deleting
			// either would take it from the other.
			return nil, &refusal{status: http.StatusBadRequest, message: fmt.Sprintf("the file %q was sent in another conversation; upload it again to send it here", f.Name)}
		}
		out = append(out, FileRef{ID: f.ID, Name: f.Name, MIMEType: f.MIMEType, Size: int64(len(f.Data))})
	}
	for _, id := range ids {
		if err := a.files.SendFile(ctx, id, t.Key()); err != nil {
			a.log.Error().Err(err).Str("file", id).Msg("web: send an upload")
			return nil, &refusal{status: http.StatusServiceUnavailable, message: "your uploads could not be sent just now; try again"}
		}
	}
	return out, nil
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
			apiError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("%s is too large: images up to %s and text files up to %s can be sent", name, attach.SizeWords(a.maxImage()), attach.SizeWords(a.maxFile())))
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
		apiError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("%s is larger than the %s Neo reads from a text file", name, attach.SizeWords(a.maxFile())))
		return
	}
	if a.opts.Quota != nil {
		// An upload counts in its owner's bytes of the day, as text does.
		if d := a.opts.Quota.Take(r.Context(), intake.UserKey(Platform, Workspace, user), quota.Charge{Bytes: int64(len(data))}); d.Denied() {
			limited(d).write(w)
			return
		}
	}
	ref := FileRef{ID: newID(), Name: name, MIMEType: mt, Size: int64(len(data))}
	err = a.files.PutFile(r.Context(), core.StoredFile{ID: ref.ID, Owner: user, Name: name, MIMEType: mt, Data: data, At: a.opts.Now()})
	if err != nil {
		a.log.Error().Err(err).Str("file", ref.ID).Msg("web: keep an upload")
		apiError(w, http.StatusServiceUnavailable, name+" could not be kept just now; upload it again")
		return
	}
	writeJSON(w, http.StatusCreated, ref)
}

// download serves one of the caller's uploads back (the page shows
// images with it), never run as a page.
func (a *Adapter) download(w http.ResponseWriter, r *http.Request, user string) {
	up, ok, err := a.ownFile(r.Context(), user, r.PathValue("id"))
	if err != nil {
		a.log.Error().Err(err).Msg("web: read an upload")
		apiError(w, http.StatusServiceUnavailable, "the upload could not be read just now; try again")
		return
	}
	if !ok {
		apiError(w, http.StatusNotFound, "no such upload (an upload is kept with its conversation, or for a day until it is sent)")
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
	h.Set("Content-Length", strconv.Itoa(len(up.Data)))
	_, _ = w.Write(up.Data)
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
				up, ok, err := a.ownFile(ctx, in.Thread.Channel, f.ID)
				if err != nil {
					return err
				}
				if !ok {
					return errors.New("the upload is no longer kept")
				}
				_, err = w.Write(up.Data)
				return err
			}, func(f core.Attachment, err error) {
				a.log.Warn().Err(err).Str("file", f.ID).Msg("web: read upload")
			})
		})
}
