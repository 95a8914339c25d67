package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/rank"
)

// Archive is the part of a transcript that compaction set aside
// (*store.DB).
type Archive interface {
	// Archived returns the thread's archived entries, oldest first.
	Archived(ctx context.Context, t core.Thread) ([]core.Entry, error)
}

// History searches the archive of the running turn's thread. It backs the
// history_search tool: a summary is bounded, so an identifier or a detail
// it had no room for is still one search away, never lost.
//
// It is a search engine over the thread's archived messages: a query's
// words and identifiers match whole tokens (17 finds "batch 17", never
// "0x17ab" or "170"), a quoted query, or a multi-word header, matches as
// an exact phrase, and hits are ranked with BM25. The tokenizer and the
// index are package rank's, as memory recall's are. A hit in a message of at most WholeHit bytes shows the whole
// message; in a longer one, its first line (a result's header) and the
// lines around every match. Each hit names its reference (msg:1234): that
// reference as the query returns the whole message, page by page past
// the page size. The index of each recently searched thread is kept in
// memory and grows with its archive; the store stays the only truth.
type History struct {
	archive Archive
	page    int // bytes of one answer

	mu     sync.Mutex
	cached map[string]*archiveIndex
	order  []string // thread keys, least recently searched first
}

// NewHistory returns a History over archive whose answers are at most
// DefaultResultCap bytes, a tool result's default cap.
func NewHistory(archive Archive) *History {
	return NewHistoryPaged(archive, DefaultResultCap)
}

// NewHistoryPaged returns a History over archive whose answers are at
// most page bytes (the tool-result cap; DefaultResultCap when 0, at
// least 1 KiB): a longer message opens page by page.
func NewHistoryPaged(archive Archive, page int) *History {
	if page <= 0 {
		page = DefaultResultCap
	}
	return &History{archive: archive, page: max(page, 1<<10), cached: map[string]*archiveIndex{}}
}

// WholeHit is the size, in bytes, of the longest archived message a hit
// shows whole; a longer one shows its first line and the lines around
// the matches.
const WholeHit = 2 << 10

// Limits of one search's answer, and of the indexes kept.
const (
	historyHits      = 8
	historyExcerpt   = 1500 // bytes of one hit's excerpt
	historyLineWidth = 300  // bytes of one line shown
	historyThreads   = 16   // indexes kept
	phraseBonus      = 1000 // ranks exact-phrase hits above all others
)

// ErrNoQuery is a history search without anything to look for.
var ErrNoQuery = errors.New("agent: history search needs a query")

