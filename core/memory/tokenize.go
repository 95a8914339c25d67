package memory

import (
	"strings"
	"unicode"
)

// Terms are lower-case words, and identifiers marked with a leading '#':
// a ticket number (INC-4821), an address (0xAbC1...), a snake_case name, an
// entity. A query identifier that matches a record's identifier exactly
// weighs more than its words alone.
const idMark = "#"

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

// words returns the text's words, lower-cased, stopwords dropped, plurals
// folded.
func words(text string, out []string) []string {
	f := func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }
	for _, w := range strings.FieldsFunc(text, f) {
		w = strings.ToLower(w)
		if stopwords[w] {
			continue
		}
		out = append(out, fold(w))
	}
	return out
}

// fold strips a plural 's' so "wallets" finds "wallet".
func fold(w string) string {
	if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") {
		return w[:len(w)-1]
	}
	return w
}

const idTrim = ".,;:!?()[]{}<>\"'`*"

// identifiers returns the text's identifier-shaped fields as id terms.
func identifiers(text string, out []string) []string {
	for _, f := range strings.Fields(text) {
		f = strings.Trim(f, idTrim)
		if isIdentifier(f) {
			out = append(out, idMark+strings.ToLower(f))
		}
	}
	return out
}

// isIdentifier reports whether s looks like an identifier rather than a
// word: letters and digits mixed, or joined by _ - . / : @ #.
func isIdentifier(s string) bool {
	if len(s) < 3 {
		return false
	}
	var letter, digit, joiner bool
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			letter = true
		case unicode.IsDigit(r):
			digit = true
		case strings.ContainsRune("_-./:@#", r):
			joiner = true
		default:
			return false
		}
	}
	return (letter && digit) || (joiner && (letter || digit))
}

// entityTerm returns the id term of an entity name.
func entityTerm(e string) string {
	e = strings.ToLower(strings.Trim(strings.TrimSpace(e), idTrim))
	if e == "" {
		return ""
	}
	return idMark + e
}

// docTerms returns the terms of a record: its words, its identifiers and
// its entities.
func docTerms(r *Record) []string {
	terms := words(r.Text, nil)
	terms = identifiers(r.Text, terms)
	for _, e := range r.Entities {
		terms = words(e, terms)
		if t := entityTerm(e); t != "" {
			terms = append(terms, t)
		}
	}
	return terms
}

// queryTerm is one distinct term of a query with its weight.
type queryTerm struct {
	term  string
	boost float64
}

// queryTerms returns a query's distinct terms. Identifiers, and each word
// as a possible entity name, are boosted.
func queryTerms(q string, idBoost float64) []queryTerm {
	seen := map[string]bool{}
	var out []queryTerm
	add := func(t string, boost float64) {
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, queryTerm{t, boost})
		}
	}
	ws := words(q, nil)
	for _, w := range ws {
		add(w, 1)
	}
	for _, id := range identifiers(q, nil) {
		add(id, idBoost)
	}
	for _, w := range ws {
		add(idMark+w, idBoost)
	}
	return out
}
