// Package memory is Neo's cortex: durable memory records scoped to a
// workspace (and optionally a user, a channel, or a direct message),
// retrieved by full-text relevance for the page-fault step of each turn
// and for the memory_recall tool, and written back after each turn by a
// cheap model that keeps the records current.
//
// Records live in a [Store] (bbolt in production); retrieval runs on an
// in-memory BM25 index derived from the store and rebuilt from it by
// [New]. Scope is enforced on every read by [Scope.Visible]: nothing from
// one workspace is recalled in another, a user's direct-message memory
// never surfaces in a channel, and what is said in a private channel or
// thread never surfaces outside it.
package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
	"github.com/rs/zerolog"
)

// ErrNoTurn reports a recall with no turn in its context: without a turn
// there is no scope to read in.
var ErrNoTurn = errors.New("memory: no turn in context")

// Model is the cheap chat model that writes memory back. *llm.Client
// satisfies it.
type Model interface {
	Chat(ctx context.Context, req llm.ChatRequest) (*llm.ChatResult, error)
}

// Options configures [New].
type Options struct {
	// Store keeps the records. Required.
	Store Store
	// Model (the cheap model) extracts facts after each turn. Nil: Main
	// does; both nil: write-back keeps only turn excerpts and procedures.
	Model Model
	// Main is the main model, asked in Model's place when Model fails (an
	// error, or an answer that is not the JSON asked for). Nil: no
	// fallback.
	Main Model
	// MaxMemories, MaxPatterns and MaxTurns cap what one page fault
	// returns (defaults 5, 3, 3).
	MaxMemories, MaxPatterns, MaxTurns int
	// IdentifierBoost multiplies the weight of an exact identifier or
	// entity match (default 2).
	IdentifierBoost float64
	// TurnTTL is how long turn excerpts are kept before Sweep drops them
	// (default 90 days; negative keeps them forever). Facts, profiles and
	// procedures stay until replaced or forgotten.
	TurnTTL time.Duration
	// MaxTurnsKept caps the turn excerpts kept per conversation (a
	// channel, a DM, a private thread; default 1,000): a new one replaces
	// the oldest. The index lives in memory, so a busy channel's excerpts
	// must not grow it for TurnTTL.
	MaxTurnsKept int
	// MaxWorkspaceTurns caps the turn excerpts kept across a workspace
	// (default 20,000, about 20 MB of index): past it, a new one replaces
	// the workspace's oldest, whichever conversation holds it. Without it
	// a thousand busy channels would each keep MaxTurnsKept.
	MaxWorkspaceTurns int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logger receives write-back diagnostics (zero value: silent).
	Logger zerolog.Logger
}

// Cortex is Neo's memory. It is safe for concurrent use.
type Cortex struct {
	store   Store
	models  []Model // asked in order until one answers: cheap, then main
	opts    Options
	now     func() time.Time
	log     zerolog.Logger
	mu      sync.RWMutex // guards ix
	ix      *index
	writing idLocks // orders store+index updates that touch the same records

	turnsMu sync.Mutex
	turns   map[spaceKey]*turnQueues // each workspace's turn excerpts
}

// turnQueues are a workspace's turn excerpts, per conversation, oldest
// first.
type turnQueues struct {
	convs map[Scope][]turnRef
	n     int // excerpts in convs
}

// turnRef is a turn excerpt kept in a conversation's queue.
type turnRef struct {
	id      string
	created time.Time
}

// keepTurn queues a new turn excerpt of scope and returns the IDs of the
// oldest ones past Options.MaxTurnsKept in its conversation and past
// Options.MaxWorkspaceTurns in its workspace, to delete with its write.
// Some may be gone already (forgotten, swept): deleting them again is a
// no-op.
func (c *Cortex) keepTurn(scope Scope, id string, created time.Time) []string {
	c.turnsMu.Lock()
	defer c.turnsMu.Unlock()
	ws := queuesOf(c.turns, scope)
	q := append(ws.convs[scope], turnRef{id, created})
	ws.n++
	var drop []string
	if over := len(q) - c.opts.MaxTurnsKept; over > 0 {
		for _, r := range q[:over] {
			drop = append(drop, r.id)
		}
		q = q[over:] // the next append that outgrows it copies only these
		ws.n -= over
	}
	ws.convs[scope] = q
	for ws.n > c.opts.MaxWorkspaceTurns {
		drop = append(drop, ws.dropOldest())
	}
	return drop
}

// queuesOf returns the turn queues of scope's workspace in turns,
// adding them when the workspace has none yet.
func queuesOf(turns map[spaceKey]*turnQueues, scope Scope) *turnQueues {
	k := spaceKey{scope.Platform, scope.Workspace}
	ws := turns[k]
	if ws == nil {
		ws = &turnQueues{convs: map[Scope][]turnRef{}}
		turns[k] = ws
	}
	return ws
}

