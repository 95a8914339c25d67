package main

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/discord/discordtest"
	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// testPNG is a small red square, a real PNG.
func testPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	img.Set(0, 0, color.RGBA{R: 0xff, A: 0xff})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pictureSent returns the image the model got in the request's user
// message that asks want, and that message's text.
func pictureSent(t *testing.T, srv *llmtest.Server, want string) (text string, images [][]byte, types []string) {
	t.Helper()
	calls := mainRequests(srv)
	if len(calls) == 0 {
		t.Fatal("the model was never called")
	}
	for _, m := range calls[0].Messages {
		if m.Role == "user" && strings.Contains(m.Content, want) {
			for _, img := range m.Images {
				images = append(images, img.Data)
				types = append(types, img.MIMEType)
			}
			return m.Content, images, types
		}
	}
	t.Fatalf("no user message asking %q in the model call: %+v", want, calls[0].Messages)
	return "", nil, nil
}

// TestSlackPictureIn: a picture posted in Slack reaches a model that sees
// images as image content (the bytes, typed by their content although
// Slack called the file a JPEG); a text-only model is told the picture
// was not shown, and the person is told Neo cannot see it.
func TestSlackPictureIn(t *testing.T) {
	pic := testPNG(t)
	t.Run("vision model", func(t *testing.T) {
		w := newSlackWorld(t)
		w.env["NEO_MODEL_VISION"] = "yes"
		scriptModel(t, w.model, llmtest.Text("A red dot on white."), llmtest.Text("The same dot, in private."))
		w.start(t, 1)
		f := w.slack.AddFile("dot.jpg", "image/jpeg", pic)
		mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "what is in this picture?", Files: []slacktest.File{f}})
		w.answerIn(t, "C0GENERAL", mention.TS, "A red dot on white.")
		text, images, types := pictureSent(t, w.model, "what is in this picture?")
		if len(images) != 1 || !bytes.Equal(images[0], pic) || types[0] != "image/png" {
			t.Fatalf("model got %d images (types %v), want the posted picture as one image/png", len(images), types)
		}
		if !strings.Contains(text, `Attached picture "dot.jpg" is shown`) {
			t.Errorf("user message = %q, want it to name the picture shown", text)
		}
		for _, m := range w.slack.Messages() {
			if m.FromBot() && strings.Contains(m.Rendered(), "can't see pictures") {
				t.Errorf("a vision model's thread says Neo cannot see pictures: %q", m.Rendered())
			}
		}

		// A direct message's picture goes the same way.
		g := w.slack.AddFile("dot.png", "image/png", pic)
		dm := w.slack.DM(slacktest.Msg{User: "UBOB", Text: "and this one?", Files: []slacktest.File{g}})
		w.answerIn(t, "D0DM", dm.TS, "The same dot, in private.")
		calls := mainRequests(w.model)
		last := calls[len(calls)-1].Messages
		if m := last[len(last)-1]; m.Role != "user" || len(m.Images) != 1 || !bytes.Equal(m.Images[0].Data, pic) {
			t.Errorf("DM's model call ends with a %s message with %d images, want the user's picture", m.Role, len(m.Images))
		}
	})
	t.Run("text-only model", func(t *testing.T) {
		w := newSlackWorld(t) // test-main: a model the registry does not know sees nothing
		scriptModel(t, w.model, llmtest.Text("I can't see it; what does it show?"))
		w.start(t, 1)
		f := w.slack.AddFile("dot.png", "image/png", pic)
		mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "what is in this picture?", Files: []slacktest.File{f}})
		w.answerIn(t, "C0GENERAL", mention.TS, `I can't see pictures with the model I'm using, so I didn't look at "dot.png".`)
		w.answerIn(t, "C0GENERAL", mention.TS, "I can't see it; what does it show?")
		text, images, _ := pictureSent(t, w.model, "what is in this picture?")
		if len(images) != 0 {
			t.Errorf("a text-only model got %d images, want none", len(images))
		}
		if !strings.Contains(text, `Attached picture "dot.png" was not shown to you`) {
			t.Errorf("user message = %q, want it to say the picture was not shown", text)
		}
	})
}

// TestDiscordPictureIn: the same through Discord: a vision model gets the
// attachment as image content, a text-only model a sentence instead.
func TestDiscordPictureIn(t *testing.T) {
	pic := testPNG(t)
	t.Run("vision model", func(t *testing.T) {
		w := newDiscordWorld(t)
		w.env["NEO_MODEL"] = "gpt-4.1" // the registry knows it sees images
		scriptModel(t, w.model, llmtest.Text("A red dot on white."))
		w.start(t, 1)
		f := w.discord.AddFile("dot.png", "image/png", pic)
		mention := w.discord.Mention(discordtest.Msg{User: "111", Text: "what is in this picture?", Files: []discordtest.File{f}})
		w.answerIn(t, mention.ID, "A red dot on white.")
		_, images, types := pictureSent(t, w.model, "what is in this picture?")
		if len(images) != 1 || !bytes.Equal(images[0], pic) || types[0] != "image/png" {
			t.Fatalf("model got %d images (types %v), want the posted picture as one image/png", len(images), types)
		}
	})
	t.Run("text-only model", func(t *testing.T) {
		w := newDiscordWorld(t)
		w.env["NEO_MODEL"] = "gpt-4.1"
		w.env["NEO_MODEL_VISION"] = "no" // the override wins over the registry
		scriptModel(t, w.model, llmtest.Text("I can't see it; what does it show?"))
		w.start(t, 1)
		f := w.discord.AddFile("dot.png", "image/png", pic)
		mention := w.discord.Mention(discordtest.Msg{User: "111", Text: "what is in this picture?", Files: []discordtest.File{f}})
		w.answerIn(t, mention.ID, `I can't see pictures with the model I'm using, so I didn't look at "dot.png".`)
		w.answerIn(t, mention.ID, "I can't see it; what does it show?")
		text, images, _ := pictureSent(t, w.model, "what is in this picture?")
		if len(images) != 0 || !strings.Contains(text, `Attached picture "dot.png" was not shown to you`) {
			t.Errorf("text-only model got %d images and %q, want none and a sentence", len(images), text)
		}
	})
}
