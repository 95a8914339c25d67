package web

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/internal/intake/intaketest"
	"github.com/neobot/neobot/core"
)

// twoUsers serves one adapter, without limits, to alice and bob.
func twoUsers(t *testing.T, h History) (a *Adapter, srv *httptest.Server, alice, bob string, hub *intaketest.Hub) {
	t.Helper()
	alice, aliceHash, _ := NewToken()
	bob, bobHash, _ := NewToken()
	hub = intaketest.NewHub(intaketest.NewThreads())
	a, err := New(Options{Users: map[string]string{aliceHash: "alice", bobHash: "bob"}, Hub: hub, History: h})
	if err != nil {
		t.Fatal(err)
	}
	srv = httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	return a, srv, alice, bob, hub
}

// TestUploads: a text file and an image are taken and read back by their
// owner only; another type, or a text file over the cap Slack and
// Discord read, is refused with what is taken.
func TestUploads(t *testing.T) {
	_, srv, alice, bob, _ := twoUsers(t, history{})
	post := func(token, name, typ string, body []byte) (int, FileRef, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL+"/v1/uploads?name="+name, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", typ)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var f FileRef
		_ = json.Unmarshal(raw, &f)
		return res.StatusCode, f, string(raw)
	}
	var pic bytes.Buffer
	_ = png.Encode(&pic, image.NewGray(image.Rect(0, 0, 4, 4)))
	for _, tc := range []struct {
		name, typ string
		body      []byte
		status    int
		mime, say string
	}{
		{"notes.txt", "text/plain", []byte("hello"), 201, "text/plain", ""},
		{"main.go", "", []byte("package main"), 201, "text/plain", ""},
		{"chart.png", "image/png", pic.Bytes(), 201, "image/png", ""},
		{"chart.png", "application/octet-stream", pic.Bytes(), 201, "image/png", ""}, // by its bytes
		{"tool.exe", "application/octet-stream", []byte("MZ\x90\x00\x03"), 415, "", "only text files and PNG, JPEG, GIF or WebP images"},
		{"big.txt", "text/plain", bytes.Repeat([]byte("x"), DefaultMaxFileBytes+1), 413, "", "larger than the 256 KB Neo reads"},
		{"huge.png", "image/png", append(pic.Bytes(), make([]byte, DefaultMaxImageBytes)...), 413, "", "too large"},
		{"empty.txt", "text/plain", nil, 400, "", "empty"},
	} {
		status, f, raw := post(alice, tc.name, tc.typ, tc.body)
		if status != tc.status || f.MIMEType != tc.mime || !strings.Contains(raw, tc.say) {
			t.Errorf("upload %s (%s): %d %s; want %d %q %q", tc.name, tc.typ, status, raw, tc.status, tc.mime, tc.say)
		}
	}
	_, f, _ := post(alice, "notes.txt", "text/plain", []byte("alice's notes"))
	if res := call(t, srv, bob, "GET", "/v1/uploads/"+f.ID, ""); res.StatusCode != http.StatusNotFound {
		t.Errorf("bob reads alice's upload: %d", res.StatusCode)
	}
	res := call(t, srv, alice, "GET", "/v1/uploads/"+f.ID, "")
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(body) != "alice's notes" || res.Header.Get("Content-Disposition") == "" {
		t.Errorf("alice reads her upload: %d %q %v", res.StatusCode, body, res.Header)
	}
	// Bob cannot send alice's file.
	id := create(t, srv, bob)
	res = call(t, srv, bob, "POST", "/v1/conversations/"+id+"/messages", `{"text":"look","files":["`+f.ID+`"]}`)
	if res.StatusCode != http.StatusBadRequest {
		t.Errorf("bob sends alice's upload: %d", res.StatusCode)
	}
}

