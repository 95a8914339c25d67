package web

import (
	"context"
	"crypto/rand"
	"fmt"
	"mime"
	"net/http"
	"sync"

	"github.com/neobot/neobot/core"
)

// EventFile announces a file a tool returned, for the conversation's
// owner to download: {"id", "name", "mime_type", "size", "url"}.
const EventFile = "file"

// maxFileBytes bounds the files the web keeps for download, all
// conversations together: past it the oldest go first. Files live in
// memory, on the instance that ran the turn, like the event stream.
const maxFileBytes = 64 << 20

// fileData is a file event's data.
type fileData struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	MIMEType string `json:"mime_type"`
	Size     int    `json:"size"`
	// URL is the file's download path on this API.
	URL string `json:"url"`
}

// kept is a file held for download.
type kept struct {
	thread string // the conversation's thread key: its owner's alone
	file   core.ToolFile
}

// files holds the files tools returned for download, oldest dropped first
// past maxFileBytes.
type files struct {
	mu    sync.Mutex
	m     map[string]kept
	order []string
	bytes int
}

// put keeps f for thread t and returns its ID.
func (fs *files) put(t core.Thread, f core.ToolFile) string {
	id := rand.Text()[:16]
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.m == nil {
		fs.m = map[string]kept{}
	}
	fs.m[id] = kept{thread: t.Key(), file: f}
	fs.order = append(fs.order, id)
	fs.bytes += len(f.Data)
	for fs.bytes > maxFileBytes && len(fs.order) > 1 {
		old := fs.order[0]
		fs.order = fs.order[1:]
		fs.bytes -= len(fs.m[old].file.Data)
		delete(fs.m, old)
	}
	return id
}

// get returns the file id kept for thread t.
func (fs *files) get(t core.Thread, id string) (core.ToolFile, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	k, ok := fs.m[id]
	if !ok || k.thread != t.Key() {
		return core.ToolFile{}, false
	}
	return k.file, true
}

// Upload keeps a file a tool returned for the conversation's owner and
// announces it with a file event carrying its download URL.
func (r reporter) Upload(_ context.Context, f core.ToolFile) error {
	id := r.a.files.put(r.t, f)
	r.a.show(r.t.ID, EventFile, fileData{ID: id, Name: f.Name, MIMEType: f.MIMEType, Size: len(f.Data),
		URL: fmt.Sprintf("/v1/conversations/%s/files/%s", r.t.ID, id)})
	return nil
}

var _ core.Uploader = reporter{}

// file serves a kept file to the conversation's owner, as an attachment
// (never rendered in the API's origin) of the type the tool gave.
func (a *Adapter) file(w http.ResponseWriter, r *http.Request, user string) {
	t, ok := a.owned(w, r, user)
	if !ok {
		return
	}
	id := r.PathValue("file")
	if len(id) != 16 {
		apiError(w, http.StatusNotFound, "no such file")
		return
	}
	f, ok := a.files.get(t, id)
	if !ok {
		apiError(w, http.StatusNotFound, "no such file: files are kept in memory for a while, on the instance that ran the turn")
		return
	}
	h := w.Header()
	h.Set("Content-Type", f.MIMEType)
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.Name}))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cache-Control", "private, no-store")
	_, _ = w.Write(f.Data)
}