// dropOldest removes the workspace's oldest excerpt and returns its ID.
// It looks at each conversation's oldest: conversations are far fewer
// than excerpts.
func (ws *turnQueues) dropOldest() string {
	var from Scope
	var oldest turnRef
	for s, q := range ws.convs {
		if len(q) > 0 && (oldest.id == "" || q[0].created.Before(oldest.created)) {
			from, oldest = s, q[0]
		}
	}
	if q := ws.convs[from][1:]; len(q) > 0 {
		ws.convs[from] = q
	} else {
		delete(ws.convs, from)
	}
	ws.n--
	return oldest.id
}

// New returns a cortex over opts.Store, indexing every stored record.
func New(ctx context.Context, opts Options) (*Cortex, error) {
	if opts.Store == nil {
		return nil, errors.New("memory: no store")
	}
	if opts.MaxMemories <= 0 {
		opts.MaxMemories = 5
	}
	if opts.MaxPatterns <= 0 {
		opts.MaxPatterns = 3
	}
	if opts.MaxTurns <= 0 {
		opts.MaxTurns = 3
	}
	if opts.IdentifierBoost <= 0 {
		opts.IdentifierBoost = 2
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.TurnTTL == 0 {
		opts.TurnTTL = 90 * 24 * time.Hour
	}
	if opts.MaxTurnsKept <= 0 {
		opts.MaxTurnsKept = 1000
	}
	if opts.MaxWorkspaceTurns <= 0 {
		opts.MaxWorkspaceTurns = 20000
	}
	c := &Cortex{store: opts.Store, opts: opts, now: opts.Now, log: opts.Logger}
	for _, m := range []Model{opts.Model, opts.Main} {
		if m != nil {
			c.models = append(c.models, m)
		}
	}
	var err error
	if c.ix, c.turns, err = load(ctx, opts.Store); err != nil {
		return nil, fmt.Errorf("memory: load records: %w", err)
	}
	return c, nil
}

// load indexes every stored record, and queues each conversation's turn
// excerpts oldest first.
func load(ctx context.Context, st Store) (*index, map[spaceKey]*turnQueues, error) {
	ix, turns := newIndex(), map[spaceKey]*turnQueues{}
	err := st.ScanMemories(ctx, func(r Record) error {
		ix.put(r)
		if r.Kind == KindTurn {
			ws := queuesOf(turns, r.Scope)
			ws.convs[r.Scope] = append(ws.convs[r.Scope], turnRef{r.ID, r.Created})
			ws.n++
		}
		return nil
	})
	for _, ws := range turns {
		for _, refs := range ws.convs {
			slices.SortStableFunc(refs, func(a, b turnRef) int { return a.created.Compare(b.created) })
		}
	}
	return ix, turns, err
}

// Len returns the number of records held.
func (c *Cortex) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.ix.byID)
}

// Hit is a record with its relevance to a query.
type Hit struct {
	Record
	Score float64
}

