package slack

import (
	"strings"
	"unicode/utf8"
)

// maxMessageChars is where Say splits an answer: under the 4,000
// characters Slack recommends for a message's text (it truncates at 40,000).
const maxMessageChars = 3800

// unit is what Split packs: one line, or a whole fenced code block.
type unit struct {
	text  string
	code  bool
	blank bool
}

// Split cuts text into pieces of at most limit bytes, preferring paragraph
// breaks, then line breaks, then spaces. A code block is never cut at
// random: when it must be split, the piece ends by closing the fence and
// the next one reopens it.
func Split(text string, limit int) []string {
	if limit < 16 {
		limit = 16
	}
	text = strings.Trim(text, "\n")
	if len(text) <= limit {
		if text == "" {
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
		size += len(u.text)
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
	fits := func(u unit) bool { return len(cur) == 0 && len(u.text) <= limit || size+1+len(u.text) <= limit }

	for _, u := range units(text) {
		if fits(u) {
			add(u)
			continue
		}
		// Break at the last paragraph break in the second half of the piece.
		if k := lastBlank(cur); k > 0 && joinedLen(cur[:k]) >= limit/2 {
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
		if len(u.text) <= limit {
			add(u)
			continue
		}
		pieces := splitUnit(u, limit)
		chunks = append(chunks, pieces[:len(pieces)-1]...)
		add(unit{text: pieces[len(pieces)-1], code: u.code})
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
			out = append(out, unit{text: line, blank: strings.TrimSpace(line) == ""})
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
		out = append(out, unit{text: strings.Join(lines[i:end+1], "\n"), code: true})
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

func joinedLen(us []unit) int {
	n := 0
	for i, u := range us {
		if i > 0 {
			n++
		}
		n += len(u.text)
	}
	return n
}

// splitUnit cuts one unit longer than limit. A code block is cut between
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
	room := limit - len(open) - len(closeFence) - 2 // room for body lines between the fences
	if room < 8 {
		room = 8
	}
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
			if len(cur) > 0 && size+1+len(part) > room {
				flush()
			}
			if len(cur) > 0 {
				size++
			}
			cur = append(cur, part)
			size += len(part)
		}
	}
	flush()
	if len(pieces) == 0 {
		pieces = []string{open + "\n" + closeFence}
	}
	return pieces
}

// splitWords cuts a line at spaces into pieces of at most limit bytes.
func splitWords(s string, limit int) []string {
	var out []string
	for len(s) > limit {
		cut := strings.LastIndexByte(s[:limit+1], ' ')
		if cut <= 0 {
			parts := splitRunes(s, limit)
			out = append(out, parts[0])
			s = s[len(parts[0]):]
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

// splitRunes cuts s into pieces of at most limit bytes on rune boundaries.
func splitRunes(s string, limit int) []string {
	if len(s) <= limit {
		return []string{s}
	}
	var out []string
	for len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			cut = limit
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}
