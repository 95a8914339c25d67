package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/neobot/neobot/core"
)

// maxTitle bounds a title set by rename, in bytes.
const maxTitle = 100

// rename sets a conversation's title: {"title"}. A conversation created
// and not yet written to keeps it until its first message is stored.
func (a *Adapter) rename(w http.ResponseWriter, r *http.Request, user string) {
	t, ok := a.owned(w, r, user)
	if !ok {
		return
	}
	var body struct {
		Title string `json:"title"`
	}
	if err := decode(r, &body); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	title := strings.Join(strings.Fields(body.Title), " ")
	switch {
	case title == "":
		apiError(w, http.StatusBadRequest, `send {"title": "<a few words>"}: the title is empty`)
		return
	case len(title) > maxTitle:
		apiError(w, http.StatusBadRequest, "the title is longer than 100 bytes; shorten it")
		return
	}
	err := a.opts.History.Rename(r.Context(), t, title)
	if errors.Is(err, core.ErrNotFound) && a.created.retitle(t.ID, user, title) {
		err = nil // not stored yet: the title waits for the first message
	}
	if err != nil {
		if errors.Is(err, core.ErrNotFound) {
			apiError(w, http.StatusNotFound, "no such conversation")
			return
		}
		a.log.Error().Err(err).Str("thread", t.Key()).Msg("web: rename conversation")
		apiError(w, http.StatusServiceUnavailable, "the conversation could not be renamed just now; try again")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": t.ID, "title": title})
}

// remove deletes a conversation with its transcript. A turn still running
// in it is stopped first.
func (a *Adapter) remove(w http.ResponseWriter, r *http.Request, user string) {
	t, ok := a.owned(w, r, user)
	if !ok {
		return
	}
	_ = a.submit(r, t, "stop", "", nil) // nothing running is fine
	if err := a.opts.History.Delete(r.Context(), t); err != nil {
		a.log.Error().Err(err).Str("thread", t.Key()).Msg("web: delete conversation")
		apiError(w, http.StatusServiceUnavailable, "the conversation could not be deleted just now; try again")
		return
	}
	a.created.remove(t.ID, user)
	if a.mem != nil {
		a.mem.dropThread(t.Key()) // a store drops them with the thread
	}
	w.WriteHeader(http.StatusNoContent)
}

// matches filters list to the conversations whose title or transcript
// contains q, ignoring case.
func (a *Adapter) matches(r *http.Request, user string, list []Summary, q string) []Summary {
	q = strings.ToLower(q)
	out := []Summary{}
	for _, s := range list {
		if strings.Contains(strings.ToLower(s.Title), q) {
			out = append(out, s)
			continue
		}
		said, err := a.opts.History.Transcript(r.Context(), thread(user, s.ID))
		if err != nil {
			continue
		}
		for _, m := range said {
			if strings.Contains(strings.ToLower(m.Text), q) {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// retitle sets the title of id when it is user's and not yet stored; it
// reports whether it was there.
func (c *createdSet) retitle(id, user, title string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	cc, ok := c.m[id]
	if !ok || cc.user != user {
		return false
	}
	cc.title = title
	c.m[id] = cc
	return true
}

// takeTitle returns the title id was given before its first message
// was stored ("" for none), once: the store keeps it from then on.
func (c *createdSet) takeTitle(id, user string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	cc, ok := c.m[id]
	if !ok || cc.user != user || cc.title == "" {
		return ""
	}
	title := cc.title
	cc.title = ""
	c.m[id] = cc
	return title
}

func (c *createdSet) remove(id, user string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m[id].user == user {
		delete(c.m, id)
	}
}