// Recall returns up to k records of the given kinds visible to r, most
// relevant to query first. No kinds means every kind.
func (c *Cortex) Recall(r Reader, query string, k int, kinds ...Kind) []Hit {
	terms := queryTerms(query, c.opts.IdentifierBoost)
	if len(terms) == 0 {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	sp := c.ix.spaces[spaceKey{r.Platform, r.Workspace}]
	hs := sp.search(terms, matcher{mask: kindMask(kinds), reader: &r}, k)
	return toHits(hs)
}

func toHits(hs []hit) []Hit {
	out := make([]Hit, len(hs))
	for i, h := range hs {
		out[i] = Hit{Record: h.ref.sp.docs[h.ref.doc].rec, Score: h.score}
	}
	return out
}

// Fault is the page-fault step of a turn: the reader's profile, and the
// facts, procedures and past exchanges most relevant to query (the
// inbound text when query is empty), all within what in's conversation may
// see.
func (c *Cortex) Fault(ctx context.Context, in core.Inbound, query string) (core.Recall, error) {
	if err := ctx.Err(); err != nil {
		return core.Recall{}, err
	}
	if query == "" {
		query = in.Text
	}
	r := ReaderOf(in)
	var out core.Recall
	out.Profile = c.profile(r)
	for _, h := range c.Recall(r, query, c.opts.MaxMemories, KindFact) {
		out.Memories = append(out.Memories, h.Text)
	}
	for _, h := range c.Recall(r, query, c.opts.MaxPatterns, KindProcedure) {
		out.Patterns = append(out.Patterns, h.Text)
	}
	for _, h := range c.Recall(r, query, c.opts.MaxTurns, KindTurn) {
		out.Turns = append(out.Turns, h.Text)
	}
	return out, nil
}

// maxProfile caps the profile lines rendered.
const maxProfile = 12

// profile renders the reader's own profile and preference records, newest
// first.
func (c *Cortex) profile(r Reader) string {
	if r.User == "" {
		return ""
	}
	var recs []Record
	c.mu.RLock()
	c.ix.spaces[spaceKey{r.Platform, r.Workspace}].eachPersonal(r.User, func(rec *Record) {
		if rec.Scope.User == r.User && rec.Scope.Visible(r) {
			recs = append(recs, *rec)
		}
	})
	c.mu.RUnlock()
	sortNewest(recs)
	if len(recs) > maxProfile {
		recs = recs[:maxProfile]
	}
	lines := make([]string, len(recs))
	for i, rec := range recs {
		lines[i] = rec.Text
	}
	return strings.Join(lines, "\n")
}

// owned returns the records visible to r that belong to r's user and pass
// keep, newest first.
func (c *Cortex) owned(r Reader, keep func(*Record) bool) []Record {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []Record
	c.ix.spaces[spaceKey{r.Platform, r.Workspace}].each(func(rec *Record) bool {
		if rec.Scope.User == r.User && rec.Scope.Visible(r) && keep(rec) {
			out = append(out, *rec)
		}
		return true
	})
	sortNewest(out)
	return out
}

func sortNewest(recs []Record) {
	slices.SortStableFunc(recs, func(a, b Record) int { return b.Updated.Compare(a.Updated) })
}

// write stores put and del, then updates the index to match.
func (c *Cortex) write(ctx context.Context, put []Record, del []string) error {
	return c.writeWith(put, del, func() error { return c.store.WriteMemories(ctx, put, del) })
}

// writeLater is write for a turn's write-back: on a LaterStore it does not
// wait for the commit.
func (c *Cortex) writeLater(ctx context.Context, put []Record, del []string) error {
	later, ok := c.store.(LaterStore)
	if !ok {
		return c.write(ctx, put, del)
	}
	return c.writeWith(put, del, func() error { return later.WriteMemoriesLater(put, del) })
}

// writeWith stores put and del with store, then updates the index.
func (c *Cortex) writeWith(put []Record, del []string, store func() error) error {
	if len(put) == 0 && len(del) == 0 {
		return nil
	}
	ids := slices.Clone(del)
	for _, r := range put {
		ids = append(ids, r.ID)
	}
	defer c.writing.lock(ids)()
	if err := store(); err != nil {
		return fmt.Errorf("memory: write: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range del {
		c.ix.remove(id)
	}
	for _, r := range put {
		c.ix.put(r)
	}
	return nil
}

// Changed brings the index up to date with records another process
// changed in the shared store: the records with ids are read again (those
// gone are dropped), or, with no ids, every record is. A store that is
// not a [Loader] is always read whole.
func (c *Cortex) Changed(ctx context.Context, ids ...string) error {
	loader, ok := c.store.(Loader)
	if len(ids) == 0 || !ok {
		ix, turns, err := load(ctx, c.store)
		if err != nil {
			return fmt.Errorf("memory: reload records: %w", err)
		}
		c.mu.Lock()
		c.ix = ix
		c.mu.Unlock()
		c.turnsMu.Lock()
		c.turns = turns
		c.turnsMu.Unlock()
		return nil
	}
	defer c.writing.lock(ids)()
	recs, err := loader.LoadMemories(ctx, ids)
	if err != nil {
		return fmt.Errorf("memory: reload %d records: %w", len(ids), err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		c.ix.remove(id)
	}
	for _, r := range recs {
		c.ix.put(r)
	}
	return nil
}

// Remember stores a new record (ID, Created and Updated filled in when
// empty) and returns it.
func (c *Cortex) Remember(ctx context.Context, r Record) (Record, error) {
	if err := checkRecord(r); err != nil {
		return Record{}, err
	}
	if r.ID == "" {
		r.ID = newID()
	}
	now := c.now()
	if r.Created.IsZero() {
		r.Created = now
	}
	if r.Updated.IsZero() {
		r.Updated = r.Created
	}
	if err := c.write(ctx, []Record{r}, nil); err != nil {
		return Record{}, err
	}
	return r, nil
}

func checkRecord(r Record) error {
	switch {
	case r.Scope.Platform == "" || r.Scope.Workspace == "":
		return errors.New("memory: record without platform and workspace")
	case r.Scope.DM && r.Scope.User == "":
		return errors.New("memory: DM record without user")
	case !r.Kind.Valid():
		return fmt.Errorf("memory: unknown kind %q", r.Kind)
	case strings.TrimSpace(r.Text) == "":
		return errors.New("memory: empty record")
	}
	return nil
}

// Sweep drops turn excerpts older than Options.TurnTTL as of now and
// returns how many it dropped. The caller schedules it (alongside the
// store's sweep); it goes through the cortex so the index stays in step.
func (c *Cortex) Sweep(ctx context.Context, now time.Time) (int, error) {
	if c.opts.TurnTTL < 0 {
		return 0, nil
	}
	old := c.match(Filter{Kind: KindTurn})
	old = slices.DeleteFunc(old, func(r Record) bool { return now.Sub(r.Updated) < c.opts.TurnTTL })
	if err := c.write(ctx, nil, recordIDs(old)); err != nil {
		return 0, err
	}
	return len(old), nil
}
