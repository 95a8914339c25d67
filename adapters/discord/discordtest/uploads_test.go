package discordtest_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/neobot/neobot/adapters/discord/discordtest"
)

// discordgo's ChannelMessageSendComplex with Files sends a multipart
// message (payload_json and files[n]); the fake keeps the attachment,
// answers with it, and serves it at its URL. A file over Discord's
// limit is refused as Discord does (40005).
func TestAttachmentsWithDiscordgo(t *testing.T) {
	s := discordtest.New(t)
	dg := session(t, s)
	th := s.AddThread(discordtest.ChannelID, "pictures").ID
	pic := []byte("\x89PNG\r\n\x1a\n fake picture")
	sent, err := dg.ChannelMessageSendComplex(th, &discordgo.MessageSend{
		Files: []*discordgo.File{{Name: "chart.png", ContentType: "image/png", Reader: bytes.NewReader(pic)}},
	})
	if err != nil {
		t.Fatalf("ChannelMessageSendComplex(a file alone) = %v, want it sent", err)
	}
	if len(sent.Attachments) != 1 || sent.Attachments[0].Filename != "chart.png" || sent.Attachments[0].Size != len(pic) {
		t.Fatalf("sent attachments = %+v, want chart.png of %d bytes", sent.Attachments, len(pic))
	}
	msgs := s.Messages()
	m := msgs[len(msgs)-1]
	if m.ChannelID != th || !m.Bot || len(m.Files) != 1 || !bytes.Equal(m.Files[0].Content, pic) || m.Files[0].ContentType != "image/png" {
		t.Fatalf("message = %+v, want the bot's message in the thread with the picture", m)
	}
	resp, err := http.Get(sent.Attachments[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(got, pic) {
		t.Errorf("GET the attachment's url = %q, want the bytes sent", got)
	}

	big := bytes.Repeat([]byte{1}, discordtest.MaxAttachmentBytes+1)
	_, err = dg.ChannelMessageSendComplex(th, &discordgo.MessageSend{
		Files: []*discordgo.File{{Name: "big.bin", Reader: bytes.NewReader(big)}},
	})
	if rest, ok := err.(*discordgo.RESTError); !ok || rest.Response.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a file over 10 MiB = %v, want HTTP 413", err)
	}
}
