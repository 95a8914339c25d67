package rank

import "testing"

// TestScore checks the properties a ranking leans on: rarer terms weigh
// more, repetition saturates, and a long document counts a term less.
func TestScore(t *testing.T) {
	if rare, common := IDF(1000, 3), IDF(1000, 600); rare <= common {
		t.Errorf("IDF(rare) = %v <= IDF(common) = %v", rare, common)
	}
	if got := IDF(10, 10); got <= 0 {
		t.Errorf("IDF of a term in every document = %v, want a little above 0", got)
	}
	w := IDF(1000, 10)
	one, ten, hundred := Score(w, 1, 50, 50), Score(w, 10, 50, 50), Score(w, 100, 50, 50)
	if !(one < ten && ten < hundred) || hundred > Bound(w) {
		t.Errorf("Score by frequency = %v, %v, %v (bound %v); want rising, saturating under the bound", one, ten, hundred, Bound(w))
	}
	if short, long := Score(w, 2, 20, 50), Score(w, 2, 500, 50); short <= long {
		t.Errorf("Score(short doc) = %v <= Score(long doc) = %v", short, long)
	}
}
