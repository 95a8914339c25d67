package slacktest_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/neobot/neobot/adapters/slack/slacktest"
)

// slack-go's UploadFileContext runs the external upload flow against the
// fake: the file shows as a message in the thread, with its bytes.
func TestExternalUploadWithSlackGo(t *testing.T) {
	s := slacktest.New(t)
	api := slack.New("xoxb-test", slack.OptionAPIURL(s.APIURL()))
	content := []byte("\x89PNG\r\n\x1a\n fake picture")
	ctx := context.Background()
	sum, err := api.UploadFileContext(ctx, slack.UploadFileParameters{
		Reader: bytes.NewReader(content), FileSize: len(content), Filename: "chart.png", Title: "chart.png",
		Channel: "C0GENERAL", ThreadTimestamp: "1700000000.000100",
	})
	if err != nil {
		t.Fatalf("UploadFileContext = %v, want the file shared", err)
	}
	if sum.ID == "" || sum.Title != "chart.png" {
		t.Errorf("UploadFileContext = %+v, want the file's ID and title", sum)
	}
	msgs := s.Messages()
	if len(msgs) != 1 {
		t.Fatalf("messages = %+v, want one sharing the file", msgs)
	}
	m := msgs[0]
	if !m.FromBot() || m.Channel != "C0GENERAL" || m.ThreadTS != "1700000000.000100" || len(m.Files) != 1 {
		t.Fatalf("message = %+v, want the bot's reply in the thread with one file", m)
	}
	if f := m.Files[0]; f.Name != "chart.png" || !bytes.Equal(f.Content, content) || f.MIMEType != "image/png" {
		t.Errorf("file = %s %s %q, want chart.png image/png with the bytes uploaded", f.Name, f.MIMEType, f.Content)
	}
	if n := len(s.Calls("files.getUploadURLExternal")) + len(s.Calls("files.completeUploadExternal")); n != 2 {
		t.Errorf("upload calls = %d, want getUploadURLExternal and completeUploadExternal once each", n)
	}
}

func TestExternalUploadRefusals(t *testing.T) {
	s := slacktest.New(t)
	api := slack.New("xoxb-test", slack.OptionAPIURL(s.APIURL()))
	ctx := context.Background()
	// Completing a file whose bytes never came is refused.
	u, err := api.GetUploadURLExternalContext(ctx, slack.GetUploadURLExternalParameters{FileName: "a.txt", FileSize: 5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := api.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{
		Files: []slack.FileSummary{{ID: u.FileID}}, Channel: "C0GENERAL"}); err == nil || !strings.Contains(err.Error(), "file_not_found") {
		t.Errorf("complete before the bytes = %v, want file_not_found", err)
	}
	// Bytes of another length than announced are refused.
	resp, err := http.Post(u.UploadURL, "application/octet-stream", strings.NewReader("too long by far"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("upload of the wrong length = HTTP %d, want 400", resp.StatusCode)
	}
	// Raw bytes of the announced length are taken.
	resp, err = http.Post(u.UploadURL, "application/octet-stream", strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("raw upload = HTTP %d, want 200", resp.StatusCode)
	}
	if _, err := api.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{
		Files: []slack.FileSummary{{ID: u.FileID}}, Channel: "C0GENERAL"}); err != nil {
		t.Errorf("complete after a raw upload = %v, want it shared", err)
	}
}
