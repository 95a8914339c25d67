package memory

import "github.com/neobot/neobot/core/rank"

// Terms are rank's: lower-case words, and identifiers marked with
// rank.IDMark: a ticket number (INC-4821), an address (0xAbC1...), a
// snake_case name, an entity. A query identifier that matches a record's
// identifier exactly weighs more than its words alone.

// words returns the text's words (rank.Words).
func words(text string, out []string) []string { return rank.Words(text, out) }

// docTerms returns the terms of a record: its words, its identifiers and
// its entities.
func docTerms(r *Record) []string {
	terms := rank.Terms(r.Text, nil)
	for _, e := range r.Entities {
		terms = rank.Words(e, terms)
		if t := rank.Identifier(e); t != "" {
			terms = append(terms, t)
		}
	}
	return terms
}

// queryTerms returns a query's distinct terms. Identifiers, and each word
// as a possible entity name, are boosted.
func queryTerms(q string, idBoost float64) []rank.Term {
	seen := map[string]bool{}
	var out []rank.Term
	add := func(t string, boost float64) {
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, rank.Term{Text: t, Boost: boost})
		}
	}
	ws := rank.Words(q, nil)
	for _, w := range ws {
		add(w, 1)
	}
	for _, id := range rank.Identifiers(q, nil) {
		add(id, idBoost)
	}
	for _, w := range ws {
		add(rank.IDMark+w, idBoost)
	}
	return out
}
