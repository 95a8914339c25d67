package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/adapters/internal/intake/intaketest"
	"github.com/neobot/neobot/core"
)

// TestToolFileDownload: a file a tool returned is announced by a file
// event and downloaded by the conversation's owner at its URL, as an
// attachment of its type; another user, and a made-up file ID, get 404.
func TestToolFileDownload(t *testing.T) {
	aliceToken, aliceHash, _ := NewToken()
	bobToken, bobHash, _ := NewToken()
	a, err := New(Options{Users: map[string]string{aliceHash: "alice", bobHash: "bob"}, Hub: intaketest.NewHub(intaketest.NewThreads()), History: history{}})
	if err != nil {
		t.Fatal(err)
	}
	conv := "0123456789abcdef01234567"
	a.created.add(conv, "alice", time.Now())
	pic := []byte("\x89PNG\r\n\x1a\n a picture")
	up, ok := a.Reporter(thread("alice", conv)).(core.Uploader)
	if !ok {
		t.Fatal("the web reporter is not a core.Uploader")
	}
	if err := up.Upload(context.Background(), core.ToolFile{Name: "chart.png", MIMEType: "image/png", Data: pic, Tool: "charts__draw"}); err != nil {
		t.Fatal(err)
	}
	var f fileData
	if err := json.Unmarshal(waitEvent(t, a, conv, EventFile).Data, &f); err != nil {
		t.Fatal(err)
	}
	if f.Name != "chart.png" || f.Size != len(pic) || f.MIMEType != "image/png" || !strings.HasPrefix(f.URL, "/v1/conversations/"+conv+"/files/") {
		t.Fatalf("file event = %+v, want chart.png with its download URL", f)
	}

	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	get := func(token, path string) (*http.Response, string) {
		r, _ := http.NewRequest("GET", srv.URL+path, nil)
		r.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	res, body := get(aliceToken, f.URL)
	if res.StatusCode != 200 || body != string(pic) || res.Header.Get("Content-Type") != "image/png" ||
		!strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment") {
		t.Errorf("owner's download = %d %s %q, want the PNG as an attachment", res.StatusCode, res.Header, body)
	}
	if res, _ := get(bobToken, f.URL); res.StatusCode != http.StatusNotFound {
		t.Errorf("another user's download = %d, want 404", res.StatusCode)
	}
	if res, _ := get(aliceToken, "/v1/conversations/"+conv+"/files/AAAAAAAAAAAAAAAA"); res.StatusCode != http.StatusNotFound {
		t.Errorf("a made-up file = %d, want 404", res.StatusCode)
	}
}

// TestFilesBounded: without a store, past maxUploadBytes the oldest
// files go first.
func TestFilesBounded(t *testing.T) {
	var fs memFiles
	ctx := t.Context()
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	big := make([]byte, maxUploadBytes/2+1)
	for i, id := range []string{"first", "second"} {
		if err := fs.PutFile(ctx, core.StoredFile{ID: id, Owner: "alice", Data: big, At: at.Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fs.File(ctx, "first"); err == nil {
		t.Error("the oldest file is still kept past the cap")
	}
	if _, err := fs.File(ctx, "second"); err != nil {
		t.Errorf("the newest file was dropped: %v", err)
	}
}
