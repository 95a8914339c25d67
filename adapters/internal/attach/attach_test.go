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
	content := map[string]string{"a": "hello", "big": strings.Repeat("x", 100), "bin": "\xff\xfe", "fail": ""}
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
	}{
		{"text file", core.Attachment{ID: "a", Name: "a.txt", MIMEType: "text/plain", Size: 5}, 64, "hello", ""},
		{"known kind", core.Attachment{ID: "a", Name: "main.go", Kind: "go", Size: 5}, 64, "hello", ""},
		{"image", core.Attachment{ID: "a", Name: "cat.png", MIMEType: "image/png", Size: 5}, 64, "", `"cat.png" (I can only read text files)`},
		{"over the cap", core.Attachment{ID: "big", Name: "big.txt", MIMEType: "text/plain", Size: 100}, 64, "", `"big.txt" (larger than the 64 bytes I can read)`},
		{"claims small, is big", core.Attachment{ID: "big", Name: "big.txt", MIMEType: "text/plain", Size: 5}, 64, "", `"big.txt" (I couldn't download it)`},
		{"declared too big", core.Attachment{ID: "big", Name: "big.txt", MIMEType: "text/plain", Size: 5 << 20}, 1 << 20, "", `"big.txt" (larger than the 1 MB I can read)`},
		{"not UTF-8", core.Attachment{ID: "bin", Name: "b.txt", MIMEType: "text/plain", Size: 2}, 64, "", `"b.txt" (I couldn't download it)`},
		{"download fails", core.Attachment{ID: "fail", Name: "f.txt", MIMEType: "text/plain", Size: 2}, 64, "", `"f.txt" (I couldn't download it)`},
		{"reading off", core.Attachment{ID: "a", Name: "a.txt", MIMEType: "text/plain", Size: 5}, -1, "", `"a.txt" (I don't read attachments here)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var failures int
			files, note := Read(context.Background(), []core.Attachment{tt.file}, tt.max, download, func(core.Attachment, error) { failures++ })
			if len(files) != 1 || files[0].Text != tt.wantText || files[0].Name != tt.file.Name {
				t.Errorf("Read(%s) files = %+v, want one named %s with text %q", tt.file.Name, files, tt.file.Name, tt.wantText)
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
