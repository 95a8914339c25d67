package agent

import (
	"context"
	"fmt"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/compact"
	"github.com/neobot/neobot/core/llm"
)

// Share of the window kept as live tail by each kind of compaction, and
// the most a summary may take: what does not fit stays in the archive,
// where history_search finds it.
const (
	softKeep     = 0.40
	hardKeep     = 0.20
	summaryShare = 0.20
)

// minFreedShare is the least share of the window a compaction must free
// for the turn to go on compacting: less, and the next request would be
// as full as this one.
const minFreedShare = 1.0 / 32

// Why a turn stops for want of room, as the log says it.
const (
	stopCap    = "compaction cap reached"
	stopFreed  = "compaction freed too little"
	stopNoCut  = "nothing left to compact"
	stopReason = "stop"
)

// makeRoom compacts as often as the turn needs: at the soft threshold once
// (at a clean boundary if one qualifies), at the hard threshold again and
// again while each compaction frees room. When compacting can free no
// more (a compaction freed (almost) nothing, nothing is left to compact,
// or MaxCompactionsPerTurn is reached), it sets the turn's oldest tool
// results aside (setAside). It reports false only when the next request
// still cannot fit: one message is larger than the window. The log says
// why at each point.
func (tr *turn) makeRoom(ctx context.Context) (bool, error) {
	a := tr.a
	for {
		before := tr.used()
		p := a.budget.Check(before)
		if p == compact.PressureNone {
			return true, nil
		}
		freed, done, err := tr.compact(ctx, p, p.String())
		if err != nil {
			return false, err
		}
		after := tr.used()
		if a.budget.Check(after) != compact.PressureHard {
			return true, nil
		}
		if p != compact.PressureHard {
			continue // the soft cut's summary tipped it over: compact hard
		}
		stop := ""
		switch {
		case !done && a.opts.MaxCompactionsPerTurn > 0 && tr.compactions >= a.opts.MaxCompactionsPerTurn:
			stop = stopCap
		case !done:
			stop = stopNoCut
		case float64(freed) < minFreedShare*float64(a.opts.ContextWindow):
			stop = stopFreed
		}
		if stop == "" {
			continue
		}
		a.log.Info().Str("thread", tr.st.thread.Key()).Str(stopReason, stop).Int("freed", freed).
			Int("used", after).Int("window", a.opts.ContextWindow).Int("compactions", tr.compactions).
			Msg("agent: compacting frees no more; setting tool results aside")
		fits, err := tr.setAside(ctx, false)
		if err != nil || fits {
			return fits, err
		}
		a.observe(EventCompaction, ReasonNoRoom)
		a.log.Warn().Str("thread", tr.st.thread.Key()).Str(stopReason, stop).Int("used", tr.used()).
			Int("window", a.opts.ContextWindow).Int("compactions", tr.compactions).
			Msg("agent: no room for the next request, even with the tool results set aside")
		return false, nil
	}
}

// compactNow forces a hard compaction (the model-failure adapt rung): the
// model refused the request as over its window. When nothing can be
// compacted, the turn's oldest tool results are set aside instead.
func (tr *turn) compactNow(ctx context.Context) error {
	_, done, err := tr.compact(ctx, compact.PressureHard, ReasonRefused)
	if err == nil && !done {
		_, err = tr.setAside(ctx, true)
	}
	return err
}