// Search returns the archived messages of the thread of call's turn that
// best match query, best first (the newest first among equals), each
// shown whole or as its header and the lines around its matches, at most
// a page in all; "" when none matches. A query that is a reference
// (msg:1234, msg:1234/2) returns that message, a page at a time. That
// thread is the only one searched; a call without a turn searches
// nothing.
func (h *History) Search(ctx context.Context, call core.ToolCall, query string) (string, error) {
	t := call.Turn()
	if t == nil {
		return "", errors.New("agent: history search outside a turn")
	}
	if strings.TrimSpace(query) == "" {
		return "", ErrNoQuery
	}
	q := parseQuery(query)
	entries, err := h.archive.Archived(ctx, t.Inbound.Thread)
	if err != nil {
		return "", fmt.Errorf("agent: read the archive of %s: %w", t.Inbound.Thread, err)
	}
	ix := h.index(t.Inbound.Thread.Key(), entries)
	if seq, page, ok := parseRef(query); ok {
		return h.open(ix, seq, page), nil
	}
	var b strings.Builder
	hits := ix.search(q, historyHits)
	for i, d := range hits {
		hit := fmt.Sprintf("[%s · %s] %s\n", d.label, ref(d.seq), d.show(q))
		if i > 0 && b.Len()+len(hit)+1 > h.page {
			fmt.Fprintf(&b, "\n(%d more hits not shown: search more precisely)", len(hits)-i)
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(hit)
	}
	return b.String(), nil
}

// parseRef reads a query that is a reference to one archived message:
// msg:1234, or msg:1234/2 for its second page.
func parseRef(query string) (seq uint64, page int, ok bool) {
	rest, found := strings.CutPrefix(strings.Trim(strings.TrimSpace(query), `"'`), refPrefix)
	if !found {
		return 0, 0, false
	}
	num, pg, paged := strings.Cut(rest, "/")
	page = 1
	if paged {
		if _, err := fmt.Sscan(pg, &page); err != nil || page < 1 || fmt.Sprint(page) != pg {
			return 0, 0, false
		}
	}
	if _, err := fmt.Sscan(num, &seq); err != nil || fmt.Sprint(seq) != num {
		return 0, 0, false
	}
	return seq, page, true
}

// open returns page of the archived message seq, whole when it fits one
// page, and says how to read the next page.
func (h *History) open(ix *archiveIndex, seq uint64, page int) string {
	i, found := slices.BinarySearchFunc(ix.docs, seq, func(d historyDoc, seq uint64) int { return cmp.Compare(d.seq, seq) })
	if !found {
		return fmt.Sprintf("no archived message %s in this conversation", ref(seq))
	}
	d := &ix.docs[i]
	label := fmt.Sprintf("[%s · %s]", d.label, ref(d.seq))
	size := max(h.page-len(label)-200, 512) // room for the label and the note
	text, from, n := d.text, 0, 1
	for ; n < page && from < len(text); n++ {
		from += pageEnd(text[from:], size)
	}
	if from >= len(text) {
		return fmt.Sprintf("%s has %d pages; there is no page %d", ref(seq), n-1, page)
	}
	end := from + pageEnd(text[from:], size)
	if from == 0 && end == len(text) {
		return label + " " + text
	}
	pages := n
	for at := end; at < len(text); pages++ {
		at += pageEnd(text[at:], size)
	}
	out := fmt.Sprintf("%s page %d of %d:\n%s", label, page, pages, text[from:end])
	if end < len(text) {
		out += fmt.Sprintf("\n[page %d of %d: history_search %q shows the next]", page, pages, fmt.Sprintf("%s/%d", ref(seq), page+1))
	}
	return out
}

// pageEnd is where a page of at most size bytes of s ends: after a line
// when one ends in its second half, else on a rune boundary.
func pageEnd(s string, size int) int {
	if len(s) <= size {
		return len(s)
	}
	if nl := strings.LastIndexByte(s[:size], '\n'); nl >= size/2 {
		return nl + 1
	}
	return len(cutAt(s, size))
}

// index returns the thread's index brought up to entries: the archive
// only grows, so entries past the ones indexed are added; anything else
// (a thread dropped and begun again) is indexed afresh.
func (h *History) index(key string, entries []core.Entry) *archiveIndex {
	h.mu.Lock()
	defer h.mu.Unlock()
	ix := h.cached[key]
	if ix == nil || ix.covered > len(entries) || ix.covered > 0 && entries[ix.covered-1].Seq != ix.lastSeq {
		// Sized for the archive at hand: growing the map as it fills
		// was most of a first search's time.
		ix = &archiveIndex{terms: rank.NewIndex(len(entries)), docs: make([]historyDoc, 0, len(entries))}
	}
	for _, e := range entries[ix.covered:] {
		ix.add(e)
	}
	h.cached[key] = ix
	h.order = append(slices.DeleteFunc(h.order, func(k string) bool { return k == key }), key)
	if len(h.order) > historyThreads {
		delete(h.cached, h.order[0])
		h.order = h.order[1:]
	}
	return ix
}

// archiveIndex is one thread's archived messages as a BM25 inverted index
// (rank.Index): document i is docs[i].
type archiveIndex struct {
	covered int    // entries indexed, from the first
	lastSeq uint64 // the last indexed entry's Seq
	docs    []historyDoc
	terms   *rank.Index
}

// historyDoc is one archived message.
type historyDoc struct {
	seq   uint64 // its entry's Seq: its reference
	label string
	text  string
	words []string // its word tokens in order, for phrases
}

func (ix *archiveIndex) add(e core.Entry) {
	ix.covered++
	ix.lastSeq = e.Seq
	var r record
	if err := json.Unmarshal(e.Data, &r); err != nil || r.Msg == nil || r.Of > 0 {
		// An entry this version cannot read, an anchor, and a copy or
		// stub of an entry archived already (setAside) are skipped.
		return
	}
	text := messageText(*r.Msg)
	d := historyDoc{seq: e.Seq, label: roleLabel(*r.Msg), text: text, words: rank.Words(text, nil)}
	ix.terms.Add(rank.Identifiers(text, slices.Clone(d.words)))
	ix.docs = append(ix.docs, d)
}

// query is a parsed history search.
type query struct {
	words   []string   // distinct word tokens: a hit has every one
	ids     []string   // distinct identifiers: they rank a hit up
	phrases [][]string // word runs a hit must (quoted) or should contain
	quoted  int        // phrases[:quoted] are required
}

// idBoost is how much more an identifier, matched whole, weighs than a
// word.
const idBoost = 2

// parseQuery reads a query: "quoted parts" are required phrases; the rest,
// when it has two words or more, is a phrase that ranks first (a header
// the model remembers). Every word must match a whole token.
func parseQuery(s string) query {
	var q query
	seen := map[string]bool{}
	distinct := func(dst *[]string, ts []string) {
		for _, t := range ts {
			if !seen[t] {
				seen[t] = true
				*dst = append(*dst, t)
			}
		}
	}
	var loose strings.Builder
	parts := strings.Split(s, `"`)
	for i, p := range parts {
		if i%2 == 1 && i < len(parts)-1 { // inside a pair of quotes
			if ws := rank.Words(p, nil); len(ws) > 0 {
				q.phrases = append(q.phrases, ws)
				distinct(&q.words, ws)
				distinct(&q.ids, rank.Identifiers(p, nil))
			}
			continue
		}
		loose.WriteString(p + " ")
	}
	q.quoted = len(q.phrases)
	ws := rank.Words(loose.String(), nil)
	if len(ws) > 1 {
		q.phrases = append(q.phrases, ws)
	}
	distinct(&q.words, ws)
	distinct(&q.ids, rank.Identifiers(loose.String(), nil))
	return q
}

// search returns up to k documents: those holding every word (or, when
// none does, any word), those without a required phrase left out, ranked
// by BM25 with identifiers weighing more and a phrase's hits first, the
// newest first among equals.
func (ix *archiveIndex) search(q query, k int) []*historyDoc {
	if len(ix.docs) == 0 || len(q.words) == 0 {
		return nil
	}
	terms := make([]rank.Term, 0, len(q.words)+len(q.ids))
	for _, t := range q.words {
		terms = append(terms, rank.Term{Text: t, Boost: 1})
	}
	for _, t := range q.ids {
		terms = append(terms, rank.Term{Text: t, Boost: idBoost})
	}
	matches := ix.terms.Match(terms, len(q.words))
	all := slices.ContainsFunc(matches, func(m rank.Match) bool { return m.Count == len(q.words) })
	type scored struct {
		doc   int32
		score float64
	}
	var hits []scored
	for _, m := range matches {
		if all && m.Count < len(q.words) {
			continue
		}
		d, s, ok := &ix.docs[m.Doc], m.Score, true
		for i, ph := range q.phrases {
			has := containsPhrase(d.words, ph)
			if i < q.quoted && !has {
				ok = false
				break
			}
			if has {
				s += phraseBonus
			}
		}
		if ok {
			hits = append(hits, scored{m.Doc, s})
		}
	}
	slices.SortFunc(hits, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(b.doc, a.doc)
	})
	out := make([]*historyDoc, 0, min(k, len(hits)))
	for _, h := range hits[:min(k, len(hits))] {
		out = append(out, &ix.docs[h.doc])
	}
	return out
}