// TestUploadIsAnAttachment: a file sent with a message is journaled as
// an attachment, with its name, type and size, as Slack's and Discord's
// are, and Prepare reads a text file's content into the message's files.
func TestUploadIsAnAttachment(t *testing.T) {
	a, srv, alice, _, hub := twoUsers(t, history{})
	req, _ := http.NewRequest("POST", srv.URL+"/v1/uploads?name=notes.md", strings.NewReader("# remember the milk"))
	req.Header.Set("Authorization", "Bearer "+alice)
	req.Header.Set("Content-Type", "text/markdown")
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var f FileRef
	_ = json.NewDecoder(res.Body).Decode(&f)
	res.Body.Close()
	id := create(t, srv, alice)
	if res := call(t, srv, alice, "POST", "/v1/conversations/"+id+"/messages", `{"text":"read it","files":["`+f.ID+`"]}`); res.StatusCode != http.StatusAccepted {
		t.Fatalf("send: %d", res.StatusCode)
	}
	in := hub.Wait(context.Background(), t, 1)
	want := core.Attachment{ID: f.ID, Name: "notes.md", MIMEType: "text/markdown", Kind: "md", Size: 19, URL: "/v1/uploads/" + f.ID}
	if len(in.Attachments) != 1 || in.Attachments[0] != want {
		t.Fatalf("journaled attachments = %+v, want %+v", in.Attachments, want)
	}
	got := a.Prepare(context.Background(), in)
	if len(got.Files) != 1 || got.Files[0].Text != "# remember the milk" || len(got.Attachments) != 0 {
		t.Errorf("prepared = %+v", got)
	}
}

// TestStopKeepsTheWords: an answer cut short by its owner's Stop stays,
// as answer.stopped with the words written; one taken back for any other
// reason is retracted.
func TestStopKeepsTheWords(t *testing.T) {
	a, srv, alice, _, _ := twoUsers(t, history{})
	id := create(t, srv, alice)
	th := thread("alice", id)
	ctx := context.Background()
	for _, stop := range []bool{true, false} {
		s, _ := a.Reporter(th).(core.Streamer).StreamAnswer(ctx)
		_ = s.Write(ctx, "Rotating the key ")
		_ = s.Write(ctx, "takes three steps")
		if stop {
			if res := call(t, srv, alice, "POST", "/v1/conversations/"+id+"/stop", ""); res.StatusCode != http.StatusAccepted {
				t.Fatalf("stop: %d", res.StatusCode)
			}
		}
		last := a.feed.lastID(id)
		_ = s.Abort(ctx)
		events, _, _ := a.feed.since(id, last)
		if len(events) != 1 {
			t.Fatalf("stop=%v: %d events after Abort", stop, len(events))
		}
		e := events[0]
		switch {
		case stop && (e.Type != EventAnswerStopped || text(e) != "Rotating the key takes three steps"):
			t.Errorf("after Stop: %s %s, want answer.stopped with the words", e.Type, e.Data)
		case !stop && e.Type != EventAnswerRetract:
			t.Errorf("without Stop: %s, want answer.retracted", e.Type)
		}
	}
}

func text(e Event) string {
	var d textData
	_ = json.Unmarshal(e.Data, &d)
	return d.Text
}

// renamed is a History that keeps titles and deletions, of stored
// conversations only.
type renamed struct {
	history
	stored  map[string]bool
	titles  map[string]string
	deleted []string
}

func (h *renamed) Known(_ context.Context, t core.Thread) (bool, error) {
	return h.stored[t.Key()], nil
}
func (h *renamed) Rename(_ context.Context, t core.Thread, title string) error {
	if !h.stored[t.Key()] {
		return core.ErrNotFound
	}
	h.titles[t.Key()] = title
	return nil
}
func (h *renamed) Delete(_ context.Context, t core.Thread) error {
	h.deleted = append(h.deleted, t.Key())
	delete(h.stored, t.Key())
	return nil
}

// TestRenameAndDeleteOwnOnly: a conversation is renamed and deleted by
// its owner; another user gets the 404 of a conversation not there, and
// nothing changes.
func TestRenameAndDeleteOwnOnly(t *testing.T) {
	h := &renamed{stored: map[string]bool{}, titles: map[string]string{}}
	_, srv, alice, bob, _ := twoUsers(t, h)
	id := create(t, srv, alice)
	h.stored[thread("alice", id).Key()] = true
	for _, tc := range []struct {
		token, method, body string
		status              int
	}{
		{bob, "PATCH", `{"title":"mine now"}`, 404},
		{bob, "DELETE", ``, 404},
		{alice, "PATCH", `{"title":"  "}`, 400},
		{alice, "PATCH", `{"title":"` + strings.Repeat("x", 101) + `"}`, 400},
		{alice, "PATCH", `{"title":"Deploy   keys"}`, 200},
	} {
		if res := call(t, srv, tc.token, tc.method, "/v1/conversations/"+id, tc.body); res.StatusCode != tc.status {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.body, res.StatusCode, tc.status)
		}
	}
	if got := h.titles[thread("alice", id).Key()]; got != "Deploy keys" || len(h.deleted) != 0 {
		t.Errorf("title %q, deleted %v", got, h.deleted)
	}
	if res := call(t, srv, alice, "DELETE", "/v1/conversations/"+id, ""); res.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: %d", res.StatusCode)
	}
	if res := call(t, srv, alice, "GET", "/v1/conversations/"+id, ""); res.StatusCode != http.StatusNotFound {
		t.Errorf("a deleted conversation answers %d", res.StatusCode)
	}
	if len(h.deleted) != 1 {
		t.Errorf("deleted %v", h.deleted)
	}
}

