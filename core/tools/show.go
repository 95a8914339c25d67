package tools

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxShownValue is the most of one value an approval shows when the
// arguments do not fit as they are: a longer value shows its start and
// its size.
const maxShownValue = 120

// ArgsBudget is the most bytes of arguments an asked call's approval
// shows: with its question around them they fit every platform's
// message (Discord shows 1,600 characters of a question, the least).
const ArgsBudget = 1200

// ShowArgs renders a call's arguments for the person approving it, in at
// most budget bytes: one line per value, in name order, each as JSON.
// Objects and lists are opened, one line per value named by its path
// ("payouts"[1]."to"), so a long first item never hides the later ones.
// When the lines do not fit, the longest values show their start and
// their size, and lines that still do not fit are counted on a last
// line; complete is false then. Nothing is left out without saying so.
// Every value is escaped once, for every platform: no backtick (written
// \u0060, still valid JSON), so no value can close the code block it is
// shown in; no newline, control, bidi or invisible character (\u202e),
// so no value can fake lines or reorder what the approver reads.
func ShowArgs(args map[string]any, budget int) (text string, complete bool) {
	var lines []shownLine
	flatten(&lines, "", args)
	complete = true
	// size is the lines' length joined: each line and a newline between
	// two.
	size := func() int {
		n := -1
		for _, l := range lines {
			n += len(l.path) + 2 + len(l.value) + 1
		}
		return max(n, 0)
	}
	// Longest values first, until the lines fit.
	order := make([]int, len(lines))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(lines[b].value) - len(lines[a].value) })
	for _, i := range order {
		if size() <= budget || len(lines[i].value) <= maxShownValue {
			break
		}
		lines[i].value = collapse(lines[i].value)
		complete = false
	}
	out := make([]string, 0, len(lines))
	used := 0
	for i, l := range lines {
		line := l.path + ": " + l.value
		if i > 0 && used+len(line) > budget {
			rest := 0
			for _, r := range lines[i:] {
				rest += len(r.path) + 2 + len(r.value) + 1
			}
			out = append(out, fmt.Sprintf("… and %d more values (%d bytes) not shown", len(lines)-i, rest))
			complete = false
			break
		}
		out = append(out, line)
		used += len(line) + 1
	}
	if used-1 > budget {
		complete = false // the first line alone is over budget
	}
	return strings.Join(out, "\n"), complete
}

// shownLine is one value of a call's arguments: its path and its JSON.
type shownLine struct{ path, value string }

// flatten appends a line for every plain value under v, at path.
func flatten(lines *[]shownLine, path string, v any) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 && path != "" {
			*lines = append(*lines, shownLine{path, "{}"})
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			p := Quote(k)
			if path != "" {
				p = path + "." + p
			}
			flatten(lines, p, x[k])
		}
	case []any:
		if len(x) == 0 {
			*lines = append(*lines, shownLine{path, "[]"})
		}
		for i, item := range x {
			flatten(lines, path+"["+strconv.Itoa(i)+"]", item)
		}
	default:
		b, err := json.Marshal(v)
		if err != nil {
			b = []byte(`"(not JSON)"`)
		}
		if len(path) > maxShownValue {
			path = collapse(path)
		}
		*lines = append(*lines, shownLine{path, Escape(string(b))})
	}
}

// collapse shortens a long value to its start and its size.
func collapse(value string) string {
	cut := maxShownValue / 2
	for cut > 0 && !utf8.RuneStart(value[cut]) {
		cut--
	}
	// Never end inside an escape (\u202e), which would read as another
	// character.
	if i := strings.LastIndexByte(value[:cut], '\\'); i >= 0 && cut-i < 6 {
		cut = i
	}
	return fmt.Sprintf("%s… (%d bytes in all, the rest not shown)", value[:cut], len(value))
}

// Quote writes s as a JSON string, escaped as [Escape] does: what a person
// approving a call is shown of a text someone else wrote. Angle brackets
// stay as they are, for the caller to make inert where they would form
// a mention.
func Quote(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return Escape(strings.TrimSuffix(b.String(), "\n"))
}

// Escape rewrites the characters a reader cannot see or that change how
// the text around them reads, as JSON escapes (\u202e): control
// characters, bidi controls, zero-width and other invisible characters,
// line and paragraph separators, spaces other than the plain one, and
// backticks (which would close a code block).
func Escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '`' || hidden(r) {
			if r > 0xFFFF {
				r1, r2 := utf16Pair(r)
				fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// hidden reports whether r does not show as itself: control and format
// characters (U+200B-U+200F, U+202A-U+202E, U+2060-U+2069, U+FEFF, tags),
// separators other than the plain space, variation selectors, and blank
// letters (Hangul fillers).
func hidden(r rune) bool {
	switch {
	case r == ' ':
		return false
	case unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Zs, unicode.Co, unicode.Variation_Selector):
		return true
	case r == 0x115F, r == 0x1160, r == 0x3164, r == 0xFFA0, r == 0x034F, r == 0x2800, r == utf8.RuneError:
		return true
	}
	return false
}

// utf16Pair is r's UTF-16 surrogate pair, as JSON escapes it.
func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xD800 + (r>>10)&0x3FF, 0xDC00 + r&0x3FF
}
