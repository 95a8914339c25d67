package attach

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/neobot/neobot/core"
)

func TestRead(t *testing.T) {
	content := map[string]string{"a": "hello", "big": strings.Repeat("x", 100), "bin": "\xff\xfe", "fail": "",
		"png": "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "gif": "GIF89a\x01\x00\x01\x00", "webp": "RIFF\x10\x00\x00\x00WEBPVP8 ",
		"svg": `<svg xmlns="http://www.w3.org/2000/svg"></svg>`, "hugepng": "\x89PNG\r\n\x1a\n" + strings.Repeat("x", MaxImageBytes)}
	download := func(_ context.Context, f core.Attachment, w *Buffer) error {
		if f.ID == "fail" {
			return errors.New("boom")
		}
		_, _ = io.WriteString(w, "partial ") // a first attempt that failed midway
		w.Reset()                            // the retry starts over
		_, err := io.WriteString(w, content[f.ID])
		return err
	}
	tests := []struct {
		name     string
		file     core.Attachment
		max      int64
		wantText string
		wantNote string
		// wantImage is the type of the picture read, "" for none.
		wantImage string
	}{
		{"text file", core.Attachment{ID: "a", Name: "a.txt", MIMEType: "text/plain", Size: 5}, 64, "hello", "", ""},
		{"known kind", core.Attachment{ID: "a", Name: "main.go", Kind: "go", Size: 5}, 64, "hello", "", ""},
		{"picture", core.Attachment{ID: "png", Name: "cat.png", MIMEType: "image/png", Size: 16}, 64, "", "", "image/png"},
		{"picture by kind, type from content", core.Attachment{ID: "gif", Name: "cat.jpg", Kind: "jpg", Size: 10}, 64, "", "", "image/gif"},
		{"webp", core.Attachment{ID: "webp", Name: "cat.webp", MIMEType: "image/webp", Size: 16}, 64, "", "", "image/webp"},
		{"text claiming to be a picture", core.Attachment{ID: "a", Name: "cat.png", MIMEType: "image/png", Size: 5}, 64, "", `"cat.png" (not a PNG, JPEG, GIF or WebP picture)`, ""},
		{"svg", core.Attachment{ID: "svg", Name: "logo.svg", MIMEType: "image/svg+xml", Size: 45}, 64, "", `"logo.svg" (not a PNG, JPEG, GIF or WebP picture)`, ""},
		{"picture over the cap", core.Attachment{ID: "png", Name: "big.png", MIMEType: "image/png", Size: MaxImageBytes + 1}, 64, "", `"big.png" (a picture larger than the 5 MB I can look at)`, ""},
		{"picture claims small, is big", core.Attachment{ID: "hugepng", Name: "big.png", MIMEType: "image/png", Size: 10}, 64, "", `"big.png" (I couldn't download it)`, ""},
		{"pictures off", core.Attachment{ID: "png", Name: "cat.png", MIMEType: "image/png", Size: 16}, -1, "", `"cat.png" (I don't read attachments here)`, ""},
		{"a binary file", core.Attachment{ID: "bin", Name: "a.zip", MIMEType: "application/zip", Size: 2}, 64, "", `"a.zip" (I can only read text files)`, ""},
		{"over the cap", core.Attachment{ID: "big", Name: "big.txt", MIMEType: "text/plain", Size: 100}, 64, "", `"big.txt" (larger than the 64 bytes I can read)`, ""},
		{"claims small, is big", core.Attachment{ID: "big", Name: "big.txt", MIMEType: "text/plain", Size: 5}, 64, "", `"big.txt" (I couldn't download it)`, ""},
		{"declared too big", core.Attachment{ID: "big", Name: "big.txt", MIMEType: "text/plain", Size: 5 << 20}, 1 << 20, "", `"big.txt" (larger than the 1 MB I can read)`, ""},
		{"not UTF-8", core.Attachment{ID: "bin", Name: "b.txt", MIMEType: "text/plain", Size: 2}, 64, "", `"b.txt" (I couldn't download it)`, ""},
		{"download fails", core.Attachment{ID: "fail", Name: "f.txt", MIMEType: "text/plain", Size: 2}, 64, "", `"f.txt" (I couldn't download it)`, ""},
		{"reading off", core.Attachment{ID: "a", Name: "a.txt", MIMEType: "text/plain", Size: 5}, -1, "", `"a.txt" (I don't read attachments here)`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var failures int
			files, note := Read(context.Background(), []core.Attachment{tt.file}, tt.max, download, func(core.Attachment, error) { failures++ })
			if len(files) != 1 || files[0].Text != tt.wantText || files[0].Name != tt.file.Name {
				t.Errorf("Read(%s) files = %+v, want one named %s with text %q", tt.file.Name, files, tt.file.Name, tt.wantText)
			}
			if got := files[0].MIMEType; tt.wantImage != "" && (len(files[0].Image) == 0 || got != tt.wantImage) {
				t.Errorf("Read(%s) picture = %d bytes of %q, want %q", tt.file.Name, len(files[0].Image), got, tt.wantImage)
			}
			if tt.wantImage == "" && len(files[0].Image) > 0 {
				t.Errorf("Read(%s) read a picture, want none", tt.file.Name)
			}
			if tt.wantNote == "" && note != "" || !strings.Contains(note, tt.wantNote) {
				t.Errorf("Read(%s) note = %q, want it to contain %q", tt.file.Name, note, tt.wantNote)
			}
			if strings.Contains(tt.wantNote, "couldn't download") && failures != 1 {
				t.Errorf("Read(%s) reported %d failures, want 1", tt.file.Name, failures)
			}
		})
	}
}
