// Package rank is neobot's one search engine: one tokenizer (Terms: words
// and whole identifiers), one inverted index (Index) and Okapi BM25, the
// one ranking function. Memory recall keeps an Index per workspace and
// history_search one per thread's archive; both tokenize with Terms.
package rank

import "math"

// The BM25 parameters: K1 saturates a term's frequency, B normalises by
// document length.
const (
	K1 = 1.2
	B  = 0.75
)

// IDF is the inverse document frequency of a term found in df of n
// documents, floored just above zero so a term in every document still
// counts a little.
func IDF(n, df float64) float64 {
	idf := math.Log(1 + (n-df+0.5)/(df+0.5))
	if idf <= 0 {
		idf = 0.01
	}
	return idf
}

// Score is what a term of weight w (its IDF times any boost) adds to a
// document of length dl, where it occurs tf times; avgdl is the corpus's
// average document length.
func Score(w, tf, dl, avgdl float64) float64 {
	return w * tf * (K1 + 1) / (tf + K1*(1-B+B*dl/avgdl))
}

// Bound is the most a term of weight w can add to any document.
func Bound(w float64) float64 { return w * (K1 + 1) }
