package rank

import (
	"cmp"
	"container/heap"
	"math"
	"slices"
	"sync"
)

// Index is the one inverted index: documents numbered from 0 in the
// order added, each a bag of terms (Terms), scored with BM25. Memory
// recall keeps one per workspace, history_search one per thread. It is
// not safe for concurrent writes; searches may run concurrently with
// each other.
type Index struct {
	postings map[string][]Posting
	lens     []int32
	alive    []bool
	live     int
	totalLen int64
	scratch  sync.Pool // *scorer
}

// Posting is a document holding a term, and how often.
type Posting struct {
	Doc int32
	TF  uint16
}

// Term is a query term and how much more than a word it weighs.
type Term struct {
	Text  string
	Boost float64
}

// Hit is a scored document.
type Hit struct {
	Doc   int32
	Score float64
}

// NewIndex returns an empty index sized for about docs documents.
func NewIndex(docs int) *Index {
	return &Index{postings: make(map[string][]Posting, 16*docs), lens: make([]int32, 0, docs), alive: make([]bool, 0, docs)}
}

// Add indexes a document of terms (reordered in place) and returns its
// number.
func (ix *Index) Add(terms []string) int32 {
	id := int32(len(ix.lens))
	slices.Sort(terms)
	for i := 0; i < len(terms); {
		j := i + 1
		for j < len(terms) && terms[j] == terms[i] {
			j++
		}
		ix.postings[terms[i]] = append(ix.postings[terms[i]], Posting{Doc: id, TF: uint16(min(j-i, math.MaxUint16))})
		i = j
	}
	ix.lens = append(ix.lens, int32(len(terms)))
	ix.alive = append(ix.alive, true)
	ix.live++
	ix.totalLen += int64(len(terms))
	return id
}

// Remove takes doc out of every search; its number is not reused.
func (ix *Index) Remove(doc int32) {
	if !ix.alive[doc] {
		return
	}
	ix.alive[doc] = false
	ix.live--
	ix.totalLen -= int64(ix.lens[doc])
}

// Docs is how many documents were added, removed ones included.
func (ix *Index) Docs() int { return len(ix.lens) }

// Live is how many documents were added and not removed.
func (ix *Index) Live() int { return ix.live }

// Alive reports whether doc was added and not removed.
func (ix *Index) Alive(doc int32) bool { return ix.alive[doc] }

// Postings returns the documents holding term, by number.
func (ix *Index) Postings(term string) []Posting { return ix.postings[term] }

// avgLen is the live documents' average length.
func (ix *Index) avgLen() float64 {
	if ix.live == 0 || ix.totalLen <= 0 {
		return 1
	}
	return float64(ix.totalLen) / float64(ix.live)
}

// Weight is the weight of a term found in df live documents, times
// boost.
func (ix *Index) Weight(df int, boost float64) float64 {
	return IDF(float64(ix.live), float64(df)) * boost
}

// Scorer returns what a term of weight w adds to the document of p.
func (ix *Index) Scorer() func(w float64, p Posting) float64 {
	avg := ix.avgLen()
	return func(w float64, p Posting) float64 { return Score(w, float64(p.TF), float64(ix.lens[p.Doc]), avg) }
}

// Match is a document holding some of a query's terms: its BM25 score
// and how many of the counted terms it holds.
type Match struct {
	Doc   int32
	Score float64
	Count int
}

// Match returns every live document holding any of terms, in the order
// first found, scored by BM25 over all of them, each with how many of
// terms[:counted] it holds: a search that wants every word filters on
// Count. Unlike Search it prunes nothing.
func (ix *Index) Match(terms []Term, counted int) []Match {
	if ix.live == 0 {
		return nil
	}
	at := make([]int32, len(ix.lens)) // 1 + the document's place in out
	var out []Match
	score := ix.Scorer()
	for i, t := range terms {
		ps := ix.postings[t.Text]
		w := ix.Weight(len(ps), t.Boost)
		for _, p := range ps {
			if !ix.alive[p.Doc] {
				continue
			}
			j := at[p.Doc] - 1
			if j < 0 {
				out = append(out, Match{Doc: p.Doc})
				j = int32(len(out) - 1)
				at[p.Doc] = j + 1
			}
			out[j].Score += score(w, p)
			if i < counted {
				out[j].Count++
			}
		}
	}
	return out
}

// CommonTerm is the posting count past which Search leaves out a term
// found in more than half of the live documents.
const CommonTerm = 1000

// scorer is per-search scratch: one accumulator and one state per
// document, reset through touched after each search.
type scorer struct {
	acc     []float32
	state   []uint8 // 0 unseen, 1 candidate, 2 refused (dead or filtered)
	touched []int32
	cands   []int32
}

const (
	unseen uint8 = iota
	candidate
	refused
)

// term is a query term resolved against the index.
type term struct {
	ps []Posting
	w  float64 // idf times boost
	ub float64 // the most one document can gain from it
}

