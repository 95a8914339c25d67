package discord

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/neobot/neobot/core"
)

// FuzzGateContent: whatever a daemon puts in a question, its options or
// the answer, the approval message renders without panicking, within
// Discord's 2,000 characters, with no blank button.
func FuzzGateContent(f *testing.F) {
	f.Add("Send 5 PAX to 0xabc?", "Yes, send", "Don't send")
	f.Add(strings.Repeat(" ", 5000), " ", "")
	f.Add(strings.Repeat("🙂", 2000), strings.Repeat("é", 200), strings.Repeat("x", 3000))
	f.Add("\xff\xfe", "\x00", "@everyone")
	f.Fuzz(func(t *testing.T, question, opt1, opt2 string) {
		for _, state := range []core.GateState{core.GatePending, core.GateApproved, core.GateDenied, core.GateExpired} {
			g := core.Gate{Token: "tok", Question: question, Options: []core.Option{{Label: opt1, Approves: true}, {Label: opt2}}, State: state,
				Answer: opt2, DecidedBy: "1", DecidedAt: time.Unix(1700000000, 0), Requester: "2"}
			m := gateSend(g)
			if w := width(m.Content); w > maxMessageChars {
				t.Errorf("content is %d characters, over Discord's %d", w, maxMessageChars)
			}
			for _, row := range m.Components {
				for _, c := range row.(discordgo.ActionsRow).Components {
					label := c.(discordgo.Button).Label
					if n := utf8.RuneCountInString(label); strings.TrimSpace(label) == "" || n > 80 {
						t.Errorf("button label %q (%d characters): want 1 to 80", label, n)
					}
				}
			}
		}
	})
}

// FuzzSplit: an answer splits into messages Discord takes, none blank.
func FuzzSplit(f *testing.F) {
	f.Add("hello")
	f.Add(strings.Repeat(" ", 5000))
	f.Add(strings.Repeat("```go\n"+strings.Repeat("x", 50)+"\n", 80))
	f.Add(strings.Repeat("🙂", 3000))
	f.Fuzz(func(t *testing.T, text string) {
		chunks := split(text, sayLimit)
		for _, c := range chunks {
			if strings.TrimSpace(c) == "" {
				t.Fatalf("blank chunk in %q", chunks)
			}
			if w := width(c); w > maxMessageChars {
				t.Fatalf("chunk of %d characters, over Discord's %d", w, maxMessageChars)
			}
		}
		if strings.TrimSpace(text) != "" && len(chunks) == 0 {
			t.Fatalf("split(%q) lost the text", text)
		}
	})
}
