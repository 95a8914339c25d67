package mcp

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

func TestLineCap(t *testing.T) {
	big := strings.Repeat("x", 200_000) // past the 64 KiB read buffer too
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + big + `"}]}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + big + `"}}`,
		`{"jsonrpc":"2.0","id":"req-9","result":{"text":"` + strings.Repeat("y", 1000) + `"}}`,
		`{"jsonrpc":"2.0","id":2,"result":{}}`,
	}, "\n") + "\n"
	out, err := io.ReadAll(newLineCap(strings.NewReader(in), 500))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d messages, want 4 (the notification dropped):\n%.300s", len(lines), out)
	}
	if lines[0] != `{"jsonrpc":"2.0","id":1,"result":{"ok":true}}` || lines[3] != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Errorf("messages under the cap changed: %q, %q", lines[0], lines[3])
	}
	for i, wantID := range map[int]any{1: 7.0, 2: "req-9"} {
		var m struct {
			ID    any `json:"id"`
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &m); err != nil {
			t.Fatalf("message %d is not JSON: %v: %.200s", i, err, lines[i])
		}
		if m.ID != wantID || !strings.Contains(m.Error.Message, "larger than 500 bytes") {
			t.Errorf("message %d = %+v, want an error for request %v saying it was too large", i, m, wantID)
		}
	}
}