// containsPhrase reports whether words holds phrase as a run.
func containsPhrase(words, phrase []string) bool {
	if len(phrase) == 0 {
		return false
	}
	for i := 0; i+len(phrase) <= len(words); i++ {
		if slices.Equal(words[i:i+len(phrase)], phrase) {
			return true
		}
	}
	return false
}

// show is what a hit shows of d: the whole message when it is at most
// WholeHit bytes, else its excerpt and how to open it whole.
func (d *historyDoc) show(q query) string {
	if len(d.text) <= WholeHit {
		return strings.TrimRight(d.text, "\n")
	}
	return d.excerpt(q) + fmt.Sprintf("\n(%d bytes in all: history_search %q shows it whole)", len(d.text), ref(d.seq))
}

// excerpt shows the first line of d (a result's header) and the lines
// that match q, each with the line before and after it, joined with "…"
// where lines are left out, at most historyExcerpt bytes.
func (d *historyDoc) excerpt(q query) string {
	lines := strings.Split(d.text, "\n")
	want := map[string]bool{}
	for _, t := range slices.Concat(q.words, q.ids) {
		want[t] = true
	}
	show := make([]bool, len(lines))
	show[0] = true // the header
	any := false
	for i, line := range lines {
		ws := rank.Words(line, nil)
		hit := slices.ContainsFunc(rank.Identifiers(line, slices.Clone(ws)), func(t string) bool { return want[t] })
		for _, ph := range q.phrases {
			hit = hit || containsPhrase(ws, ph)
		}
		if hit {
			any = true
			for j := max(0, i-1); j <= min(len(lines)-1, i+1); j++ {
				show[j] = true
			}
		}
	}
	if !any { // a phrase across lines: show the start
		for i := range min(3, len(lines)) {
			show[i] = true
		}
	}
	var b strings.Builder
	gap := false
	for i, line := range lines {
		if !show[i] {
			gap = true
			continue
		}
		if gap {
			b.WriteString("…\n")
		}
		gap = false
		line = strings.TrimRight(line, " \t\r")
		if len(line) > historyLineWidth {
			line = cutAt(line, historyLineWidth) + "…"
		}
		if b.Len()+len(line) > historyExcerpt {
			b.WriteString("… (more matches not shown)")
			return b.String()
		}
		b.WriteString(line + "\n")
	}
	if gap {
		b.WriteString("…")
	}
	return strings.TrimRight(b.String(), "\n")
}

