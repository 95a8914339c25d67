package mcp

import (
	"encoding/base64"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
)

// Tool is a tool a running server advertises.
type Tool struct {
	// Alias is the server's alias.
	Alias string
	// Name is the tool's name on its server.
	Name        string
	Description string
	// InputSchema is the JSON Schema of the tool's arguments.
	InputSchema map[string]any
	// URI is the tool's pinned URI.
	URI ToolURI
}

// Content kinds.
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"
	ContentResource     = "resource"      // an embedded resource
	ContentResourceLink = "resource_link" // a link to a resource
)

// Content is one item of a tool result.
type Content struct {
	// Type is one of the Content* kinds.
	Type string
	// Text is the text of a text item or of a text resource.
	Text string
	// MIMEType describes image, audio and resource items.
	MIMEType string
	// URI and Name identify a resource or resource link.
	URI  string
	Name string
	// Description describes a resource link.
	Description string
	// Data is the base64 payload of an image, audio or blob resource.
	Data string
	// Size is the decoded payload size in bytes, or the linked resource's
	// size when the server gives it; -1 when unknown.
	Size int64
}

// Result is what a tool call returned.
type Result struct {
	Content []Content
	// Structured is the result's structured content (a JSON value), if any.
	Structured json.RawMessage
	// IsError marks a failure the tool reports in-band, for the model to
	// see and adapt to.
	IsError bool
}

// TextResult returns a result holding one text item.
func TextResult(text string) Result {
	return Result{Content: []Content{{Type: ContentText, Text: text, Size: -1}}}
}

// ErrorResult returns an in-band error result holding one text item.
func ErrorResult(text string) Result {
	r := TextResult(text)
	r.IsError = true
	return r
}

func fromCallResult(r *mcp.CallToolResult) Result {
	out := Result{IsError: r.IsError, Content: make([]Content, 0, len(r.Content))}
	for _, c := range r.Content {
		if item, ok := fromContent(c); ok {
			out.Content = append(out.Content, item)
		}
	}
	switch {
	case len(r.RawStructuredContent) > 0 && string(r.RawStructuredContent) != "null":
		out.Structured = r.RawStructuredContent
	case r.StructuredContent != nil:
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			out.Structured = b
		}
	}
	return out
}

func fromContent(c mcp.Content) (Content, bool) {
	switch v := c.(type) {
	case *mcp.TextContent:
		return fromContent(*v)
	case *mcp.ImageContent:
		return fromContent(*v)
	case *mcp.AudioContent:
		return fromContent(*v)
	case *mcp.EmbeddedResource:
		return fromContent(*v)
	case *mcp.ResourceLink:
		return fromContent(*v)
	case mcp.TextContent:
		return Content{Type: ContentText, Text: v.Text, Size: -1}, true
	case mcp.ImageContent:
		return Content{Type: ContentImage, MIMEType: v.MIMEType, Data: v.Data, Size: decodedSize(v.Data)}, true
	case mcp.AudioContent:
		return Content{Type: ContentAudio, MIMEType: v.MIMEType, Data: v.Data, Size: decodedSize(v.Data)}, true
	case mcp.ResourceLink:
		size := int64(-1)
		if v.Size != nil {
			size = *v.Size
		}
		return Content{Type: ContentResourceLink, URI: v.URI, Name: v.Name, Description: v.Description, MIMEType: v.MIMEType, Size: size}, true
	case mcp.EmbeddedResource:
		switch r := v.Resource.(type) {
		case mcp.TextResourceContents:
			return Content{Type: ContentResource, URI: r.URI, MIMEType: r.MIMEType, Text: r.Text, Size: int64(len(r.Text))}, true
		case *mcp.TextResourceContents:
			return Content{Type: ContentResource, URI: r.URI, MIMEType: r.MIMEType, Text: r.Text, Size: int64(len(r.Text))}, true
		case mcp.BlobResourceContents:
			return Content{Type: ContentResource, URI: r.URI, MIMEType: r.MIMEType, Data: r.Blob, Size: decodedSize(r.Blob)}, true
		case *mcp.BlobResourceContents:
			return Content{Type: ContentResource, URI: r.URI, MIMEType: r.MIMEType, Data: r.Blob, Size: decodedSize(r.Blob)}, true
		}
	}
	return Content{}, false
}

func decodedSize(b64 string) int64 {
	return int64(base64.StdEncoding.DecodedLen(len(b64)))
}

func toCallResult(r Result) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: r.IsError, Content: make([]mcp.Content, 0, len(r.Content))}
	for _, c := range r.Content {
		switch c.Type {
		case ContentText:
			out.Content = append(out.Content, mcp.NewTextContent(c.Text))
		case ContentImage:
			out.Content = append(out.Content, mcp.NewImageContent(c.Data, c.MIMEType))
		case ContentAudio:
			out.Content = append(out.Content, mcp.AudioContent{Type: "audio", Data: c.Data, MIMEType: c.MIMEType})
		case ContentResourceLink:
			out.Content = append(out.Content, mcp.NewResourceLink(c.URI, c.Name, c.Description, c.MIMEType))
		case ContentResource:
			if c.Data != "" {
				out.Content = append(out.Content, mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: c.URI, MIMEType: c.MIMEType, Blob: c.Data}))
			} else {
				out.Content = append(out.Content, mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text}))
			}
		}
	}
	if len(r.Structured) > 0 {
		out.StructuredContent = r.Structured
	}
	return out
}

// fromTool converts an advertised tool. Its input schema is sent as the
// server sent it, else read whichever way the SDK holds it.
func fromTool(alias, version string, t mcp.Tool, sent json.RawMessage) Tool {
	out := Tool{Alias: alias, Name: t.Name, Description: t.Description, URI: ToolURI{Alias: alias, Tool: t.Name, Version: version}}
	raw := sent // as the server sent it, when the transport kept it (rawSchemas)
	if raw == nil {
		raw = t.RawInputSchema
	}
	if raw == nil {
		raw, _ = json.Marshal(t.InputSchema)
	}
	var schema map[string]any
	if json.Unmarshal(raw, &schema) != nil || schema == nil {
		schema = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	out.InputSchema = schema
	return out
}
