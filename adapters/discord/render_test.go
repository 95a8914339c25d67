package discord

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neobot/neobot/adapters/internal/mdsplit"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// chunkSeparator separates the messages of one answer in golden files.
const chunkSeparator = "\n======== next message ========\n"

// TestRenderGolden splits each testdata/render/*.md answer as Say posts it
// and compares the messages to the .golden file beside it.
func TestRenderGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/render/*.md")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs in testdata/render: %v", err)
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			chunks := split(string(src), sayLimit)
			checkChunks(t, chunks, maxMessageChars)
			got := strings.Join(chunks, chunkSeparator) + "\n"
			golden := strings.TrimSuffix(in, ".md") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("split(%s) differs from %s (run go test -update and review the diff):\n%s", in, golden, got)
			}
		})
	}
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
