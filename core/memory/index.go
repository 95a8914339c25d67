package memory

import (
	"container/heap"
	"math"
	"slices"
	"sync"
)

// The index is an in-memory BM25 inverted index, one per workspace, built
// from the store at New and kept in step with every write. It is never
// persisted, so it can never be stale: bbolt is the only truth.

const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

type spaceKey struct{ platform, workspace string }

type posting struct {
	doc int32
	tf  uint16
}

type doc struct {
	rec    Record
	length int32
	alive  bool
}

// space indexes one workspace's records.
type space struct {
	docs     []doc
	postings map[string][]posting
	live     int
	totalLen int64
	dead     int
	scratch  sync.Pool // *scorer
}

// index maps workspaces to spaces and record IDs to where they live.
type index struct {
	spaces map[spaceKey]*space
	byID   map[string]docRef
}

type docRef struct {
	sp  *space
	doc int32
}

func newIndex() *index {
	return &index{spaces: map[spaceKey]*space{}, byID: map[string]docRef{}}
}

func (ix *index) space(s Scope, create bool) *space {
	k := spaceKey{s.Platform, s.Workspace}
	sp := ix.spaces[k]
	if sp == nil && create {
		sp = &space{postings: map[string][]posting{}}
		ix.spaces[k] = sp
	}
	return sp
}

// get returns the record with id.
func (ix *index) get(id string) (Record, bool) {
	ref, ok := ix.byID[id]
	if !ok {
		return Record{}, false
	}
	return ref.sp.docs[ref.doc].rec, true
}

// put adds r, replacing any record with the same ID.
func (ix *index) put(r Record) {
	ix.remove(r.ID)
	sp := ix.space(r.Scope, true)
	terms := docTerms(&r)
	id := int32(len(sp.docs))
	slices.Sort(terms)
	for i := 0; i < len(terms); {
		j := i + 1
		for j < len(terms) && terms[j] == terms[i] {
			j++
		}
		sp.postings[terms[i]] = append(sp.postings[terms[i]], posting{doc: id, tf: uint16(min(j-i, math.MaxUint16))})
		i = j
	}
	sp.docs = append(sp.docs, doc{rec: r, length: int32(len(terms)), alive: true})
	sp.live++
	sp.totalLen += int64(len(terms))
	ix.byID[r.ID] = docRef{sp, id}
}

// remove drops the record with id, if indexed.
func (ix *index) remove(id string) {
	ref, ok := ix.byID[id]
	if !ok {
		return
	}
	delete(ix.byID, id)
	sp := ref.sp
	d := &sp.docs[ref.doc]
	d.alive = false
	sp.live--
	sp.dead++
	sp.totalLen -= int64(d.length)
	if sp.dead > 1024 && sp.dead > sp.live {
		ix.compact(sp)
	}
}

// compact rebuilds a space without its dead documents.
func (ix *index) compact(sp *space) {
	old := sp.docs
	sp.docs, sp.postings, sp.live, sp.dead, sp.totalLen = nil, map[string][]posting{}, 0, 0, 0
	for _, d := range old {
		if d.alive {
			delete(ix.byID, d.rec.ID)
			ix.put(d.rec)
		}
	}
}

// hit is a scored record.
type hit struct {
	ref   docRef
	score float64
}

// scorer is per-search scratch: one accumulator per document.
type scorer struct {
	acc     []float32
	touched []int32
}

// search returns up to k records of sp matching the query terms and keep,
// best first. Only documents containing a query term are considered.
func (sp *space) search(terms []queryTerm, keep func(*Record) bool, k int) []hit {
	if sp == nil || sp.live == 0 || k <= 0 {
		return nil
	}
	sc, _ := sp.scratch.Get().(*scorer)
	if sc == nil || len(sc.acc) < len(sp.docs) {
		sc = &scorer{acc: make([]float32, len(sp.docs)+len(sp.docs)/4+16)}
	}
	n := float64(sp.live)
	avg := float64(sp.totalLen) / n
	if avg <= 0 {
		avg = 1
	}
	for _, qt := range terms {
		ps := sp.postings[qt.term]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		if idf <= 0 {
			idf = 0.01
		}
		w := idf * qt.boost
		for _, p := range ps {
			d := &sp.docs[p.doc]
			if !d.alive {
				continue
			}
			tf := float64(p.tf)
			s := w * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(d.length)/avg))
			if sc.acc[p.doc] == 0 {
				sc.touched = append(sc.touched, p.doc)
			}
			sc.acc[p.doc] += float32(s)
		}
	}
	h := make(hitHeap, 0, k+1)
	for _, id := range sc.touched {
		s := sc.acc[id]
		sc.acc[id] = 0
		if len(h) == k && float64(s) <= h[0].score {
			continue
		}
		if !keep(&sp.docs[id].rec) {
			continue
		}
		heap.Push(&h, hit{docRef{sp, id}, float64(s)})
		if len(h) > k {
			heap.Pop(&h)
		}
	}
	sc.touched = sc.touched[:0]
	sp.scratch.Put(sc)
	out := make([]hit, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(hit)
	}
	return out
}

// each calls fn with every live record of sp until fn returns false.
func (sp *space) each(fn func(*Record) bool) {
	if sp == nil {
		return
	}
	for i := range sp.docs {
		if sp.docs[i].alive && !fn(&sp.docs[i].rec) {
			return
		}
	}
}

// hitHeap is a min-heap on score, ties broken toward the newer record, so
// the root is the weakest hit kept.
type hitHeap []hit

func (h hitHeap) Len() int { return len(h) }
func (h hitHeap) Less(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score < h[j].score
	}
	return h[i].ref.doc < h[j].ref.doc
}
func (h hitHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)   { *h = append(*h, x.(hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
