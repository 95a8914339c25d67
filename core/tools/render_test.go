package tools

import (
	"testing"

	"github.com/neobot/neobot/core/mcp"
)

func TestRender(t *testing.T) {
	tests := []struct {
		name string
		in   mcp.Result
		want string
	}{
		{"text", mcp.TextResult("hello"), "hello"},
		{"two texts", mcp.Result{Content: []mcp.Content{{Type: mcp.ContentText, Text: "a"}, {Type: mcp.ContentText, Text: "b"}}}, "a\nb"},
		{"structured only", mcp.Result{Structured: []byte(`{ "sum": 5 }`)}, `{"sum":5}`},
		{"structured beside text", mcp.Result{Content: []mcp.Content{{Type: mcp.ContentText, Text: "5"}}, Structured: []byte(`{"sum":5}`)}, "5"},
		{"image", mcp.Result{Content: []mcp.Content{{Type: mcp.ContentImage, MIMEType: "image/png", Data: "AAAA", Size: 2048}}}, "[image: image/png, 2.0 KiB]"},
		{"audio", mcp.Result{Content: []mcp.Content{{Type: mcp.ContentAudio, MIMEType: "audio/wav", Size: 10}}}, "[audio: audio/wav, 10 bytes]"},
		{"text resource", mcp.Result{Content: []mcp.Content{{Type: mcp.ContentResource, URI: "file:///a.txt", MIMEType: "text/plain", Text: "body"}}}, "[resource <file:///a.txt>, text/plain]\nbody"},
		{"blob resource", mcp.Result{Content: []mcp.Content{{Type: mcp.ContentResource, URI: "file:///a.bin", Data: "AAAA", Size: 3}}}, "[resource <file:///a.bin>: unknown type, 3 bytes]"},
		{"resource link", mcp.Result{Content: []mcp.Content{{Type: mcp.ContentResourceLink, URI: "test://1", Name: "one", MIMEType: "text/plain", Size: -1, Description: "the first"}}}, "[resource link: one <test://1>, text/plain: the first]"},
		{"empty", mcp.Result{}, "(the tool returned no output)"},
		{"empty error", mcp.Result{IsError: true}, "the tool reported an error without details"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := render(tt.in); got != tt.want {
				t.Errorf("render() = %q, want %q", got, tt.want)
			}
		})
	}
}
