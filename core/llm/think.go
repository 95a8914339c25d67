package llm

import "strings"

// thinkPart is one piece of a content string: visible text, reasoning text,
// or tag markup. The parts of a string, concatenated in order, are exactly
// the string.
type thinkPart struct {
	text string
	kind partKind
}

type partKind uint8

const (
	partVisible partKind = iota
	partReasoning
	partTag
)

// thinkParts cuts content into visible, reasoning and tag parts.
//
// Text between <think> and </think> (or <thinking> and </thinking>, any
// case) is reasoning, wherever and however often it appears; tags inside a
// block are plain reasoning text. An opening tag that is never closed makes
// the whole remainder reasoning: a truncated generation must not leak its
// monologue. A closing tag before any opening tag marks everything ahead of
// it as reasoning, the posture of chat templates that put the opening tag in
// the prompt.
func thinkParts(content string, parts []thinkPart) []thinkPart {
	rest := content
	inside := false
	seenOpen := false
	for rest != "" {
		if !inside {
			i, n, closing := nextTag(rest, false)
			if i < 0 {
				parts = appendPart(parts, rest, partVisible)
				break
			}
			if closing {
				if seenOpen || len(parts) > 0 {
					// A stray closer after an answer began is just text.
					parts = appendPart(parts, rest[:i+n], partVisible)
					rest = rest[i+n:]
					continue
				}
				parts = appendPart(parts, rest[:i], partReasoning)
				parts = appendPart(parts, rest[i:i+n], partTag)
				rest = rest[i+n:]
				seenOpen = true
				continue
			}
			parts = appendPart(parts, rest[:i], partVisible)
			parts = appendPart(parts, rest[i:i+n], partTag)
			rest = rest[i+n:]
			inside, seenOpen = true, true
			continue
		}
		i, n, _ := nextTag(rest, true)
		if i < 0 {
			parts = appendPart(parts, rest, partReasoning)
			break
		}
		parts = appendPart(parts, rest[:i], partReasoning)
		parts = appendPart(parts, rest[i:i+n], partTag)
		rest = rest[i+n:]
		inside = false
	}
	return parts
}

func appendPart(parts []thinkPart, text string, kind partKind) []thinkPart {
	if text == "" {
		return parts
	}
	return append(parts, thinkPart{text: text, kind: kind})
}

// nextTag finds the first think tag in s: with closingOnly, only closing
// tags. It returns the index, the tag's length and whether it closes; -1
// when there is none.
func nextTag(s string, closingOnly bool) (int, int, bool) {
	for off := 0; ; {
		j := strings.IndexByte(s[off:], '<')
		if j < 0 {
			return -1, 0, false
		}
		i := off + j
		if n, closing := tagAt(s[i:]); n > 0 && (closing || !closingOnly) {
			return i, n, closing
		}
		off = i + 1
	}
}

// tagAt reports whether s starts with <think>, <thinking>, </think> or
// </thinking> (ASCII case-insensitive), returning the tag's length.
func tagAt(s string) (int, bool) {
	closing := len(s) > 1 && s[1] == '/'
	i := 1
	if closing {
		i = 2
	}
	for _, word := range [...]string{"thinking>", "think>"} {
		if len(s) >= i+len(word) && strings.EqualFold(s[i:i+len(word)], word) {
			return i + len(word), closing
		}
	}
	return 0, false
}

// splitThink separates inline reasoning from visible content. Content
// without think tags comes back unchanged; otherwise both sides are trimmed
// of surrounding space and several reasoning blocks are joined by a blank
// line.
func splitThink(content string) (visible, reasoning string) {
	if strings.IndexByte(content, '<') < 0 {
		return content, ""
	}
	var buf [8]thinkPart
	parts := thinkParts(content, buf[:0])
	found := false
	for _, p := range parts {
		if p.kind == partTag {
			found = true
			break
		}
	}
	if !found {
		return content, ""
	}
	var vis, rsn strings.Builder
	for _, p := range parts {
		switch p.kind {
		case partVisible:
			vis.WriteString(p.text)
		case partReasoning:
			t := strings.TrimSpace(p.text)
			if t == "" {
				continue
			}
			if rsn.Len() > 0 {
				rsn.WriteString("\n\n")
			}
			rsn.WriteString(t)
		}
	}
	return strings.TrimSpace(vis.String()), rsn.String()
}
