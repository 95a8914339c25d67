// Package mdsplit cuts a markdown answer into messages that each fit a
// platform's size limit, without leaving a code block open: a block that
// must be cut is closed at the end of one message and reopened, with the
// same opening line, at the start of the next.
//
// Platforms count size differently (Slack in bytes, Discord in UTF-16 code
// units), so every function takes the measure as a width function.
package mdsplit

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// Bytes is the width function that counts bytes.
func Bytes(s string) int { return len(s) }

// unit is what Split packs: one line, or a whole fenced code block.
type unit struct {
	text  string
	width int
	code  bool
	blank bool
}

// Split cuts text into pieces at most limit wide as width measures them,
// preferring paragraph breaks, then line breaks, then spaces. A code block
// is never cut at random: when it must be split, the piece ends by closing
// the fence and the next one reopens it with the same opening line,
// language included. A limit under 16 counts as 16. Text that is only
// white space yields no pieces.
//
// width must be additive: the width of a concatenation is the sum of the
// widths of its parts.
func Split(text string, limit int, width func(string) int) []string {
	if limit < 16 {
		limit = 16
	}
	text = strings.Trim(text, "\n")
	if strings.TrimSpace(text) == "" {
		return nil
	}
	if width(text) <= limit {
		return []string{text}
	}
	var chunks []string
	var cur []unit
	size := 0
	add := func(u unit) {
		if len(cur) > 0 {
			size++
		}
		cur = append(cur, u)
		size += u.width
	}
	flush := func() {
		for len(cur) > 0 && cur[len(cur)-1].blank {
			cur = cur[:len(cur)-1]
		}
		for len(cur) > 0 && cur[0].blank {
			cur = cur[1:]
		}
		if len(cur) > 0 {
			parts := make([]string, len(cur))
			for i, u := range cur {
				parts[i] = u.text
			}
			chunks = append(chunks, strings.Join(parts, "\n"))
		}
		cur, size = nil, 0
	}
	fits := func(u unit) bool { return len(cur) == 0 && u.width <= limit || size+1+u.width <= limit }

	for _, u := range units(text, width) {
		if fits(u) {
			add(u)
			continue
		}
		// Break at the last paragraph break in the second half of the piece.
		if k := lastBlank(cur); k > 0 && joinedWidth(cur[:k]) >= limit/2 {
			rest := append([]unit(nil), cur[k+1:]...)
			cur = cur[:k]
			flush()
			for _, r := range rest {
				add(r)
			}
			if fits(u) {
				add(u)
				continue
			}
		}
		flush()
		if u.width <= limit {
			add(u)
			continue
		}
		pieces := splitUnit(u, limit, width)
		chunks = append(chunks, pieces[:len(pieces)-1]...)
		last := pieces[len(pieces)-1]
		add(unit{text: last, width: width(last), code: u.code, blank: strings.TrimSpace(last) == ""})
	}
	flush()
	// A line of blanks longer than the limit splits into blank pieces:
	// they say nothing, and a platform refuses an empty message.
	return slices.DeleteFunc(chunks, func(c string) bool { return strings.TrimSpace(c) == "" })
}

// Prefix returns the longest prefix of s, cut on a rune boundary, at most
// limit wide; if even the first rune is wider, it returns that rune.
func Prefix(s string, limit int, width func(string) int) string {
	return splitRunes(s, limit, width)[0]
}

// Clip returns s when it is at most limit wide, and otherwise its longest
// prefix that fits with an ellipsis after it. It never fails, whatever s
// holds: blank text, one wide rune, invalid UTF-8.
func Clip(s string, limit int, width func(string) int) string {
	if width(s) <= limit {
		return s
	}
	const ellipsis = "…"
	return strings.TrimRight(Prefix(s, max(limit-width(ellipsis), 1), width), " \t\n") + ellipsis
}

// SaysURL reports whether a link's text is its own URL (give or take the
// scheme and a trailing slash), so the link needs no separate URL shown.
func SaysURL(text, url string) bool {
	bare := func(s string) string {
		return strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "https://"), "http://"), "/")
	}
	return strings.TrimSpace(text) == "" || bare(text) == bare(url)
}

