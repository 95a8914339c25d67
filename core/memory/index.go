package memory

import (
	"container/heap"
	"math"
	"slices"
	"sync"

	"github.com/neobot/neobot/core/rank"
)

// The index is an in-memory BM25 inverted index, one per workspace, built
// from the store at New and kept in step with every write. It is never
// persisted, so it can never be stale: bbolt is the only truth.

// commonTerm is the posting count past which a term found in more than
// half of a space's records is left out of searches.
const commonTerm = 1000

type spaceKey struct{ platform, workspace string }

type posting struct {
	doc int32
	tf  uint16
}

// space indexes one workspace's records. A document's length and
// liveness sit in arrays of their own, apart from its record, so scoring
// walks compact memory.
type space struct {
	docs     []doc
	lens     []int32
	alive    []bool
	meta     []docMeta
	names    map[string]int32 // interned users and channels, from 1
	postings map[string][]posting
	// personal lists each user's profile and preference documents (by
	// interned user), so the profile block every turn renders reads the
	// user's few records, not the whole space.
	personal map[int32][]int32
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

type doc struct {
	rec Record
}

// docMeta is a record's scope and kind in integers, so the scope check
// of a search touches no strings.
type docMeta struct {
	user, channel int32 // 0: none
	kind          uint8 // kindBit
	dm            bool
}

func kindBit(k Kind) uint8 {
	switch k {
	case KindFact:
		return 1
	case KindPreference:
		return 2
	case KindProfile:
		return 4
	case KindProcedure:
		return 8
	case KindTurn:
		return 16
	}
	return 32
}

func kindMask(kinds []Kind) uint8 {
	if len(kinds) == 0 {
		return 0xff
	}
	var m uint8
	for _, k := range kinds {
		m |= kindBit(k)
	}
	return m
}

// intern returns name's number in sp, 0 for "".
func (sp *space) intern(name string) int32 {
	if name == "" {
		return 0
	}
	id, ok := sp.names[name]
	if !ok {
		id = int32(len(sp.names) + 1)
		sp.names[name] = id
	}
	return id
}

// lookup returns name's number in sp: 0 for "", -1 when no record uses it.
func (sp *space) lookup(name string) int32 {
	if name == "" {
		return 0
	}
	if id, ok := sp.names[name]; ok {
		return id
	}
	return -1
}

// matcher decides which documents a search may return: those of the
// kinds in mask, visible to reader (when set, by the rules of
// Scope.Visible), owned by the reader's user (when owner), and passing
// fn (when set).
type matcher struct {
	mask   uint8
	reader *Reader
	owner  bool
	fn     func(*Record) bool

	user, channel int32 // the reader's, resolved in the space
}

func (m *matcher) resolve(sp *space) {
	if m.reader != nil {
		m.user, m.channel = sp.lookup(m.reader.User), sp.lookup(m.reader.Channel)
	}
}

func (m *matcher) ok(sp *space, id int32) bool {
	d := sp.meta[id]
	if d.kind&m.mask == 0 {
		return false
	}
	if r := m.reader; r != nil {
		// Scope.Visible in integers; TestMatcherAgreesWithVisible keeps
		// the two in step.
		switch {
		case d.dm && !(r.DM && d.user != 0 && d.user == m.user):
			return false
		case d.user != 0 && d.user != m.user:
			return false
		case !d.dm && d.channel != 0 && d.channel != m.channel:
			return false
		case m.owner && (d.user == 0 || d.user != m.user):
			return false
		}
	}
	return m.fn == nil || m.fn(&sp.docs[id].rec)
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
		sp = &space{postings: map[string][]posting{}, names: map[string]int32{}, personal: map[int32][]int32{}}
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
	sp.docs = append(sp.docs, doc{rec: r})
	sp.lens = append(sp.lens, int32(len(terms)))
	sp.alive = append(sp.alive, true)
	meta := docMeta{
		user: sp.intern(r.Scope.User), channel: sp.intern(r.Scope.Channel),
		kind: kindBit(r.Kind), dm: r.Scope.DM,
	}
	sp.meta = append(sp.meta, meta)
	if meta.user != 0 && meta.kind&personalKinds != 0 {
		sp.personal[meta.user] = append(sp.personal[meta.user], id)
	}
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
	if m := sp.meta[ref.doc]; m.user != 0 && m.kind&personalKinds != 0 {
		docs := slices.DeleteFunc(sp.personal[m.user], func(d int32) bool { return d == ref.doc })
		if len(docs) == 0 {
			delete(sp.personal, m.user)
		} else {
			sp.personal[m.user] = docs
		}
	}
	sp.alive[ref.doc] = false
	sp.live--
	sp.dead++
	sp.totalLen -= int64(sp.lens[ref.doc])
	if sp.dead > 1024 && sp.dead > sp.live {
		ix.compact(sp)
	}
}

// compact rebuilds a space without its dead documents.
func (ix *index) compact(sp *space) {
	old, alive := sp.docs, sp.alive
	sp.docs, sp.lens, sp.alive, sp.meta = nil, nil, nil, nil
	sp.postings, sp.personal, sp.live, sp.dead, sp.totalLen = map[string][]posting{}, map[int32][]int32{}, 0, 0, 0
	for i, d := range old {
		if alive[i] {
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

// term is a query term resolved against a space.
type term struct {
	ps []posting
	w  float64 // idf times boost
	ub float64 // the most one document can gain from it
}

// search returns up to k records of sp matching the query terms and keep,
// best first, scored by BM25. It uses MaxScore pruning: terms are taken
// rarest first, and once the terms left could not lift a new document
// above the k-th best candidate, they only add to existing candidates.
func (sp *space) search(terms []queryTerm, m matcher, k int) []hit {
	if sp == nil || sp.live == 0 || k <= 0 {
		return nil
	}
	m.resolve(sp)
	n := float64(sp.live)
	avg := float64(sp.totalLen) / n
	if avg <= 0 {
		avg = 1
	}
	ts := make([]term, 0, len(terms))
	for _, qt := range terms {
		ps := sp.postings[qt.term]
		if len(ps) == 0 || len(ps) > commonTerm && len(ps) > sp.live/2 {
			// A word in most of a large space's records ("hi", the
			// "asked"/"answered" of every turn excerpt) says almost
			// nothing about relevance, and walking its postings would
			// make every search as slow as the space is big.
			continue
		}
		w := rank.IDF(n, float64(len(ps))) * qt.boost
		ts = append(ts, term{ps: ps, w: w, ub: rank.Bound(w)})
	}
	if len(ts) == 0 {
		return nil
	}
	slices.SortFunc(ts, func(a, b term) int { return cmpFloat(b.ub, a.ub) })
	rest := make([]float64, len(ts)+1) // rest[i]: the most terms i.. can add
	for i := len(ts) - 1; i >= 0; i-- {
		rest[i] = rest[i+1] + ts[i].ub
	}

	sc, _ := sp.scratch.Get().(*scorer)
	if sc == nil || len(sc.acc) < len(sp.docs) {
		size := len(sp.docs) + len(sp.docs)/4 + 16
		sc = &scorer{acc: make([]float32, size), state: make([]uint8, size)}
	}
	score := func(t *term, p posting) float32 {
		return float32(rank.Score(t.w, float64(p.tf), float64(sp.lens[p.doc]), avg))
	}
	theta := float32(-1) // the k-th best candidate score, once there are k
	for i := range ts {
		t := &ts[i]
		if theta >= 0 && rest[i] <= float64(theta) {
			// No document outside the candidates can reach the top k now.
			sp.addToCandidates(sc, t, score)
		} else {
			for _, p := range t.ps {
				switch sc.state[p.doc] {
				case unseen:
					sc.touched = append(sc.touched, p.doc)
					if !sp.alive[p.doc] || !m.ok(sp, p.doc) {
						sc.state[p.doc] = refused
						continue
					}
					sc.state[p.doc] = candidate
					sc.cands = append(sc.cands, p.doc)
				case refused:
					continue
				}
				sc.acc[p.doc] += score(t, p)
			}
		}
		if len(sc.cands) >= k && i+1 < len(ts) {
			theta = kthBest(sc, k)
		}
	}
	h := make(hitHeap, 0, k+1)
	for _, id := range sc.cands {
		s := float64(sc.acc[id])
		if len(h) == k && s <= h[0].score {
			continue
		}
		heap.Push(&h, hit{docRef{sp, id}, s})
		if len(h) > k {
			heap.Pop(&h)
		}
	}
	for _, id := range sc.touched {
		sc.acc[id], sc.state[id] = 0, unseen
	}
	sc.touched, sc.cands = sc.touched[:0], sc.cands[:0]
	sp.scratch.Put(sc)
	out := make([]hit, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(hit)
	}
	return out
}

// addToCandidates adds term t's score to the current candidates only,
// by binary search when they are few and a merge over t's postings
// (sorted by document) when they are many.
func (sp *space) addToCandidates(sc *scorer, t *term, score func(*term, posting) float32) {
	if len(sc.cands)*bitsLen(len(t.ps)) < len(t.ps) {
		for _, id := range sc.cands {
			j, found := slices.BinarySearchFunc(t.ps, id, func(p posting, id int32) int { return int(p.doc - id) })
			if found {
				sc.acc[id] += score(t, t.ps[j])
			}
		}
		return
	}
	for _, p := range t.ps {
		if sc.state[p.doc] == candidate {
			sc.acc[p.doc] += score(t, p)
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

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
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

// personalKinds are the kinds space.personal lists.
var personalKinds = kindBit(KindProfile) | kindBit(KindPreference)

// eachPersonal calls fn with every live profile and preference record of
// user in sp.
func (sp *space) eachPersonal(user string, fn func(*Record)) {
	if sp == nil || user == "" {
		return
	}
	id := sp.lookup(user)
	if id <= 0 {
		return
	}
	for _, d := range sp.personal[id] {
		fn(&sp.docs[d].rec)
	}
}

// each calls fn with every live record of sp until fn returns false.
func (sp *space) each(fn func(*Record) bool) {
	if sp == nil {
		return
	}
	for i := range sp.docs {
		if sp.alive[i] && !fn(&sp.docs[i].rec) {
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
