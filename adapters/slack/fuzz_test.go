package slack

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/neobot/neobot/core"
)

// FuzzGateMessage: whatever a daemon puts in a question, its options or
// the answer, the approval message renders without panicking and within
// Slack's limits, with no blank button.
func FuzzGateMessage(f *testing.F) {
	f.Add("Send 5 PAX to 0xabc?", "Yes, send", "Don't send")
	f.Add(strings.Repeat(" ", 5000), " ", "")
	f.Add(strings.Repeat("\n", 3001), "\t", strings.Repeat("é", 200))
	f.Add(strings.Repeat("```", 2000), strings.Repeat("🙂", 100), "<!channel>")
	f.Add("\xff\xfe", "\x00", "ok")
	f.Fuzz(func(t *testing.T, question, opt1, opt2 string) {
		for _, state := range []core.GateState{core.GatePending, core.GateApproved, core.GateDenied, core.GateExpired} {
			g := core.Gate{Token: "tok", Question: question, Options: []string{opt1, opt2}, State: state,
				Answer: opt2, DecidedBy: "U1", DecidedAt: time.Unix(1700000000, 0), Requester: "U2"}
			fallback, raw := gateBlocks(g)
			if n := len(fallback); n > 3100 {
				t.Errorf("fallback text is %d bytes", n)
			}
			js, err := json.Marshal(raw)
			if err != nil {
				t.Fatal(err)
			}
			var blocks []struct {
				Type     string                 `json:"type"`
				Text     *struct{ Text string } `json:"text"`
				Elements []struct {
					Type string          `json:"type"`
					Text json.RawMessage `json:"text"`
				} `json:"elements"`
			}
			if err := json.Unmarshal(js, &blocks); err != nil {
				t.Fatalf("blocks do not parse: %v", err)
			}
			for _, b := range blocks {
				if b.Text != nil && len(b.Text.Text) > 3000 {
					t.Errorf("%s block text is %d bytes, over Slack's 3,000", b.Type, len(b.Text.Text))
				}
				if b.Type == "actions" && len(b.Elements) > 25 {
					t.Errorf("%d buttons, over Slack's 25", len(b.Elements))
				}
				for _, e := range b.Elements {
					var text string
					if e.Type == "button" {
						var obj struct{ Text string }
						_ = json.Unmarshal(e.Text, &obj)
						text = obj.Text
						if n := utf8.RuneCountInString(text); strings.TrimSpace(text) == "" || n > 75 {
							t.Errorf("button label %q (%d characters): want 1 to 75", text, n)
						}
					} else {
						_ = json.Unmarshal(e.Text, &text)
					}
					if len(text) > 3000 {
						t.Errorf("%s element text is %d bytes, over Slack's 3,000", e.Type, len(text))
					}
				}
			}
		}
	})
}

// FuzzSplit: an answer splits into pieces Slack takes, none blank, and
// nothing but blanks is lost.
func FuzzSplit(f *testing.F) {
	f.Add("hello", 3800)
	f.Add(strings.Repeat(" ", 5000), 100)
	f.Add(strings.Repeat("```go\n"+strings.Repeat("x", 50)+"\n", 40), 200)
	f.Add(strings.Repeat("🙂", 3000), 50)
	f.Fuzz(func(t *testing.T, text string, limit int) {
		limit = 16 + abs(limit)%4000
		chunks := split(text, limit)
		for _, c := range chunks {
			if strings.TrimSpace(c) == "" {
				t.Fatalf("blank chunk in %q", chunks)
			}
		}
		if strings.TrimSpace(text) != "" && len(chunks) == 0 {
			t.Fatalf("split(%q) lost the text", text)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
