package memory

import (
	"slices"

	"github.com/neobot/neobot/core/rank"
)

// The index is an in-memory BM25 inverted index (rank.Index), one per
// workspace, built from the store at New and kept in step with every
// write. It is never persisted, so it can never be stale: bbolt is the
// only truth.

type spaceKey struct{ platform, workspace string }

// space indexes one workspace's records: the terms in terms, document i
// being docs[i], its scope and kind in meta[i].
type space struct {
	terms *rank.Index
	docs  []doc
	meta  []docMeta
	names map[string]int32 // interned users and channels, from 1
	// personal lists each user's profile and preference documents (by
	// interned user), so the profile block every turn renders reads the
	// user's few records, not the whole space.
	personal map[int32][]int32
	dead     int
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
		sp = &space{terms: rank.NewIndex(0), names: map[string]int32{}, personal: map[int32][]int32{}}
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
	id := sp.terms.Add(docTerms(&r))
	sp.docs = append(sp.docs, doc{rec: r})
	meta := docMeta{
		user: sp.intern(r.Scope.User), channel: sp.intern(r.Scope.Channel),
		kind: kindBit(r.Kind), dm: r.Scope.DM,
	}
	sp.meta = append(sp.meta, meta)
	if meta.user != 0 && meta.kind&personalKinds != 0 {
		sp.personal[meta.user] = append(sp.personal[meta.user], id)
	}
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
	sp.terms.Remove(ref.doc)
	sp.dead++
	if sp.dead > 1024 && sp.dead > sp.terms.Live() {
		ix.compact(sp)
	}
}

// compact rebuilds a space without its dead documents.
func (ix *index) compact(sp *space) {
	old, terms := sp.docs, sp.terms
	sp.docs, sp.meta = nil, nil
	sp.terms, sp.personal, sp.dead = rank.NewIndex(terms.Live()), map[int32][]int32{}, 0
	for i, d := range old {
		if terms.Alive(int32(i)) {
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

// search returns up to k records of sp matching the query terms and m,
// best first (rank.Index.Search).
func (sp *space) search(terms []rank.Term, m matcher, k int) []hit {
	if sp == nil {
		return nil
	}
	m.resolve(sp)
	hs := sp.terms.Search(terms, k, func(doc int32) bool { return m.ok(sp, doc) })
	out := make([]hit, len(hs))
	for i, h := range hs {
		out[i] = hit{docRef{sp, h.Doc}, h.Score}
	}
	return out
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
		if sp.terms.Alive(int32(i)) && !fn(&sp.docs[i].rec) {
			return
		}
	}
}
