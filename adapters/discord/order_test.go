package discord

import (
	"net/http"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/discord/discordtest"
)

// heldDownloads holds every attachment download until release is closed.
type heldDownloads struct {
	release chan struct{}
}

func (h heldDownloads) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasPrefix(r.URL.Path, "/attachments/") {
		select {
		case <-h.release:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestFollowUpWaitsForItsMention: a follow-up sent in the new thread
// while the mention that started it is still downloading its attachment
// is taken second, so it is answered second.
func TestFollowUpWaitsForItsMention(t *testing.T) {
	t.Parallel()
	held := heldDownloads{release: make(chan struct{})}
	e := start(t, func(o *Options) { o.HTTPClient = &http.Client{Transport: held} })
	defer close(held.release)
	notes := e.discord.AddFile("notes.md", "text/markdown", []byte("ship it"))
	d := e.discord.Mention(discordtest.Msg{User: "111", Text: "read this", Files: []discordtest.File{notes}})
	if _, err := e.discord.WaitCall(e.ctx, "POST /channels/{channel}/messages/{message}/threads", nil); err != nil {
		t.Fatal(err)
	}
	e.discord.Message(discordtest.Msg{User: "111", Channel: d.ID, Text: "and then?"})
	e.hub.Wait(e.ctx, t, 2) // the follow-up's turn starts; the mention's still downloads
	got := e.hub.Journaled()
	if len(got) != 2 || got[0].EventID != d.ID || got[1].Text != "and then?" {
		t.Fatalf("hub took %+v, want the mention, then the follow-up", got)
	}
	if got[0].Thread != got[1].Thread {
		t.Errorf("mention in %s, follow-up in %s: want one conversation", got[0].Thread, got[1].Thread)
	}
}
