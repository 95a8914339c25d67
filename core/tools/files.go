package tools

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/mcp"
)

// MaxFileBytes caps a file a tool returns that is posted in the thread:
// under Discord's 10 MiB attachment limit for any server, far under
// Slack's. A larger one is only described to the model.
const MaxFileBytes = 8 << 20

// MaxFiles caps the files one call posts; the rest are only described.
const MaxFiles = 4

// sendFiles hands the pictures and embedded resources of r to the call's
// file sink (core.WithFileSink), within MaxFiles and MaxFileBytes. name
// is the function the model called.
func sendFiles(ctx context.Context, name string, r mcp.Result) {
	n := 0
	for _, c := range r.Content {
		if n >= MaxFiles {
			return
		}
		f, ok := toolFile(name, n+1, c)
		if !ok || len(f.Data) > MaxFileBytes {
			continue
		}
		if !core.SendFile(ctx, f) {
			return // no one takes files here
		}
		n++
	}
}

// toolFile converts an image or an embedded resource into a file named
// for the thread; anything else, or a payload that does not decode, is
// not one.
func toolFile(tool string, i int, c mcp.Content) (core.ToolFile, bool) {
	if c.Size > MaxFileBytes {
		return core.ToolFile{}, false
	}
	f := core.ToolFile{Tool: tool, MIMEType: c.MIMEType}
	switch {
	case c.Type == mcp.ContentImage, c.Type == mcp.ContentResource && c.Data != "":
		data, err := base64.StdEncoding.DecodeString(c.Data)
		if err != nil || len(data) == 0 {
			return core.ToolFile{}, false
		}
		f.Data = data
		if mt, ok := llm.SniffImage(data); ok {
			f.MIMEType = mt // a picture's type is what its bytes say
		} else if c.Type == mcp.ContentImage {
			return core.ToolFile{}, false
		}
	case c.Type == mcp.ContentResource && c.Text != "":
		f.Data = []byte(c.Text)
		if f.MIMEType == "" {
			f.MIMEType = "text/plain"
		}
	default:
		return core.ToolFile{}, false
	}
	f.Name = fileName(tool, i, c.URI, f.MIMEType)
	return f, true
}

// extensions name a file by its type when its URI gives no name.
var extensions = map[string]string{
	"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp",
	"text/plain": ".txt", "text/markdown": ".md", "text/csv": ".csv", "text/html": ".html",
	"application/json": ".json", "application/pdf": ".pdf", "application/zip": ".zip",
}

// fileName is the last segment of the resource's URI when it looks like a
// file name, else the tool's name, the item's number and an extension by
// type; either way only letters, digits, '.', '-' and '_'.
func fileName(tool string, i int, uri, mimeType string) string {
	if u, err := url.Parse(uri); err == nil && uri != "" {
		p := u.Path
		if p == "" {
			p = u.Opaque
		}
		if base := clean(path.Base(p)); strings.Contains(base, ".") && !strings.HasPrefix(base, ".") {
			return base
		}
	}
	ext, ok := extensions[strings.ToLower(strings.TrimSpace(strings.Split(mimeType, ";")[0]))]
	if !ok {
		ext = ".bin"
	}
	return fmt.Sprintf("%s-%d%s", clean(tool), i, ext)
}

func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
	if len(s) > 80 {
		s = s[len(s)-80:]
	}
	return s
}
