package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/neobot/neobot/core/mcp"
)

// The asker is an MCP server written for the question tests: the test
// binary serves it over stdio when NEOBOT_ASKER_LOG names its log (see
// TestMain). Its tools ask their client a question (elicitation/create)
// and report what came back. Every question asked and every answer heard
// is appended to the log as a JSON line, synced.
//
//   - pick_size (read): one enum field, answered with a button.
//   - book (write): a name with a default, a bounded number of guests and
//     an email, answered in a form.
//   - link_account (read): a URL-mode question, a page to open.

// askerEntry is one line of the asker's log.
type askerEntry struct {
	Event   string         `json:"event"` // ask, answer
	Tool    string         `json:"tool"`
	Action  string         `json:"action,omitempty"`
	Content map[string]any `json:"content,omitempty"`
}

func serveAsker(logPath string) int {
	log, err := openJSONLog(logPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer log.Close()
	write := func(e askerEntry) { _ = log.write(e) }
	var srv *mcp.Server
	ask := func(ctx context.Context, tool, message string, schema map[string]any) (mcp.ElicitResult, error) {
		write(askerEntry{Event: "ask", Tool: tool})
		res, err := srv.Elicit(ctx, message, schema)
		if err != nil {
			return res, err
		}
		write(askerEntry{Event: "answer", Tool: tool, Action: res.Action, Content: res.Content})
		return res, nil
	}
	srv = mcp.NewServer("asker", "1.0.0",
		mcp.ServerTool{Name: "pick_size", Description: "Ask the user which size they want.", Handle: func(ctx context.Context, _ map[string]any) (mcp.Result, error) {
			res, err := ask(ctx, "pick_size", "Which size should the T-shirt be?", map[string]any{"type": "object",
				"properties": map[string]any{"size": map[string]any{"type": "string", "enum": []any{"s", "m", "l"}, "enumNames": []any{"Small", "Medium", "Large"}}},
				"required":   []any{"size"}})
			if err != nil {
				return mcp.ErrorResult(err.Error()), nil
			}
			if res.Action != "accept" {
				return mcp.TextResult("the user chose no size: " + res.Action), nil
			}
			return mcp.TextResult(fmt.Sprintf("size: %v", res.Content["size"])), nil
		}},
		mcp.ServerTool{Name: "book", Description: "Book a table, asking the user for the details.", Handle: func(ctx context.Context, _ map[string]any) (mcp.Result, error) {
			res, err := ask(ctx, "book", "Who is the table for?", map[string]any{"type": "object",
				"properties": map[string]any{
					"name":   map[string]any{"type": "string", "title": "Name", "default": "Ada"},
					"guests": map[string]any{"type": "integer", "title": "Guests", "minimum": 1, "maximum": 10},
					"email":  map[string]any{"type": "string", "title": "Email", "format": "email"},
				},
				"required": []any{"guests"}})
			if err != nil {
				return mcp.ErrorResult(err.Error()), nil
			}
			if res.Action != "accept" {
				return mcp.TextResult("nothing booked: " + res.Action), nil
			}
			return mcp.TextResult(fmt.Sprintf("booked for %v, %v guests", res.Content["name"], res.Content["guests"])), nil
		}},
		mcp.ServerTool{Name: "link_account", Description: "Link the user's Example account, through a page of Example's.", Handle: func(ctx context.Context, _ map[string]any) (mcp.Result, error) {
			write(askerEntry{Event: "ask", Tool: "link_account"})
			res, err := srv.ElicitURL(ctx, "Sign in to Example to link your account.", "https://example.com/link?session=s1&who=<!here>")
			if err != nil {
				return mcp.ErrorResult(err.Error()), nil
			}
			write(askerEntry{Event: "answer", Tool: "link_account", Action: res.Action})
			return mcp.TextResult("linking: " + res.Action), nil
		}},
	)
	if err := srv.ServeStdio(context.Background(), os.Stdin, os.Stdout); err != nil {
		return 1
	}
	return 0
}

// asker is a test's handle on the asker's log.
type asker struct{ log string }

func newAsker(t testing.TB) *asker { return &asker{log: filepath.Join(t.TempDir(), "asker.log")} }

// manifest writes a manifest with the asker alone: pick_size reads, book
// writes.
func (a *asker) manifest(t *testing.T) string {
	exe, _ := os.Executable()
	return writeJSON(t, "manifest.json", map[string]any{"did": "did:web:neobot.test:agents:e2e", "servers": []any{map[string]any{
		"alias": "asker", "transport": "stdio", "command": exe, "version": "1.0.0",
		"env":   []string{"NEOBOT_ASKER_LOG=$env:NEOBOT_ASKER_LOG"},
		"tools": []string{"book", "link_account", "pick_size"}, "side_effects": "read",
		"tool_side_effects": map[string]string{"book": "write"},
	}}})
}

// entries reads the log.
func (a *asker) entries(t testing.TB) []askerEntry { return readJSONLog[askerEntry](t, a.log) }

// answers returns what the server heard, in order.
func (a *asker) answers(t testing.TB) []askerEntry {
	var out []askerEntry
	for _, e := range a.entries(t) {
		if e.Event == "answer" {
			out = append(out, e)
		}
	}
	return out
}

// asked counts the questions tool asked.
func (a *asker) asked(t testing.TB, tool string) int {
	n := 0
	for _, e := range a.entries(t) {
		if e.Event == "ask" && e.Tool == tool {
			n++
		}
	}
	return n
}
