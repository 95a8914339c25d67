package slack

import (
	"encoding/json"
	"flag"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/neobot/neobot/adapters/internal/mdsplit"
	"github.com/neobot/neobot/adapters/internal/rendertest"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// TestRenderGolden renders every shared case (adapters/testdata/render) as
// Say would post it: mrkdwn, split under the message limit.
func TestRenderGolden(t *testing.T) {
	rendertest.Run(t, "slack", *update, func(md string) []string {
		chunks := split(mrkdwn(md), maxMessageChars)
		checkChunks(t, chunks, maxMessageChars)
		return chunks
	})
}

// checkChunks asserts what every split must hold: each piece fits and
// opens and closes its code fences.
func checkChunks(t *testing.T, chunks []string, limit int) {
	t.Helper()
	for i, c := range chunks {
		if len(c) > limit {
			t.Errorf("chunk %d is %d bytes, want <= %d", i, len(c), limit)
		}
		fences := 0
		for _, line := range strings.Split(c, "\n") {
			if mdsplit.Fence(strings.TrimLeft(line, " \t")) != "" {
				fences++
			}
		}
		if fences%2 != 0 {
			t.Errorf("chunk %d has %d fence lines, want them balanced:\n%s", i, fences, c)
		}
	}
}

func TestMrkdwn(t *testing.T) {
	tests := []struct{ in, want string }{
		{"**bold** and __bold__", "*bold* and *bold*"},
		{"*italic* and _italic_", "_italic_ and _italic_"},
		{"***both***", "_*both*_"},
		{"~~gone~~", "~gone~"},
		{"[docs](https://x.test/a?b=1&c=2)", "docs (<https://x.test/a?b=1&c=2>)"},
		{"[https://x.test](https://x.test/)", "<https://x.test/>"},
		{"[Approve here](https://evil.test/pay)", "Approve here (<https://evil.test/pay>)"},
		{"<https://evil.test|Approve>", "Approve (<https://evil.test>)"},
		{"<https://evil.test|Approve here>", "&lt;https://evil.test|Approve here&gt;"},
		{"heads up <!channel> and <!here> and <!everyone>", "heads up &lt;!channel&gt; and &lt;!here&gt; and &lt;!everyone&gt;"},
		{"ping <!subteam^S123|@oncall>", "ping &lt;!subteam^S123|@oncall&gt;"},
		{"[https://x.test](https://x.test)", "<https://x.test>"},
		{"# Title", "*Title*"},
		{"### **Bold title** ###", "*Bold title*"},
		{"# Plan for **Tuesday**", "*Plan for Tuesday*"},
		{"- item\n  + sub", "• item\n  • sub"},
		{"1. one", "1. one"},
		{"a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"},
		{"`x < **y**`", "`x &lt; **y**`"},
		{"hi <@U123> in <#C9|general> see <https://a.test|A>", "hi <@U123> in <#C9|general> see A (<https://a.test>)"},
		{"> quoted *text*", "> quoted _text_"},
		{"```js\nlet a = 1 < 2 // **x**\n```", "```\nlet a = 1 &lt; 2 // **x**\n```"},
		{"```\nunterminated", "```\nunterminated\n```"},
		{"2 * 3 * 4", "2 * 3 * 4"},
		{"snake_case_name", "snake_case_name"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := mrkdwn(tt.in); got != tt.want {
				t.Errorf("mrkdwn(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestContextBlocksEncodeAsSlackGo: the hand-encoded status and notice
// block is byte for byte what slack-go would send for it, escapes and all.
func TestContextBlocksEncodeAsSlackGo(t *testing.T) {
	for _, text := range []string{
		":hourglass_flowing_sand: _Thinking…_",
		`quotes " and \ backslashes, <tags> & amps, a tab	and a line` + "\nbreak",
		"",
	} {
		want, err := json.Marshal(slack.NewContextBlock("status", slack.NewTextBlockObject(slack.MarkdownType, text, false, false)))
		if err != nil {
			t.Fatal(err)
		}
		if got := contextBlocks("status", text); got != "["+string(want)+"]" {
			t.Errorf("contextBlocks(%q) encodes as\n%s\nwant\n[%s]", text, got, want)
		}
	}
}
