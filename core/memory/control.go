package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/neobot/neobot/core"
)

// recallDigest and aboutDigest cap the records memory_recall renders.
const (
	recallDigest = 8
	aboutDigest  = 20
)

// RecallTool answers the memory_recall tool: a digest of the records most
// relevant to query and the user's profile, read in the scope of the turn
// carried by ctx. An empty query lists what is remembered about the user
// ("what do you remember about me?"). Without a turn it fails with
// ErrNoTurn.
func (c *Cortex) RecallTool(ctx context.Context, query string) (string, error) {
	t, ok := core.TurnFrom(ctx)
	if !ok {
		return "", ErrNoTurn
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	r := ReaderOf(t.Inbound)
	var b strings.Builder
	if p := c.profile(r); p != "" {
		name := t.Inbound.UserName
		if name == "" {
			name = "the user"
		}
		fmt.Fprintf(&b, "Profile of %s:\n", name)
		for _, line := range strings.Split(p, "\n") {
			fmt.Fprintf(&b, "- %s\n", line)
		}
	}
	if strings.TrimSpace(query) == "" {
		// "What do you remember about me?": everything the user owns here.
		recs := c.owned(r, func(rec *Record) bool { return rec.Kind != KindProfile && rec.Kind != KindPreference })
		if len(recs) > aboutDigest {
			recs = recs[:aboutDigest]
		}
		if len(recs) > 0 {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString("Remembered about them:\n")
			for _, rec := range recs {
				fmt.Fprintf(&b, "- [%s, %s] %s\n", rec.Kind, rec.Updated.Format("2006-01-02"), oneLine(rec.Text))
			}
		}
		if b.Len() == 0 {
			return "Nothing is remembered about this user here.", nil
		}
		return strings.TrimRight(b.String(), "\n"), nil
	}
	hits := c.Recall(r, query, recallDigest, KindFact, KindProcedure, KindTurn)
	if len(hits) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "Memories matching %q:\n", query)
		for _, h := range hits {
			fmt.Fprintf(&b, "- [%s, %s] %s\n", h.Kind, h.Updated.Format("2006-01-02"), oneLine(h.Text))
		}
	}
	if b.Len() == 0 {
		return fmt.Sprintf("No memories match %q.", query), nil
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// About returns what Neo remembers about in's author, as visible from in's
// conversation (direct-message memory only in a direct message), newest
// first: the answer to "what do you remember about me?".
func (c *Cortex) About(ctx context.Context, in core.Inbound) ([]Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if in.User == "" {
		return nil, errors.New("memory: about: no user")
	}
	return c.owned(ReaderOf(in), func(*Record) bool { return true }), nil
}

// ForgetTool runs the memory_forget tool: it deletes what the current
// turn's author asked Neo to forget (see ForgetAbout) and says what went,
// so the model can confirm it to them. The scope comes from
// core.TurnFrom(ctx).
func (c *Cortex) ForgetTool(ctx context.Context, query string) (string, error) {
	t, ok := core.TurnFrom(ctx)
	if !ok {
		return "", ErrNoTurn
	}
	gone, err := c.ForgetAbout(ctx, t.Inbound, query)
	if err != nil {
		return "", err
	}
	if len(gone) == 0 {
		if strings.TrimSpace(query) == "" {
			return "Nothing was remembered about this user, so there was nothing to forget.", nil
		}
		return fmt.Sprintf("Nothing remembered about this user matches %q; nothing was forgotten.", query), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Forgot %d memor%s about the user:\n", len(gone), map[bool]string{true: "y", false: "ies"}[len(gone) == 1])
	for _, r := range gone {
		fmt.Fprintf(&b, "- %s\n", oneLine(r.Text))
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// maxForget caps what one query-based forget removes.
const maxForget = 10

// ForgetAbout deletes memory about in's author and returns what it
// deleted. With an empty query it deletes every record the user owns in
// the workspace, direct-message ones included; otherwise only the user's
// records visible here that best match query.
func (c *Cortex) ForgetAbout(ctx context.Context, in core.Inbound, query string) ([]Record, error) {
	if in.User == "" {
		return nil, errors.New("memory: forget: no user")
	}
	r := ReaderOf(in)
	var gone []Record
	if strings.TrimSpace(query) == "" {
		gone = c.match(Filter{Platform: r.Platform, Workspace: r.Workspace, User: r.User})
	} else {
		terms := queryTerms(query, c.opts.IdentifierBoost)
		c.mu.RLock()
		hs := c.ix.spaces[spaceKey{r.Platform, r.Workspace}].search(terms, matcher{mask: kindMask(nil), reader: &r, owner: true}, maxForget)
		for _, h := range hs {
			// Keep to the close matches: a forget must not sweep up
			// records that merely share a word.
			if h.score >= hs[0].score/2 {
				gone = append(gone, h.ref.sp.docs[h.ref.doc].rec)
			}
		}
		c.mu.RUnlock()
	}
	if err := c.write(ctx, nil, recordIDs(gone)); err != nil {
		return nil, err
	}
	return gone, nil
}

// Filter selects records for an operator, by exact scope fields: an empty
// field matches anything.
type Filter struct {
	Platform  string
	Workspace string
	User      string
	Channel   string
	Kind      Kind
}

// Match reports whether r passes f.
func (f Filter) Match(r Record) bool {
	return (f.Platform == "" || f.Platform == r.Scope.Platform) &&
		(f.Workspace == "" || f.Workspace == r.Scope.Workspace) &&
		(f.User == "" || f.User == r.Scope.User) &&
		(f.Channel == "" || f.Channel == r.Scope.Channel) &&
		(f.Kind == "" || f.Kind == r.Kind)
}

// List returns the records matching f, newest first. It is the operator's
// view (neobot memory list) and ignores conversation scope rules.
func (c *Cortex) List(ctx context.Context, f Filter) ([]Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.match(f), nil
}

// Search returns up to limit records matching f, most relevant to query
// first (neobot memory search).
func (c *Cortex) Search(ctx context.Context, f Filter, query string, limit int) ([]Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 20
	}
	terms := queryTerms(query, c.opts.IdentifierBoost)
	keep := matcher{mask: kindMask(nil), fn: func(r *Record) bool { return f.Match(*r) }}
	c.mu.RLock()
	defer c.mu.RUnlock()
	var all []hit
	for k, sp := range c.ix.spaces {
		if (f.Platform == "" || f.Platform == k.platform) && (f.Workspace == "" || f.Workspace == k.workspace) {
			all = append(all, sp.search(terms, keep, limit)...)
		}
	}
	hs := all
	slicesSortHits(hs)
	if len(hs) > limit {
		hs = hs[:limit]
	}
	return toHits(hs), nil
}

// Forget deletes records matching f (neobot memory forget) and returns
// them: the records with the given IDs when ids are given, else every
// record matching f, which must then name at least a workspace.
func (c *Cortex) Forget(ctx context.Context, f Filter, ids ...string) ([]Record, error) {
	var gone []Record
	if len(ids) > 0 {
		c.mu.RLock()
		for _, id := range ids {
			if r, ok := c.ix.get(id); ok && f.Match(r) {
				gone = append(gone, r)
			}
		}
		c.mu.RUnlock()
	} else {
		if f.Workspace == "" {
			return nil, errors.New("memory: forget: name a workspace or record IDs")
		}
		gone = c.match(f)
	}
	if err := c.write(ctx, nil, recordIDs(gone)); err != nil {
		return nil, err
	}
	return gone, nil
}

func (c *Cortex) match(f Filter) []Record {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []Record
	for k, sp := range c.ix.spaces {
		if (f.Platform != "" && f.Platform != k.platform) || (f.Workspace != "" && f.Workspace != k.workspace) {
			continue
		}
		sp.each(func(r *Record) bool {
			if f.Match(*r) {
				out = append(out, *r)
			}
			return true
		})
	}
	sortNewest(out)
	return out
}

func recordIDs(recs []Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// slicesSortHits orders hits best first, newer first on ties.
func slicesSortHits(hs []hit) {
	slices.SortStableFunc(hs, func(a, b hit) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return b.ref.sp.docs[b.ref.doc].rec.Updated.Compare(a.ref.sp.docs[a.ref.doc].rec.Updated)
	})
}