// cutAt returns s cut to at most n bytes on a rune boundary.
func cutAt(s string, n int) string {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// messageText is what a message said: its content and its tool calls.
func messageText(m llm.Message) string {
	var b strings.Builder
	b.WriteString(m.Content)
	for _, tc := range m.ToolCalls {
		b.WriteString("\n-> " + tc.Function.Name + " " + tc.Function.Arguments)
	}
	return b.String()
}

func roleLabel(m llm.Message) string {
	if m.Role == llm.RoleTool && m.Name != "" {
		return "tool " + m.Name
	}
	return m.Role
}

// Messages decodes transcript entries (archived, then live) into the
// messages they hold, in order, for an operator's export. Entries that
// hold no message (anchors) are skipped, and so are the copies and stubs
// a set-aside appended: the archive holds their originals, which come
// first.
func Messages(entries []core.Entry) ([]llm.Message, error) {
	out := make([]llm.Message, 0, len(entries))
	for _, e := range entries {
		var r record
		if err := json.Unmarshal(e.Data, &r); err != nil {
			return nil, fmt.Errorf("agent: decode entry %d: %w", e.Seq, err)
		}
		if r.Msg != nil && r.Of == 0 {
			out = append(out, *r.Msg)
		}
	}
	return out, nil
}

// TurnText returns the question of the turn whose user message has
// eventID, and the final answer it got, from a thread's entries (archived
// first, then live). The answer is "" while the turn has none; an
// unknown turn is core.ErrNotFound.
func TurnText(entries []core.Entry, eventID string) (question, answer string, err error) {
	found := false
	for _, e := range entries {
		var r record
		if err := json.Unmarshal(e.Data, &r); err != nil {
			return "", "", fmt.Errorf("agent: decode entry %d: %w", e.Seq, err)
		}
		if r.EventID != eventID || r.Msg == nil || r.Of > 0 {
			continue // a set-aside's copy: the original says the same
		}
		switch {
		case r.Msg.Role == llm.RoleUser:
			question, found = r.Msg.Content, true
		case r.Final:
			answer = r.Msg.Content
		}
	}
	if !found {
		return "", "", fmt.Errorf("agent: turn %s: %w", eventID, core.ErrNotFound)
	}
	return question, answer, nil
}