// Fence returns the code fence that opens a line already trimmed of
// leading blanks (``` or ~~~, possibly longer), or "".
func Fence(trimmed string) string {
	for _, c := range []string{"`", "~"} {
		n := len(trimmed) - len(strings.TrimLeft(trimmed, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// units groups text into lines, with each fenced code block one unit.
func units(text string, width func(string) int) []unit {
	var out []unit
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		f := Fence(strings.TrimLeft(line, " \t"))
		if f == "" {
			out = append(out, unit{text: line, width: width(line), blank: strings.TrimSpace(line) == ""})
			continue
		}
		j := i + 1
		for ; j < len(lines); j++ {
			t := strings.TrimLeft(lines[j], " \t")
			if strings.HasPrefix(t, f) && strings.TrimSpace(strings.TrimLeft(t, f[:1])) == "" {
				break
			}
		}
		end := min(j, len(lines)-1)
		block := strings.Join(lines[i:end+1], "\n")
		out = append(out, unit{text: block, width: width(block), code: true})
		i = end
	}
	return out
}

func lastBlank(us []unit) int {
	for i := len(us) - 1; i > 0; i-- {
		if us[i].blank {
			return i
		}
	}
	return -1
}

func joinedWidth(us []unit) int {
	n := 0
	for i, u := range us {
		if i > 0 {
			n++
		}
		n += u.width
	}
	return n
}

// splitUnit cuts one unit wider than limit. A code block is cut between
// lines, each piece closing the fence and the next reopening it with the
// same opening line; prose is cut at spaces.
func splitUnit(u unit, limit int, width func(string) int) []string {
	if !u.code {
		return splitWords(u.text, limit, width)
	}
	lines := strings.Split(u.text, "\n")
	open := lines[0]
	body := lines[1:]
	closeFence := strings.Repeat(string(Fence(strings.TrimLeft(open, " \t"))[0]), 3)
	if n := len(body); n > 0 && Fence(strings.TrimLeft(body[n-1], " \t")) != "" {
		closeFence = body[n-1]
		body = body[:n-1]
	}
	room := max(limit-width(open)-width(closeFence)-2, 8) // room for body lines between the fences
	var pieces []string
	var cur []string
	size := 0
	flush := func() {
		if len(cur) > 0 {
			pieces = append(pieces, open+"\n"+strings.Join(cur, "\n")+"\n"+closeFence)
		}
		cur, size = nil, 0
	}
	for _, line := range body {
		for _, part := range splitRunes(line, room, width) {
			w := width(part)
			if len(cur) > 0 && size+1+w > room {
				flush()
			}
			if len(cur) > 0 {
				size++
			}
			cur = append(cur, part)
			size += w
		}
	}
	flush()
	if len(pieces) == 0 {
		pieces = []string{open + "\n" + closeFence}
	}
	return pieces
}

// splitWords cuts a line at spaces into pieces at most limit wide.
func splitWords(s string, limit int, width func(string) int) []string {
	var out []string
	for width(s) > limit {
		head := splitRunes(s, limit, width)[0] // the widest prefix that fits
		cut := strings.LastIndexByte(head, ' ')
		if len(head) < len(s) && s[len(head)] == ' ' {
			cut = len(head)
		}
		if cut <= 0 {
			out = append(out, head)
			s = s[len(head):]
			continue
		}
		out = append(out, s[:cut])
		s = s[cut+1:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// splitRunes cuts s into pieces at most limit wide on rune boundaries.
func splitRunes(s string, limit int, width func(string) int) []string {
	var out []string
	for width(s) > limit {
		w, cut := 0, 0
		for cut < len(s) {
			_, size := utf8.DecodeRuneInString(s[cut:])
			rw := width(s[cut : cut+size])
			if w+rw > limit {
				break
			}
			w += rw
			cut += size
		}
		if cut == 0 {
			_, cut = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" || len(out) == 0 {
		out = append(out, s)
	}
	return out
}

// OpenFence returns the fence of a code block text opens and does not
// close (to close it with), or "".
func OpenFence(text string) string {
	open := ""
	for _, line := range strings.Split(text, "\n") {
		f := Fence(strings.TrimLeft(line, " \t"))
		switch {
		case f == "":
		case open == "":
			open = f
		case strings.HasPrefix(f, open) && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), f[:1])) == "":
			open = "" // a closing fence: at least as long, nothing after it
		}
	}
	return open
}