// TestRenameBeforeTheFirstMessage: a conversation renamed before anything
// is stored lists under its new title, and the store gets the title once
// the first message is in.
func TestRenameBeforeTheFirstMessage(t *testing.T) {
	h := &renamed{stored: map[string]bool{}, titles: map[string]string{}}
	_, srv, alice, _, _ := twoUsers(t, h)
	id := create(t, srv, alice)
	if res := call(t, srv, alice, "PATCH", "/v1/conversations/"+id, `{"title":"Plans"}`); res.StatusCode != http.StatusOK {
		t.Fatalf("rename: %d", res.StatusCode)
	}
	res := call(t, srv, alice, "GET", "/v1/conversations", "")
	var list struct{ Conversations []Summary }
	_ = json.NewDecoder(res.Body).Decode(&list)
	res.Body.Close()
	if len(list.Conversations) != 1 || list.Conversations[0].Title != "Plans" {
		t.Errorf("listed %+v, want it titled Plans", list.Conversations)
	}
	h.stored[thread("alice", id).Key()] = true // as journaling the first message does
	if res := call(t, srv, alice, "POST", "/v1/conversations/"+id+"/messages", `{"text":"hi"}`); res.StatusCode != http.StatusAccepted {
		t.Fatalf("send: %d", res.StatusCode)
	}
	if got := h.titles[thread("alice", id).Key()]; got != "Plans" {
		t.Errorf("stored title %q, want Plans", got)
	}
}

// searched is a History with two conversations of alice's and one of
// bob's, said in words the search finds.
type searched struct{ history }

func (searched) Conversations(_ context.Context, user string, _ int) ([]Summary, error) {
	if user == "bob" {
		return []Summary{{ID: strings.Repeat("c", 24), Title: "Bob's deploy keys"}}, nil
	}
	return []Summary{{ID: strings.Repeat("a", 24), Title: "Deploy keys"}, {ID: strings.Repeat("b", 24), Title: "Lunch"}}, nil
}

func (searched) Transcript(_ context.Context, t core.Thread) ([]Said, error) {
	return map[string][]Said{
		strings.Repeat("a", 24): {{Role: "user", Text: "how do I rotate them?"}},
		strings.Repeat("b", 24): {{Role: "user", Text: "pizza?"}, {Role: "assistant", Text: "The PIZZA place on Main Street."}},
		strings.Repeat("c", 24): {{Role: "user", Text: "pizza for bob"}},
	}[t.ID], nil
}

// TestSearch: ?q= keeps the caller's conversations whose title or
// transcript holds the words, in any case, and never another user's.
func TestSearch(t *testing.T) {
	_, srv, alice, _, _ := twoUsers(t, searched{})
	for q, want := range map[string]string{
		"deploy":     "Deploy keys",
		"ROTATE":     "Deploy keys",
		"pizza":      "Lunch",
		"main%20str": "Lunch",
		"bob":        "",
		"":           "Deploy keys,Lunch",
	} {
		res := call(t, srv, alice, "GET", "/v1/conversations?q="+q, "")
		var list struct{ Conversations []Summary }
		_ = json.NewDecoder(res.Body).Decode(&list)
		res.Body.Close()
		var titles []string
		for _, c := range list.Conversations {
			titles = append(titles, c.Title)
		}
		if got := strings.Join(titles, ","); got != want {
			t.Errorf("search %q = %q, want %q", q, got, want)
		}
	}
}