// compact swaps older live history for a consolidated summary. The cut is
// clean (never between a tool call and its result); when the summarizer
// fails the cut moves to the last user message (safeTail) and the summary
// keeps the artifacts verbatim. It returns the tokens the compaction freed
// of the next request (negative when the summary outweighs what it
// replaced) and whether it compacted at all: not when no clean cut exists
// or MaxCompactionsPerTurn, if set, is reached. reason is counted
// (EventCompaction) and logged.
func (tr *turn) compact(ctx context.Context, p compact.Pressure, reason string) (freed int, done bool, err error) {
	a, st := tr.a, tr.st
	if a.opts.MaxCompactionsPerTurn > 0 && tr.compactions >= a.opts.MaxCompactionsPerTurn {
		return 0, false, nil
	}
	before := tr.used()
	msgs := make([]llm.Message, len(st.items))
	counts := make([]int, len(st.items))
	for i, it := range st.items {
		msgs[i], counts[i] = it.msg, it.tokens
		if msgs[i].Role == llm.RoleTool {
			// Summarize, and keep identifiers from, what the model saw:
			// the archive keeps the rest, unread.
			msgs[i].Content = capResult(msgs[i].Content, a.opts.ResultCap)
		}
	}
	keep := tr.keep(p)
	split := compact.Split(msgs, counts, keep, p == compact.PressureSoft)
	if p == compact.PressureSoft && split > 0 && !tr.frees(counts[split:]) {
		// The turn boundary leaves the window nearly as full: a long
		// running turn would compact again at its next step. Cut inside
		// it instead, at a clean place.
		split = compact.Split(msgs, counts, keep, false)
	}
	if split == 0 && p == compact.PressureHard {
		split = compact.SafeTail(msgs)
	}
	if split == 0 {
		return 0, false, nil
	}
	tr.status(ctx, "Compacting the conversation…")
	res, err := a.compactor.Summarize(ctx, st.summary.Text, msgs[:split])
	if err != nil {
		if ctx.Err() != nil {
			return 0, false, ctx.Err()
		}
		a.log.Warn().Err(err).Str("thread", st.thread.Key()).Msg("agent: summarizer failed; keeping the safe tail")
		split = compact.SafeTail(msgs)
		if split == 0 {
			return 0, false, nil
		}
		res = a.compactor.Fallback(st.summary.Text, msgs[:split])
	}
	sum := core.Summary{Text: res.Text, UpTo: st.items[split-1].seq, At: a.opts.Now()}
	if err := a.opts.Transcript.Compact(ctx, st.thread, sum); err != nil {
		return 0, false, fmt.Errorf("agent: compact %s: %w", st.thread, err)
	}
	tr.compactions++
	a.observe(EventCompaction, reason)
	st.setSummary(sum)
	st.items = append([]item(nil), st.items[split:]...)
	st.usage, st.usageAt = 0, 0
	freed = before - tr.used()
	a.log.Info().Str("thread", st.thread.Key()).Int("entries", split).Str("reason", reason).
		Int("restored", len(res.Dropped)).Int("freed", freed).Int("compactions", tr.compactions).Msg("agent: compacted")
	if tr.start < split {
		// The turn's own message went into the summary: leave an anchor so
		// a resumed Run still finds this turn.
		in := tr.t.Inbound
		if err := a.appendRecords(ctx, st, record{EventID: in.EventID, User: in.User, Anchor: true}); err != nil {
			return 0, false, err
		}
		tr.start = len(st.items) - 1
	} else {
		tr.start -= split
	}
	return freed, true, nil
}

// keep is how much live history a compaction leaves: a share of the
// window, but never so much that the overhead, a summary at its cap and
// the tail would meet the soft threshold again within a few steps (in a
// small window they would, and every step would compact).
func (tr *turn) keep(p compact.Pressure) int {
	a := tr.a
	share, room := softKeep, 0.5
	if p == compact.PressureHard {
		share, room = hardKeep, 0.25
	}
	w := float64(a.opts.ContextWindow)
	free := w*a.budget.SoftPct - float64(tr.overhead()) - summaryShare*w
	return int(max(0, min(share*w, room*free)))
}

// frees reports whether keeping tail, with the overhead and a summary at
// its cap, leaves room under the soft threshold for a few more steps.
func (tr *turn) frees(tail []int) bool {
	w := float64(tr.a.opts.ContextWindow)
	used := float64(tr.overhead()) + summaryShare*w
	for _, n := range tail {
		used += float64(n)
	}
	return used < (tr.a.budget.SoftPct-0.15)*w
}
