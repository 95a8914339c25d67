package web

import (
	"context"
	"crypto/rand"
	"fmt"
	"mime"
	"net/http"

	"github.com/neobot/neobot/core"
)

// EventFile announces a file a tool returned, for the conversation's
// owner to download: {"id", "name", "mime_type", "size", "url"}.
const EventFile = "file"

// fileData is a file event's data.
type fileData struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	MIMEType string `json:"mime_type"`
	Size     int    `json:"size"`
	// URL is the file's download path on this API.
	URL string `json:"url"`
}

// Upload keeps a file a tool returned for the conversation's owner, in
// the store when the adapter has one (any instance serves it, after a
// restart too), and announces it with a file event carrying its download
// URL.
func (r reporter) Upload(ctx context.Context, f core.ToolFile) error {
	id := rand.Text()[:16]
	err := r.a.files.PutFile(ctx, core.StoredFile{ID: id, Owner: r.t.Channel, Thread: r.t.Key(), Name: f.Name, MIMEType: f.MIMEType, Data: f.Data, At: r.a.opts.Now()})
	if err != nil {
		return fmt.Errorf("web: keep %s for download: %w", f.Name, err)
	}
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
	f, ok, err := a.ownFile(r.Context(), user, id)
	if err != nil {
		a.log.Error().Err(err).Str("thread", t.Key()).Msg("web: read a tool's file")
		apiError(w, http.StatusServiceUnavailable, "the file could not be read just now; try again")
		return
	}
	if !ok || f.Thread != t.Key() {
		apiError(w, http.StatusNotFound, "no such file in this conversation")
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
