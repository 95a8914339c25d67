package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The npm reference servers, pinned in the repository's package-lock and
// installed by `make test`.

var everythingTools = []string{
	"echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
	"get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource",
	"toggle-simulated-logging", "toggle-subscriber-updates", "trigger-long-running-operation",
	"simulate-research-query",
}

var filesystemTools = []string{
	"create_directory", "directory_tree", "edit_file", "get_file_info", "list_allowed_directories",
	"list_directory", "list_directory_with_sizes", "move_file", "read_file", "read_media_file",
	"read_multiple_files", "read_text_file", "search_files", "write_file",
}

func TestEverythingServer(t *testing.T) {
	bin := repoBin(t, "mcp-server-everything")
	feed := make(statusFeed, 64)
	m := start(t, Options{Manifest: manifest(ServerSpec{
		Alias: "every", Transport: TransportStdio, Command: bin, Args: []string{"stdio"},
		Version: "2026.8.31", Tools: everythingTools,
	}), OnStatus: feed.on})
	if st := m.Status()[0]; st.State != StateUp {
		t.Fatalf("Status() = %s %q, want up", st.State, st.Problem)
	}
	ctx := context.Background()
	tests := []struct {
		tool  string
		args  map[string]any
		check func(Result) bool
	}{
		{"echo", map[string]any{"message": "hi"}, func(r Result) bool { return strings.Contains(r.Content[0].Text, "hi") }},
		{"get-sum", map[string]any{"a": 2, "b": 3}, func(r Result) bool { return strings.Contains(r.Content[0].Text, "5") }},
		{"get-tiny-image", nil, func(r Result) bool {
			for _, c := range r.Content {
				if c.Type == ContentImage && c.MIMEType == "image/png" && c.Size > 0 {
					return true
				}
			}
			return false
		}},
		{"get-structured-content", map[string]any{"location": "New York"}, func(r Result) bool { return len(r.Structured) > 0 }},
		{"get-resource-reference", map[string]any{"resourceType": "Text", "resourceId": 1}, func(r Result) bool {
			for _, c := range r.Content {
				if c.Type == ContentResource && c.URI != "" {
					return true
				}
			}
			return false
		}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res, err := m.Call(ctx, "every", tt.tool, tt.args)
			if err != nil || res.IsError || !tt.check(res) {
				t.Errorf("Call(%s) = %+v, %v; want a successful result of the right shape", tt.tool, res, err)
			}
		})
	}
}

func TestFilesystemServer(t *testing.T) {
	bin := repoBin(t, "mcp-server-filesystem")
	ws := filepath.Join(t.TempDir(), "workspace") // does not exist yet: create_dirs makes it
	m := start(t, Options{Manifest: manifest(ServerSpec{
		Alias: "fs", Transport: TransportStdio, Command: bin, Args: []string{ws}, CreateDirs: []string{ws},
		Version: "2026.8.31", Tools: filesystemTools,
	})})
	if st := m.Status()[0]; st.State != StateUp {
		t.Fatalf("Status() = %s %q, want up", st.State, st.Problem)
	}
	ctx := context.Background()
	path := filepath.Join(ws, "note.txt")
	if res, err := m.Call(ctx, "fs", "write_file", map[string]any{"path": path, "content": "hello neo"}); err != nil || res.IsError {
		t.Fatalf("Call(write_file) = %+v, %v", res, err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "hello neo" {
		t.Errorf("file content = %q, %v; want %q", b, err, "hello neo")
	}
	res, err := m.Call(ctx, "fs", "read_text_file", map[string]any{"path": path})
	if err != nil || res.IsError || res.Content[0].Text != "hello neo" {
		t.Errorf("Call(read_text_file) = %+v, %v; want the content", res, err)
	}
	res, err = m.Call(ctx, "fs", "read_text_file", map[string]any{"path": "/etc/passwd"})
	if err != nil || !res.IsError {
		t.Errorf("Call(read_text_file outside the workspace) = %+v, %v; want an in-band refusal", res, err)
	}
}
