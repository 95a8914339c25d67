package discord

import (
	"flag"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/internal/mdsplit"
	"github.com/neobot/neobot/adapters/internal/rendertest"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// TestRenderGolden splits every shared case (adapters/testdata/render) as
// Say posts it.
func TestRenderGolden(t *testing.T) {
	rendertest.Run(t, "discord", *update, func(md string) []string {
		chunks := split(inert(md), sayLimit)
		checkChunks(t, chunks, maxMessageChars)
		return chunks
	})
}

// checkChunks asserts what every split must hold: each piece fits and
// opens and closes its code fences.
func checkChunks(t *testing.T, chunks []string, limit int) {
	t.Helper()
	for i, c := range chunks {
		if w := width(c); w > limit {
			t.Errorf("chunk %d is %d characters, want <= %d", i, w, limit)
		}
		fences := 0
		for _, line := range strings.Split(c, "\n") {
			if mdsplit.Fence(strings.TrimLeft(line, " \t")) != "" {
				fences++
			}
		}
		if fences%2 != 0 {
			t.Errorf("chunk %d leaves a code block open:\n%s", i, c)
		}
	}
}

func TestWidth(t *testing.T) {
	cases := map[string]int{"": 0, "abc": 3, "café": 4, "🚀": 2, "日本": 2}
	for s, want := range cases {
		if got := width(s); got != want {
			t.Errorf("width(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestSubtext(t *testing.T) {
	got := subtext("one\n\ntwo\n```\ncode\n```\n-# three")
	want := "-# one\n\n-# two\n```\ncode\n```\n-# three"
	if got != want {
		t.Errorf("Subtext = %q, want %q", got, want)
	}
}
