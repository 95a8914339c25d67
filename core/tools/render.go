package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/neobot/neobot/core/mcp"
)

// render turns a tool result into the text the model reads: text items as
// they are, structured content as JSON when the tool gave no text, and a
// one-line description of images, audio and resources (their bytes would
// only waste the context).
func render(r mcp.Result) string {
	var b strings.Builder
	hasText := false
	for _, c := range r.Content {
		if c.Type == mcp.ContentText {
			hasText = true
		}
	}
	line := func(s string) {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	for _, c := range r.Content {
		switch c.Type {
		case mcp.ContentText:
			line(c.Text)
		case mcp.ContentImage, mcp.ContentAudio:
			line(fmt.Sprintf("[%s: %s, %s]", c.Type, orUnknown(c.MIMEType), size(c.Size)))
		case mcp.ContentResourceLink:
			s := fmt.Sprintf("[resource link: %s <%s>", orUnknown(c.Name), c.URI)
			if c.MIMEType != "" {
				s += ", " + c.MIMEType
			}
			if c.Size >= 0 {
				s += ", " + size(c.Size)
			}
			if c.Description != "" {
				s += ": " + c.Description
			}
			line(s + "]")
		case mcp.ContentResource:
			if c.Data == "" {
				line(fmt.Sprintf("[resource <%s>, %s]\n%s", c.URI, orUnknown(c.MIMEType), c.Text))
			} else {
				line(fmt.Sprintf("[resource <%s>: %s, %s]", c.URI, orUnknown(c.MIMEType), size(c.Size)))
			}
		}
	}
	if len(r.Structured) > 0 && !hasText {
		var buf bytes.Buffer
		if json.Compact(&buf, r.Structured) == nil {
			line(buf.String())
		}
	}
	if b.Len() == 0 {
		if r.IsError {
			return "the tool reported an error without details"
		}
		return "(the tool returned no output)"
	}
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}

func size(n int64) string {
	switch {
	case n < 0:
		return "size unknown"
	case n < 1024:
		return fmt.Sprintf("%d bytes", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1024*1024))
	}
}
