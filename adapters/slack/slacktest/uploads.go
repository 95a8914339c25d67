package slacktest

import (
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
)

// upload is a file announced by files.getUploadURLExternal: its bytes
// arrive at its upload URL, and files.completeUploadExternal shares it.
type upload struct {
	name   string
	length int
	// content is nil until the bytes are posted.
	content []byte
}

// answerUploadLocked carries out Slack's external upload flow, as
// documented: files.getUploadURLExternal takes filename and length and
// returns upload_url and file_id; the client POSTs the bytes to
// upload_url (raw, or as a multipart form); files.completeUploadExternal
// takes files (a JSON array of {id, title}) and shares them in
// channel_id, as a reply when thread_ts is given. s.mu is held.
func (s *Server) answerUploadLocked(method string, p url.Values) map[string]any {
	switch method {
	case "files.getUploadURLExternal":
		length, err := strconv.Atoi(p.Get("length"))
		if p.Get("filename") == "" || err != nil || length <= 0 {
			return fail("invalid_arguments")
		}
		id := s.nextIDLocked("F")
		s.uploads[id] = upload{name: p.Get("filename"), length: length}
		return map[string]any{"ok": true, "upload_url": s.srv.URL + "/upload/" + id, "file_id": id}
	}
	var files []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(p.Get("files")), &files); err != nil || len(files) == 0 {
		return fail("invalid_arguments")
	}
	channel := p.Get("channel_id")
	m := Message{Channel: channel, ThreadTS: p.Get("thread_ts"), User: BotUserID, BotID: BotID, Text: p.Get("initial_comment")}
	var shared []map[string]any
	for _, f := range files {
		up, ok := s.uploads[f.ID]
		if !ok || up.content == nil {
			return fail("file_not_found") // never announced, or its bytes never came
		}
		file := File{ID: f.ID, Name: up.name, Content: up.content, Size: len(up.content),
			MIMEType: mime.TypeByExtension(path.Ext(up.name))}
		if i := strings.LastIndexByte(up.name, '.'); i >= 0 {
			file.FileType = up.name[i+1:]
		}
		if file.MIMEType == "" {
			file.MIMEType = http.DetectContentType(up.content)
		}
		delete(s.uploads, f.ID)
		s.files[f.ID] = file
		m.Files = append(m.Files, file)
		title := cmpOr(f.Title, up.name)
		shared = append(shared, map[string]any{"id": f.ID, "title": title})
	}
	if channel != "" {
		// Shared in a channel, the files show as a message there.
		m.TS = s.nextTSLocked()
		s.addLocked(m)
		s.notifyLocked()
	}
	return map[string]any{"ok": true, "files": shared}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// serveUpload takes the bytes of an announced upload, raw or as the one
// file of a multipart form, and refuses a length other than announced.
func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var content []byte
	var err error
	if mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		content, err = formFile(multipart.NewReader(r.Body, params["boundary"]))
	} else {
		content, err = io.ReadAll(r.Body)
	}
	s.mu.Lock()
	s.rec.RecordLocked(Call{Method: "upload", Params: url.Values{"id": {id}}, At: time.Now()})
	up, ok := s.uploads[id]
	switch {
	case !ok:
		s.mu.Unlock()
		http.NotFound(w, r)
		return
	case err != nil || len(content) != up.length:
		s.mu.Unlock()
		http.Error(w, "the upload's length is not the one announced", http.StatusBadRequest)
		return
	}
	up.content = content
	s.uploads[id] = up
	s.mu.Unlock()
	_, _ = io.WriteString(w, "OK - "+strconv.Itoa(len(content)))
}

// formFile returns the content of the first file part of a form.
func formFile(mr *multipart.Reader) ([]byte, error) {
	for {
		part, err := mr.NextPart()
		if err != nil {
			return nil, err
		}
		if part.FileName() != "" {
			return io.ReadAll(part)
		}
	}
}
