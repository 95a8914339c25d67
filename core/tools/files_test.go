package tools

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/mcp"
)

func TestSendFiles(t *testing.T) {
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		name    string
		content []mcp.Content
		want    []string // name:type of each file sent
	}{
		{"an image", []mcp.Content{{Type: mcp.ContentText, Text: "here"}, {Type: mcp.ContentImage, MIMEType: "image/png", Data: b64(png), Size: int64(len(png))}},
			[]string{"every__draw-1.png:image/png"}},
		{"an image's type is what its bytes say", []mcp.Content{{Type: mcp.ContentImage, MIMEType: "image/jpeg", Data: b64(png), Size: 16}},
			[]string{"every__draw-1.png:image/png"}},
		{"an image that is not one", []mcp.Content{{Type: mcp.ContentImage, MIMEType: "image/png", Data: b64("<svg/>"), Size: 6}}, nil},
		{"a blob resource named by its URI", []mcp.Content{{Type: mcp.ContentResource, URI: "file:///tmp/report.pdf", MIMEType: "application/pdf", Data: b64("%PDF-1.7"), Size: 8}},
			[]string{"report.pdf:application/pdf"}},
		{"a text resource", []mcp.Content{{Type: mcp.ContentResource, URI: "demo://resource/7", Text: "hello", Size: 5}},
			[]string{"every__draw-1.txt:text/plain"}},
		{"a URI path made safe", []mcp.Content{{Type: mcp.ContentResource, URI: "file:///x/my%20file;rm.csv", MIMEType: "text/csv", Text: "a,b", Size: 3}},
			[]string{"my_file_rm.csv:text/csv"}},
		{"a link is not a file", []mcp.Content{{Type: mcp.ContentResourceLink, URI: "file:///a.txt", Name: "a.txt", Size: -1}}, nil},
		{"too big", []mcp.Content{{Type: mcp.ContentImage, MIMEType: "image/png", Data: "AAAA", Size: MaxFileBytes + 1}}, nil},
		{"bad base64", []mcp.Content{{Type: mcp.ContentImage, MIMEType: "image/png", Data: "!!!", Size: 2}}, nil},
		{"at most MaxFiles", []mcp.Content{
			{Type: mcp.ContentResource, Text: "1"}, {Type: mcp.ContentResource, Text: "2"}, {Type: mcp.ContentResource, Text: "3"},
			{Type: mcp.ContentResource, Text: "4"}, {Type: mcp.ContentResource, Text: "5"}},
			[]string{"every__draw-1.txt:text/plain", "every__draw-2.txt:text/plain", "every__draw-3.txt:text/plain", "every__draw-4.txt:text/plain"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			ctx := core.WithFileSink(context.Background(), func(f core.ToolFile) {
				if f.Tool != "every__draw" || len(f.Data) == 0 {
					t.Errorf("file %+v, want the tool's name and bytes", f)
				}
				got = append(got, f.Name+":"+f.MIMEType)
			})
			sendFiles(ctx, "every__draw", mcp.Result{Content: tt.content})
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("sendFiles = %v, want %v", got, tt.want)
			}
		})
	}
}
