package compact

import (
	"strings"
)

// ArtifactsHeader introduces the tokens ValidateSummary re-appends.
const ArtifactsHeader = "ARTIFACTS (preserved verbatim):"

// Artifacts returns the high-entropy tokens of text, each once, in order of
// first appearance: URLs, hex strings (0x addresses, tx hashes), UUIDs,
// base58 keys, long numbers (amounts, block heights, Discord snowflakes,
// Slack timestamps) and Slack IDs. These are what a summary must never
// paraphrase. It scans text once without regular expressions.
func Artifacts(text string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(tok string) {
		if !seen[tok] {
			seen[tok] = true
			out = append(out, tok)
		}
	}
	scanArtifacts(text, add)
	return out
}

// ValidateSummary enforces the trust contract on a summary of history:
// every high-entropy token of history must appear verbatim in the summary.
// The ones that do not are returned as dropped and re-appended, one per
// line, under [ArtifactsHeader].
func ValidateSummary(summary, history string) (validated string, dropped []string) {
	for _, a := range missing(summary, history) {
		dropped = append(dropped, a.tok)
	}
	if len(dropped) == 0 {
		return summary, nil
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(summary, "\n"))
	if !strings.Contains(summary, ArtifactsHeader) {
		b.WriteString("\n\n" + ArtifactsHeader)
	}
	for _, tok := range dropped {
		b.WriteString("\n- " + tok)
	}
	b.WriteString("\n")
	return b.String(), dropped
}

// scanArtifacts calls add for every high-entropy token of text, in order,
// duplicates included.
func scanArtifacts(text string, add func(string)) {
	i := 0
	for i < len(text) {
		c := text[i]
		if !fieldByte(c) {
			i++
			continue
		}
		j := i
		for j < len(text) && fieldByte(text[j]) {
			j++
		}
		field := text[i:j]
		i = j
		if k := strings.Index(field, "://"); k > 0 {
			if u := urlAt(field, k); u != "" {
				add(u)
				continue
			}
		}
		scanWords(field, add)
	}
}

// fieldByte reports whether c can belong to a whitespace- and
// bracket-delimited field.
func fieldByte(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '"', '\'', '`', '<', '>', '(', ')', '[', ']', '{', '}', '|', ',', '\\':
		return false
	}
	return c > ' ' && c != 0x7f
}

// urlAt returns the http(s) URL whose "://" is at k in field, trailing
// sentence punctuation removed.
func urlAt(field string, k int) string {
	s := k
	for s > 0 && isAlpha(field[s-1]) {
		s--
	}
	scheme := strings.ToLower(field[s:k])
	if scheme != "http" && scheme != "https" {
		return ""
	}
	u := strings.TrimRight(field[s:], ".,;:!?*")
	if len(u) <= k-s+3 {
		return ""
	}
	return u
}

// scanWords splits a field into runs of letters, digits, '-' and '.', and
// classifies each.
func scanWords(field string, add func(string)) {
	i := 0
	for i < len(field) {
		if !wordByte(field[i]) {
			i++
			continue
		}
		j := i
		for j < len(field) && wordByte(field[j]) {
			j++
		}
		classify(strings.Trim(field[i:j], "-."), add)
		i = j
	}
}

func wordByte(c byte) bool { return isAlnum(c) || c == '-' || c == '.' || c == '_' }

// classify adds word if it is high-entropy. A word made of a prefix and a
// high-entropy part (req-550e8400-…, tx_9f86d0…) is added whole: its
// prefix is part of the identifier. Dotted words (a host, a sentence's
// last word) give their parts.
func classify(w string, add func(string)) {
	if len(w) < 6 {
		return
	}
	if highEntropy(w) {
		add(w)
		return
	}
	if !strings.ContainsAny(w, "-._") {
		return
	}
	if !strings.Contains(w, ".") {
		for _, part := range strings.FieldsFunc(w, func(r rune) bool { return r == '-' || r == '_' }) {
			if len(part) >= 6 && highEntropy(part) || strings.Contains(w, "-") && hasUUID(w) {
				add(w)
				return
			}
		}
	}
	for _, part := range strings.FieldsFunc(w, func(r rune) bool { return r == '-' || r == '.' || r == '_' }) {
		classify(part, add)
	}
}

// highEntropy reports whether w is one identifier of a kind a summary
// must keep verbatim.
func highEntropy(w string) bool {
	return isUUID(w) || isDecimal(w) || isHexToken(w) || isSlackID(w) || isBase58(w)
}

// hasUUID reports whether w ends in a UUID after a prefix.
func hasUUID(w string) bool { return len(w) > 37 && w[len(w)-37] == '-' && isUUID(w[len(w)-36:]) }

// containsToken reports whether tok appears in s as a whole token: not
// continued by a letter, digit, '-' or '_' on either side (a '.' after it
// ends a sentence unless more of the word follows).
func containsToken(s, tok string) bool {
	for off := 0; ; {
		i := strings.Index(s[off:], tok)
		if i < 0 {
			return false
		}
		i += off
		j := i + len(tok)
		left := i == 0 || !(isAlnum(s[i-1]) || s[i-1] == '-' || s[i-1] == '_' || s[i-1] == '.')
		right := j == len(s) || !(isAlnum(s[j]) || s[j] == '-' || s[j] == '_') &&
			!(s[j] == '.' && j+1 < len(s) && isAlnum(s[j+1]))
		if left && right {
			return true
		}
		off = i + 1
	}
}

// isUUID: 8-4-4-4-12 hex digits.
func isUUID(w string) bool {
	if len(w) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		switch i {
		case 8, 13, 18, 23:
			if w[i] != '-' {
				return false
			}
		default:
			if !isHex(w[i]) {
				return false
			}
		}
	}
	return true
}

// isDecimal: six or more digits, optionally with one fractional part (a
// Slack message timestamp, an amount).
func isDecimal(w string) bool {
	digits, dots := 0, 0
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && i > 0 && i < len(w)-1 && dots == 0:
			dots++
		default:
			return false
		}
	}
	return digits >= 6
}

// isHexToken: 0x followed by eight or more hex digits, or 32 or more bare
// hex digits with at least one letter (a hash without its prefix).
func isHexToken(w string) bool {
	if len(w) >= 10 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X') {
		return allHex(w[2:])
	}
	if len(w) < 32 || !allHex(w) {
		return false
	}
	return strings.IndexFunc(w, func(r rune) bool { return r > '9' }) >= 0
}

// isSlackID: a Slack user, channel, team or bot ID such as U012AB3CDE.
func isSlackID(w string) bool {
	if len(w) < 9 || len(w) > 12 || !strings.ContainsRune("UCWGDTBFAESK", rune(w[0])) {
		return false
	}
	digit := false
	for i := 1; i < len(w); i++ {
		c := w[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'A' && c <= 'Z':
		default:
			return false
		}
	}
	return digit
}

// isBase58: 26 to 90 base58 characters mixing digits, upper and lower
// case (Solana and Bitcoin addresses, signatures), which ordinary words
// never do.
func isBase58(w string) bool {
	if len(w) < 26 || len(w) > 90 {
		return false
	}
	var digit, upper, lower bool
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c >= '1' && c <= '9':
			digit = true
		case c >= 'A' && c <= 'Z' && c != 'I' && c != 'O':
			upper = true
		case c >= 'a' && c <= 'z' && c != 'l':
			lower = true
		default:
			return false
		}
	}
	return digit && upper && lower
}

func allHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return len(s) > 0
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isAlnum(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' }
