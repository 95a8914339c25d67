package rank

import (
	"strings"
	"unicode"
)

// The one tokenizer. A text's terms are its words and its identifiers.
// Words are runs of letters and digits, lower-cased, stopwords dropped and
// a plural 's' folded ("wallets" finds "wallet"); they keep their order,
// so a phrase is a run of them. Identifiers are the whitespace-separated
// fields shaped like one (INC-4821, 0xAbC1…, audit_log.v2), whole,
// lower-cased and marked with IDMark so they never collide with a word:
// 17 finds "batch 17", never "0x17ab" or "170".

// IDMark begins every identifier term.
const IDMark = "#"

// stopwords carry no meaning for retrieval.
var stopwords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "but": true,
	"by": true, "do": true, "does": true, "for": true, "from": true, "has": true, "have": true, "he": true,
	"her": true, "his": true, "i": true, "if": true, "in": true, "into": true, "is": true, "it": true,
	"its": true, "me": true, "my": true, "no": true, "not": true, "of": true, "on": true, "or": true,
	"our": true, "she": true, "so": true, "than": true, "that": true, "the": true, "their": true,
	"them": true, "then": true, "there": true, "these": true, "they": true, "this": true, "to": true,
	"was": true, "we": true, "were": true, "what": true, "when": true, "where": true, "which": true,
	"who": true, "will": true, "with": true, "you": true, "your": true, "can": true, "about": true,
	"how": true, "did": true, "been": true, "am": true, "us": true, "up": true, "all": true, "any": true,
}

// Words appends text's words, in order: runs of letters and digits,
// lower-cased, stopwords dropped, plurals folded.
func Words(text string, out []string) []string {
	start := -1
	for i, r := range text {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r > 0x7f && letterOrDigit(r)
		switch {
		case alnum && start < 0:
			start = i
		case !alnum && start >= 0:
			out = word(text[start:i], out)
			start = -1
		}
	}
	if start >= 0 {
		out = word(text[start:], out)
	}
	return out
}

// word appends w as a word term unless it is a stopword.
func word(w string, out []string) []string {
	w = lower(w)
	if stopwords[w] {
		return out
	}
	return append(out, fold(w))
}

// lower lower-cases s, without allocating when it is already.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' || c > 0x7f {
			return strings.ToLower(s)
		}
	}
	return s
}

// fold strips a plural 's'.
func fold(w string) string {
	if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") {
		return w[:len(w)-1]
	}
	return w
}

// idTrim is what surrounds an identifier in prose and is not part of it.
const idTrim = ".,;:!?()[]{}<>\"'`*="

// Identifiers appends text's identifier terms, whole.
func Identifiers(text string, out []string) []string {
	for _, f := range strings.Fields(text) {
		f = strings.Trim(f, idTrim)
		if IsIdentifier(f) {
			out = append(out, IDMark+strings.ToLower(f))
		}
	}
	return out
}

// Terms appends text's words, then its identifiers: what a document is
// indexed under.
func Terms(text string, out []string) []string {
	return Identifiers(text, Words(text, out))
}

// Identifier returns the identifier term of a name (an entity), whatever
// its shape; "" for a blank name.
func Identifier(name string) string {
	name = strings.ToLower(strings.Trim(strings.TrimSpace(name), idTrim))
	if name == "" {
		return ""
	}
	return IDMark + name
}

// IsIdentifier reports whether s looks like an identifier rather than a
// word: letters and digits mixed, or joined by _ - . / : @ #.
func IsIdentifier(s string) bool {
	if len(s) < 3 {
		return false
	}
	var letter, digit, joiner bool
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digit = true
		case strings.ContainsRune("_-./:@#", r):
			joiner = true
		case letterOrDigit(r):
			if unicode.IsDigit(r) {
				digit = true
			} else {
				letter = true
			}
		default:
			return false
		}
	}
	return (letter && digit) || (joiner && (letter || digit))
}

func letterOrDigit(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