// Search returns up to k live documents holding any of terms and
// accepted by accept (nil accepts all), best first, scored by BM25, the
// later added first among equals. A term in more than half of over
// CommonTerm documents ("hi", the "asked" of every turn excerpt) says
// almost nothing and would make every search as slow as the index is
// big: it is left out. It uses MaxScore pruning: terms are taken rarest
// first, and once the terms left could not lift a new document above the
// k-th best candidate, they only add to existing candidates.
func (ix *Index) Search(terms []Term, k int, accept func(doc int32) bool) []Hit {
	if ix.live == 0 || k <= 0 {
		return nil
	}
	ts := make([]term, 0, len(terms))
	for _, qt := range terms {
		ps := ix.postings[qt.Text]
		if len(ps) == 0 || len(ps) > CommonTerm && len(ps) > ix.live/2 {
			continue
		}
		w := ix.Weight(len(ps), qt.Boost)
		ts = append(ts, term{ps: ps, w: w, ub: Bound(w)})
	}
	if len(ts) == 0 {
		return nil
	}
	slices.SortFunc(ts, func(a, b term) int { return cmp.Compare(b.ub, a.ub) })
	rest := make([]float64, len(ts)+1) // rest[i]: the most terms i.. can add
	for i := len(ts) - 1; i >= 0; i-- {
		rest[i] = rest[i+1] + ts[i].ub
	}

	sc, _ := ix.scratch.Get().(*scorer)
	if sc == nil || len(sc.acc) < len(ix.lens) {
		size := len(ix.lens) + len(ix.lens)/4 + 16
		sc = &scorer{acc: make([]float32, size), state: make([]uint8, size)}
	}
	avg := ix.avgLen()
	score := func(t *term, p Posting) float32 {
		return float32(Score(t.w, float64(p.TF), float64(ix.lens[p.Doc]), avg))
	}
	theta := float32(-1) // the k-th best candidate score, once there are k
	for i := range ts {
		t := &ts[i]
		if theta >= 0 && rest[i] <= float64(theta) {
			// No document outside the candidates can reach the top k now.
			addToCandidates(sc, t, score)
		} else {
			for _, p := range t.ps {
				switch sc.state[p.Doc] {
				case unseen:
					sc.touched = append(sc.touched, p.Doc)
					if !ix.alive[p.Doc] || accept != nil && !accept(p.Doc) {
						sc.state[p.Doc] = refused
						continue
					}
					sc.state[p.Doc] = candidate
					sc.cands = append(sc.cands, p.Doc)
				case refused:
					continue
				}
				sc.acc[p.Doc] += score(t, p)
			}
		}
		if len(sc.cands) >= k && i+1 < len(ts) {
			theta = kthBest(sc, k)
		}
	}
	h := make(hitHeap, 0, k+1)
	for _, id := range sc.cands {
		s := float64(sc.acc[id])
		if len(h) == k && s <= h[0].Score {
			continue
		}
		heap.Push(&h, Hit{id, s})
		if len(h) > k {
			heap.Pop(&h)
		}
	}
	for _, id := range sc.touched {
		sc.acc[id], sc.state[id] = 0, unseen
	}
	sc.touched, sc.cands = sc.touched[:0], sc.cands[:0]
	ix.scratch.Put(sc)
	out := make([]Hit, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(Hit)
	}
	return out
}

// addToCandidates adds term t's score to the current candidates only,
// by binary search when they are few and a merge over t's postings
// (sorted by document) when they are many.
func addToCandidates(sc *scorer, t *term, score func(*term, Posting) float32) {
	if len(sc.cands)*bitsLen(len(t.ps)) < len(t.ps) {
		for _, id := range sc.cands {
			j, found := slices.BinarySearchFunc(t.ps, id, func(p Posting, id int32) int { return int(p.Doc - id) })
			if found {
				sc.acc[id] += score(t, t.ps[j])
			}
		}
		return
	}
	for _, p := range t.ps {
		if sc.state[p.Doc] == candidate {
			sc.acc[p.Doc] += score(t, p)
		}
	}
}

// kthBest returns the k-th best candidate score.
func kthBest(sc *scorer, k int) float32 {
	h := make(minFloats, 0, k+1)
	for _, id := range sc.cands {
		s := sc.acc[id]
		if len(h) == k && s <= h[0] {
			continue
		}
		heap.Push(&h, s)
		if len(h) > k {
			heap.Pop(&h)
		}
	}
	return h[0]
}

func bitsLen(n int) int {
	b := 1
	for n > 1 {
		n >>= 1
		b++
	}
	return b
}

type minFloats []float32

func (h minFloats) Len() int           { return len(h) }
func (h minFloats) Less(i, j int) bool { return h[i] < h[j] }
func (h minFloats) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minFloats) Push(x any)        { *h = append(*h, x.(float32)) }
func (h *minFloats) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// hitHeap is a min-heap on score, ties broken toward the later document,
// so the root is the weakest hit kept.
type hitHeap []Hit

func (h hitHeap) Len() int { return len(h) }
func (h hitHeap) Less(i, j int) bool {
	if h[i].Score != h[j].Score {
		return h[i].Score < h[j].Score
	}
	return h[i].Doc < h[j].Doc
}
func (h hitHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)   { *h = append(*h, x.(Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
