package agent

import (
	"context"
	"fmt"

	"github.com/neobot/neobot/core/compact"
	"github.com/neobot/neobot/core/llm"
)

// asideMargin is how far under the soft threshold a set-aside brings the
// next request, so the turn's next few steps fit without another one.
const asideMargin = 0.15

// setAside makes room when compacting can free no more: the turn's own
// tool results, oldest first, are archived (history_search finds them as
// any other archived message) and replaced in the window by a one-line
// stub naming the tool, the size and the reference that opens the result
// again. A result too large for the window on its own is cut instead,
// saying so. It reports whether the next request now fits under the hard
// threshold; it changes nothing when no result can go. refused says the
// model refused the last request as over its window: however low the
// estimate, the request is taken to be at least the window.
//
// The transcript only grows: the live entries are appended again, stubs
// in place of the results set aside, after a marker (record.Moved), and
// then the originals are archived. A load that finds the marker with the
// originals still live archives them (load).
func (tr *turn) setAside(ctx context.Context, refused bool) (bool, error) {
	a, st := tr.a, tr.st
	w := float64(a.opts.ContextWindow)
	limit, target := int(a.budget.HardPct*w), int((a.budget.SoftPct-asideMargin)*w)
	fixed := tr.overhead() + a.opts.Counter(st.summary.Text)
	from := tr.start // the turn's first item
	if tr.anchored() {
		from = 0
		fixed += a.tokens(userMessage(tr.t.Inbound, a.opts.Vision))
	}
	// The estimate, scaled to the provider's count of the last request
	// when that is higher: the figure the thresholds are checked on.
	used := fixed
	for _, it := range st.items {
		used += it.tokens
	}
	least := tr.used()
	if refused {
		least = max(least, a.opts.ContextWindow)
	}
	scale := max(1, float64(least)/float64(max(used, 1)))
	over := func(goal int) bool { return float64(used)*scale > float64(goal) }
	recs := make([]record, len(st.items))
	tokens := make([]int, len(st.items))
	for i, it := range st.items {
		recs[i], tokens[i] = it.rec, it.tokens
		recs[i].Of = it.seq
		if it.rec.Of > 0 {
			recs[i].Of = it.rec.Of
		}
	}
	change := func(i int, m llm.Message, stub bool) {
		recs[i].Msg, recs[i].Stub = &m, stub
		n := compact.MessageTokens(a.opts.Counter, m)
		used += n - tokens[i]
		tokens[i] = n
	}
	set, cut := 0, 0
	for i := from; i < len(st.items); i++ {
		it := st.items[i]
		if it.msg.Role != llm.RoleTool || it.rec.Stub || a.tokens(it.msg) <= limit-fixed {
			continue
		}
		m := it.msg
		m.Content = cutToFit(a, m.Content, (limit-fixed)/2, recs[i].Of)
		change(i, m, false)
		cut++
	}
	// Oldest first, down to the target while the last step's results
	// (the model has not seen them yet) stay; then, only if the request
	// would not fit at all, those too.
	newest := len(st.items)
	for newest > from && st.items[newest-1].msg.Role != llm.RoleAssistant {
		newest--
	}
	for _, pass := range []struct{ end, goal int }{{newest, target}, {len(st.items), limit - 1}} {
		for i := from; i < pass.end && over(pass.goal); i++ {
			if it := st.items[i]; it.msg.Role == llm.RoleTool && !recs[i].Stub {
				change(i, llm.ToolResult(it.msg.ToolCallID, it.msg.Name, stubText(it.msg, recs[i].Of)), true)
				set++
			}
		}
	}
	if set == 0 && cut == 0 {
		return false, nil
	}
	last := st.items[len(st.items)-1].seq
	if err := tr.appendAgain(ctx, last, recs); err != nil {
		return false, err
	}
	reason := ReasonSetAside
	if cut > 0 {
		reason = ReasonCut
	}
	a.observe(EventCompaction, reason)
	a.log.Info().Str("thread", st.thread.Key()).Str("reason", reason).Int("set_aside", set).Int("cut", cut).
		Int("used", int(float64(used)*scale)).Int("window", a.opts.ContextWindow).Msg("agent: set the turn's oldest tool results aside")
	return !over(limit - 1), nil
}

// appendAgain appends recs, the live entries as they are to stay, after
// a marker, archives the originals (up to last) and makes the appended
// entries the live items.
func (tr *turn) appendAgain(ctx context.Context, last uint64, recs []record) error {
	a, st := tr.a, tr.st
	n := len(st.items)
	if err := a.appendRecords(ctx, st, append([]record{{Moved: last}}, recs...)...); err != nil {
		return err
	}
	st.items = append(st.items[:0], st.items[n+1:]...) // the marker is no item
	sum := st.summary
	sum.UpTo = last
	if err := a.opts.Transcript.Compact(ctx, st.thread, sum); err != nil {
		return fmt.Errorf("agent: set aside in %s: %w", st.thread, err)
	}
	st.summary.UpTo = last
	st.usage, st.usageAt = 0, 0
	return nil
}

// ref is the history_search reference that opens archived entry seq.
func ref(seq uint64) string { return fmt.Sprintf("%s%d", refPrefix, seq) }

// refPrefix begins a reference to one archived message.
const refPrefix = "msg:"

// stubText is what the model sees of a result set aside.
func stubText(m llm.Message, of uint64) string {
	return fmt.Sprintf("[set aside to make room: %s returned %d bytes here; history_search %q shows it whole]", m.Name, len(m.Content), ref(of))
}

// cutToFit cuts a result too large for the window to at most most tokens
// (and ResultCap bytes), saying so and where the rest is.
func cutToFit(a *Agent, s string, most int, of uint64) string {
	n := min(len(s), a.opts.ResultCap)
	for n > 0 && a.opts.Counter(s[:n]) > most {
		n = n * 3 / 4
	}
	return fmt.Sprintf("%s\n\n[cut to fit the model's window: showing the first %d of %d bytes; history_search %q shows the whole result, page by page]",
		cutAt(s, n), len(cutAt(s, n)), len(s), ref(of))
}

// Why the working history was compacted, set aside or given up on: the
// Detail of an [EventCompaction].
const (
	ReasonSoft = "soft" // the soft threshold: compacted at a clean boundary
	ReasonHard = "hard" // the hard threshold: compacted before the next request
	// ReasonRefused: the model refused a request as over its window.
	ReasonRefused = "refused"
	// ReasonSetAside: compacting could free no more; the turn's oldest
	// tool results were archived and stubbed.
	ReasonSetAside = "set_aside"
	// ReasonCut: a tool result larger than the window alone was cut.
	ReasonCut = "cut"
	// ReasonNoRoom: nothing could make the next request fit (one message
	// larger than the window); the turn ended with the honest partial.
	ReasonNoRoom = "no_room"
)
