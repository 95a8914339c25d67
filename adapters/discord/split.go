package discord

import (
	"strings"
	"unicode/utf8"
)

// maxMessageChars is Discord's limit on a message's content.
const maxMessageChars = 2000

// sayLimit is where Say splits an answer, a little under the limit.
const sayLimit = 1990

// Width returns the length of s as Discord counts it against the 2,000
// character limit: UTF-16 code units, so an emoji outside the Basic
// Multilingual Plane counts two.
func Width(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}

// unit is what Split packs: one line, or a whole fenced code block.
type unit struct {
	text  string
	width int
	code  bool
	blank bool
}

// Split cuts text into pieces of at most limit characters (as [Width]
// counts), preferring paragraph breaks, then line breaks, then spaces. A
// code block is never cut at random: when it must be split, the piece ends
// by closing the fence and the next one reopens it with the same opening
// line, language included.
func Split(text string, limit int) []string {
	if limit < 16 {
		limit = 16
	}
	text = strings.Trim(text, "\n")
	if Width(text) <= limit {
		if strings.TrimSpace(text) == "" {
			return nil
		}
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

	for _, u := range units(text) {
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
		pieces := splitUnit(u, limit)
		chunks = append(chunks, pieces[:len(pieces)-1]...)
		last := pieces[len(pieces)-1]
		add(unit{text: last, width: Width(last), code: u.code})
	}
	flush()
	return chunks
}

// units groups text into lines, with each fenced code block one unit.
func units(text string) []unit {
	var out []unit
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		f := fenceOf(strings.TrimLeft(line, " \t"))
		if f == "" {
			out = append(out, unit{text: line, width: Width(line), blank: strings.TrimSpace(line) == ""})
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
		out = append(out, unit{text: block, width: Width(block), code: true})
		i = end
	}
	return out
}

// fenceOf returns the code fence that opens a trimmed line (``` or ~~~,
// three or more), or "".
func fenceOf(trimmed string) string {
	for _, c := range []string{"`", "~"} {
		n := len(trimmed) - len(strings.TrimLeft(trimmed, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
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
func splitUnit(u unit, limit int) []string {
	if !u.code {
		return splitWords(u.text, limit)
	}
	lines := strings.Split(u.text, "\n")
	open := lines[0]
	body := lines[1:]
	closeFence := strings.Repeat(string(fenceOf(strings.TrimLeft(open, " \t"))[0]), 3)
	if n := len(body); n > 0 && fenceOf(strings.TrimLeft(body[n-1], " \t")) != "" {
		closeFence = body[n-1]
		body = body[:n-1]
	}
	room := max(limit-Width(open)-Width(closeFence)-2, 8) // room for body lines between the fences
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
		for _, part := range splitRunes(line, room) {
			w := Width(part)
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
func splitWords(s string, limit int) []string {
	var out []string
	for Width(s) > limit {
		head := splitRunes(s, limit)[0] // the widest prefix that fits
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
func splitRunes(s string, limit int) []string {
	var out []string
	for Width(s) > limit {
		w, cut := 0, 0
		for cut < len(s) {
			r, size := utf8.DecodeRuneInString(s[cut:])
			rw := 1
			if r > 0xFFFF {
				rw = 2
			}
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
