package mdsplit

import (
	"fmt"
	"strings"
	"testing"
)

// utf16 counts as Discord does: a rune outside the Basic Multilingual
// Plane is two.
func utf16(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}

// checkChunks asserts what every split must hold: each piece fits and
// opens and closes its code fences.
func checkChunks(t *testing.T, chunks []string, limit int, width func(string) int) {
	t.Helper()
	for i, c := range chunks {
		if w := width(c); w > limit {
			t.Errorf("chunk %d is %d wide, want <= %d", i, w, limit)
		}
		fences := 0
		for _, line := range strings.Split(c, "\n") {
			if Fence(strings.TrimLeft(line, " \t")) != "" {
				fences++
			}
		}
		if fences%2 != 0 {
			t.Errorf("chunk %d has %d fence lines, want them balanced:\n%s", i, fences, c)
		}
	}
}

// TestSplitCount checks the number of pieces for inputs measured in bytes,
// and that no word is lost.
func TestSplitCount(t *testing.T) {
	para := strings.Repeat("word ", 30) // 150 bytes
	code := "```\n" + strings.Repeat("0123456789\n", 40) + "```"
	tests := []struct {
		name  string
		in    string
		limit int
		want  int // pieces
	}{
		{"short", "hello", 100, 1},
		{"empty", "", 100, 0},
		{"paragraphs", para + "\n\n" + para + "\n\n" + para, 320, 2},
		{"long line", strings.Repeat("abcdefghij ", 50), 100, 6},
		{"long word", strings.Repeat("x", 250), 100, 3},
		{"code block", "intro\n\n" + code + "\n\noutro", 200, 4},
		{"multibyte", strings.Repeat("é", 100), 51, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Split(tt.in, tt.limit, Bytes)
			if len(got) != tt.want {
				t.Errorf("Split(%s, %d) = %d pieces, want %d:\n%s", tt.name, tt.limit, len(got), tt.want, strings.Join(got, "\n====\n"))
			}
			checkChunks(t, got, tt.limit, Bytes)
			joined := strings.Join(got, "")
			for _, word := range strings.Fields(tt.in) {
				if !strings.Contains(joined, strings.Trim(word, "`")) {
					t.Errorf("Split lost %q", word)
					break
				}
			}
		})
	}
}

// TestSplitPieces checks the exact pieces, measured as Discord counts.
func TestSplitPieces(t *testing.T) {
	cases := []struct {
		name  string
		text  string
		limit int
		want  []string
	}{
		{"short", "hello", 20, []string{"hello"}},
		{"empty", "\n\n", 20, nil},
		{"paragraphs", "aaaa aaaa\n\nbbbb bbbb", 16, []string{"aaaa aaaa", "bbbb bbbb"}},
		{"words", "one two three four five", 16, []string{"one two three", "four five"}},
		{"emoji count two", strings.Repeat("🚀", 10), 16, []string{strings.Repeat("🚀", 8), strings.Repeat("🚀", 2)}},
		{"code reopened with its language", "```go\nline one\nline two\nline three\n```", 24,
			[]string{"```go\nline one\n```", "```go\nline two\n```", "```go\nline three\n```"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Split(c.text, c.limit, utf16)
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", c.want) {
				t.Errorf("Split(%q, %d) = %q, want %q", c.text, c.limit, got, c.want)
			}
			checkChunks(t, got, c.limit, utf16)
		})
	}
}

func TestSplitKeepsEveryCodeLine(t *testing.T) {
	var b strings.Builder
	b.WriteString("```go\n")
	for i := range 300 {
		fmt.Fprintf(&b, "line %03d\n", i)
	}
	b.WriteString("```")
	chunks := Split(b.String(), 500, Bytes)
	checkChunks(t, chunks, 500, Bytes)
	n := 0
	for _, c := range chunks {
		if !strings.HasPrefix(c, "```go\n") || !strings.HasSuffix(c, "\n```") {
			t.Errorf("chunk does not reopen and close the fence:\n%s", c)
		}
		n += strings.Count(c, "line ")
	}
	if n != 300 {
		t.Errorf("code lines across chunks = %d, want 300", n)
	}
}

func TestPrefix(t *testing.T) {
	tests := []struct {
		s     string
		limit int
		width func(string) int
		want  string
	}{
		{"hello", 10, Bytes, "hello"},
		{"héllo", 2, Bytes, "h"}, // é is two bytes: not cut in half
		{"🚀🚀🚀", 5, utf16, "🚀🚀"},
		{"🚀", 1, utf16, "🚀"}, // a rune wider than the limit is kept whole
	}
	for _, tt := range tests {
		if got := Prefix(tt.s, tt.limit, tt.width); got != tt.want {
			t.Errorf("Prefix(%q, %d) = %q, want %q", tt.s, tt.limit, got, tt.want)
		}
	}
}

func ExampleSplit() {
	answer := "Here is the fix:\n\n```go\nfmt.Println(\"one\")\nfmt.Println(\"two\")\n```"
	for _, msg := range Split(answer, 32, Bytes) {
		fmt.Printf("%s\n--\n", msg)
	}
	// Output:
	// Here is the fix:
	// --
	// ```go
	// fmt.Println("one")
	// ```
	// --
	// ```go
	// fmt.Println("two")
	// ```
	// --
}

func TestOpenFence(t *testing.T) {
	tests := map[string]string{
		"plain text":                         "",
		"```go\nfunc main() {}\n```\n":       "",
		"intro\n```go\nfunc main() {":        "```",
		"````\ncode with ``` inside\n":       "````",
		"~~~\nx\n~~~\n```\nopen":             "```",
		"```\n``` not a closer, has text\nx": "```",
	}
	for in, want := range tests {
		if got := OpenFence(in); got != want {
			t.Errorf("OpenFence(%q) = %q, want %q", in, got, want)
		}
	}
}
