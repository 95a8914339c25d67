package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// pngOf returns a w x h PNG.
func pngOf(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestVision(t *testing.T) {
	tests := []struct {
		model       string
		sees, known bool
	}{
		{"gpt-4.1", true, true},
		{"gpt-4o-mini", true, true},
		{"gpt-4", false, true},
		{"o3-mini", false, true},
		{"o3", true, true},
		{"accounts/fireworks/models/qwen2.5-vl-32b-instruct", true, true},
		{"accounts/fireworks/models/qwen3-235b-a22b", false, true},
		{"Qwen/Qwen3-VL-235B-A22B-Instruct", true, true},
		{"meta-llama/Llama-4-Scout-17B-16E-Instruct", true, true},
		{"accounts/fireworks/models/deepseek-v3", false, true},
		{"llama-3.2-11b-vision-instruct", true, true},
		{"meta-llama/Llama-3.3-70B-Instruct-Turbo", false, true},
		{"gpt-oss-120b", false, true},
		{"my-local-model", false, false},
	}
	for _, tt := range tests {
		sees, known := llm.Vision(tt.model)
		if sees != tt.sees || known != tt.known {
			t.Errorf("Vision(%q) = %v, %v, want %v, %v", tt.model, sees, known, tt.sees, tt.known)
		}
	}
}

func TestSeesImagesOverride(t *testing.T) {
	yes, no := true, false
	for _, tt := range []struct {
		model  string
		vision *bool
		want   bool
	}{
		{"gpt-4.1", nil, true},
		{"gpt-4.1", &no, false},
		{"my-local-model", nil, false},
		{"my-local-model", &yes, true},
	} {
		c, err := llm.New(llm.Config{Model: tt.model, BaseURL: "http://127.0.0.1:1/v1", Vision: tt.vision})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.SeesImages(); got != tt.want {
			t.Errorf("SeesImages(%s, override %v) = %v, want %v", tt.model, tt.vision, got, tt.want)
		}
	}
}

func TestSniffImage(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want string
		ok   bool
	}{
		{"png", pngOf(t, 2, 2), "image/png", true},
		{"jpeg", []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"), "image/jpeg", true},
		{"gif", []byte("GIF89a\x01\x00\x01\x00"), "image/gif", true},
		{"webp", []byte("RIFF\x10\x00\x00\x00WEBPVP8 "), "image/webp", true},
		{"text claiming to be a png", []byte("hello, I am a picture"), "text/plain; charset=utf-8", false},
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"></svg>`), "text/plain; charset=utf-8", false},
	}
	for _, tt := range tests {
		got, ok := llm.SniffImage(tt.data)
		if got != tt.want || ok != tt.ok {
			t.Errorf("SniffImage(%s) = %q, %v, want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestImageTokens(t *testing.T) {
	tests := []struct {
		name string
		img  llm.Image
		want int
	}{
		{"small png, one tile", llm.Image{MIMEType: "image/png", Data: pngOf(t, 100, 100)}, 85 + 170},
		{"1024 square: 768x768, four tiles", llm.Image{MIMEType: "image/png", Data: pngOf(t, 1024, 1024)}, 85 + 170*4},
		{"webp, size unread", llm.Image{MIMEType: "image/webp", Data: []byte("RIFF\x10\x00\x00\x00WEBPVP8 ")}, 85 + 170*6},
	}
	for _, tt := range tests {
		if got := tt.img.Tokens(); got != tt.want {
			t.Errorf("Tokens(%s) = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// A user message with pictures goes out as a content array, which the
// fake model records as the text and the pictures; a message without
// keeps the plain string content (the golden request is unchanged).
func TestImagesOnTheWire(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.Text("a grey square"))
	c, err := llm.New(llm.Config{Model: "gpt-4.1", BaseURL: srv.BaseURL()})
	if err != nil {
		t.Fatal(err)
	}
	pic := pngOf(t, 4, 4)
	msgs := []llm.Message{
		llm.SystemMessage("be brief"),
		{Role: llm.RoleUser, Content: "what is this?", Images: []llm.Image{{Name: "sq.png", MIMEType: "image/png", Data: pic}}},
		llm.AssistantMessage("a square"),
		// Text that spells the encoder's placeholder stays text.
		{Role: llm.RoleUser, Content: `and "url":"neobot-image"} this?`, Images: []llm.Image{{MIMEType: "image/gif", Data: []byte("GIF89a")}}},
	}
	if _, err := c.Chat(context.Background(), llm.ChatRequest{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	req := srv.Requests()[0]
	got := req.Messages[1]
	if got.Content != "what is this?" || len(got.Images) != 1 || got.Images[0].MIMEType != "image/png" || !bytes.Equal(got.Images[0].Data, pic) {
		t.Fatalf("recorded user message = %q with %d images, want the text and the PNG", got.Content, len(got.Images))
	}
	var body struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatal(err)
	}
	if m := req.Messages[3]; m.Content != `and "url":"neobot-image"} this?` || len(m.Images) != 1 || string(m.Images[0].Data) != "GIF89a" || m.Images[0].MIMEType != "image/gif" {
		t.Errorf("second picture message = %q with %+v, want its text intact and the GIF", m.Content, m.Images)
	}
	if sys := string(body.Messages[0].Content); sys != `"be brief"` {
		t.Errorf("system content = %s, want a plain string", sys)
	}
	if user := string(body.Messages[1].Content); !strings.HasPrefix(user, `[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,`) {
		t.Errorf("user content = %.120s, want a text part then an image_url data URL", user)
	}
}

// A picture type that would need escaping is refused, never spliced into
// the request as it is.
func TestImageTypeRefused(t *testing.T) {
	c, err := llm.New(llm.Config{Model: "gpt-4.1", BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "hi", Images: []llm.Image{{MIMEType: `image/png","x":"`, Data: []byte("x")}}}}
	if _, err := c.Chat(context.Background(), llm.ChatRequest{Messages: msgs}); err == nil || !strings.Contains(err.Error(), "not a picture type") {
		t.Errorf("Chat(picture of a made-up type) = %v, want it refused before sending", err)
	}
}
