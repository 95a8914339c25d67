package usage

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/llm"
)

// memStore is an in-memory Store.
type memStore struct {
	mu   sync.Mutex
	rows map[Key]Tokens
	fail error
	// failRead fails UsageIn.
	failRead error
	// readsIn counts UsageIn's calls.
	readsIn int
}

func (s *memStore) AddUsage(ctx context.Context, rows []Row) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	for _, r := range rows {
		t := s.rows[r.Key]
		t.add(r.Tokens)
		s.rows[r.Key] = t
	}
	return nil
}

func (s *memStore) Usage(ctx context.Context, since string) ([]Row, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Row
	for k, t := range s.rows {
		if k.Day >= since {
			out = append(out, Row{Key: k, Tokens: t})
		}
	}
	return out, nil
}

func (s *memStore) UsageIn(ctx context.Context, day, platform, workspace, channel string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.readsIn++
	if s.failRead != nil {
		return 0, s.failRead
	}
	var n int64
	for k, t := range s.rows {
		if k.Day == day && k.Platform == platform && (workspace == "" || k.Workspace == workspace) && (channel == "" || k.Channel == channel) {
			n += t.Total()
		}
	}
	return n, nil
}

var (
	t1 = core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1.1"}
	t2 = core.Thread{Platform: "slack", Workspace: "T2", Channel: "C9", ID: "2.2"}
)

func turnCtx(th core.Thread, user string) context.Context {
	return core.WithTurn(context.Background(), &core.Turn{Inbound: core.Inbound{Thread: th, User: user}})
}

type runner struct{ runs int }

func (r *runner) Run(context.Context, core.Turn) error { r.runs++; return nil }

func TestMeterRecordsFlushesAndGuards(t *testing.T) {
	ctx := context.Background()
	clock := coretest.NewClock(time.Date(2026, 11, 24, 21, 30, 0, 0, time.UTC))
	st := &memStore{rows: map[Key]Tokens{}}
	m, err := NewMeter(ctx, Options{Store: st, DailyBudget: 1000, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	m.Record(turnCtx(t1, "UA"), "gpt", llm.Usage{PromptTokens: 600, CompletionTokens: 50})
	m.Record(turnCtx(t1, "UA"), "gpt", llm.Usage{PromptTokens: 300, CompletionTokens: 60})
	m.Record(turnCtx(t2, "UB"), "cheap", llm.Usage{PromptTokens: 10, CompletionTokens: 1})

	st.fail = errors.New("disk full")
	if err := m.Flush(ctx); err == nil {
		t.Fatal("Flush on a failing store = nil")
	}
	st.fail = nil
	if err := m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	k := Key{Day: "2026-11-24", Platform: "slack", Workspace: "T1", Channel: "C1", User: "UA", Thread: "1.1", Model: "gpt"}
	if got := st.rows[k]; got != (Tokens{Calls: 2, Prompt: 900, Completion: 110}) {
		t.Errorf("stored row = %+v, want 2 calls, 900 prompt, 110 completion (kept across the failed flush)", got)
	}

	// T1 has spent 1,010 of 1,000: its turns are declined, T2's run.
	r := &runner{}
	guard := m.Guard(r)
	rec := coretest.NewRecorder()
	if err := guard.Run(ctx, core.Turn{Inbound: core.Inbound{Thread: t1}, Reporter: rec}); err != nil {
		t.Fatal(err)
	}
	says := rec.Says()
	if r.runs != 0 || len(says) != 1 || !strings.Contains(says[0], "1010 of 1000 tokens") || !strings.Contains(says[0], "in 2 h 30 min") {
		t.Errorf("over budget: runs %d, said %q; want no run and a decline with the reset in 2 h 30 min", r.runs, says)
	}
	if err := guard.Run(ctx, core.Turn{Inbound: core.Inbound{Thread: t2}, Reporter: rec}); err != nil || r.runs != 1 {
		t.Errorf("another workspace's turn: runs %d, %v; want it run", r.runs, err)
	}

	// A restart reads today's spending back; a new day starts afresh.
	m2, err := NewMeter(ctx, Options{Store: st, DailyBudget: 1000, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if spent, over := m2.Spent(t1); spent != 1010 || !over {
		t.Errorf("after a restart Spent = %d, %v; want 1010, over", spent, over)
	}
	clock.Advance(3 * time.Hour)
	if spent, over := m2.Spent(t1); spent != 0 || over {
		t.Errorf("the next day Spent = %d, %v; want a fresh budget", spent, over)
	}
}

// spender is a turn that uses tokens, recorded with its meter.
type spender struct {
	m      *Meter
	tokens int
	runs   int
}

func (s *spender) Run(ctx context.Context, t core.Turn) error {
	s.runs++
	s.m.Record(core.WithTurn(ctx, &t), "gpt", llm.Usage{PromptTokens: s.tokens})
	return nil
}

// TestPlaceBudgetShared: a place's stored daily budget is one budget for
// every instance: two meters over one store (two instances) count each
// other's turns; once spent, a turn there is declined in words with when
// the budget resets, and the model is not called; other places run; a
// workspace's budget covers its channels; removing the budget lifts it.
func TestPlaceBudgetShared(t *testing.T) {
	ctx := context.Background()
	clock := coretest.NewClock(time.Date(2026, 11, 24, 21, 30, 0, 0, time.UTC))
	st := &memStore{rows: map[Key]Tokens{}}
	var meters [2]*Meter
	var turns [2]*spender
	for i := range meters {
		m, err := NewMeter(ctx, Options{Store: st, Now: clock.Now, Interval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		m.Govern(map[string]int64{"slack:T1/C1": 500})
		meters[i], turns[i] = m, &spender{m: m, tokens: 300}
	}
	c2 := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C2", ID: "3.3"}
	run := func(i int, th core.Thread) []string {
		t.Helper()
		rec := coretest.NewRecorder()
		if err := meters[i].Guard(turns[i]).Run(ctx, core.Turn{Inbound: core.Inbound{Thread: th, User: "UA"}, Reporter: rec}); err != nil {
			t.Fatal(err)
		}
		return rec.Says()
	}
	run(0, t1) // 300 of 500
	run(1, t1) // 600 of 500: the second instance saw the first's 300
	if turns[0].runs != 1 || turns[1].runs != 1 {
		t.Fatalf("runs %d and %d, want one each while under the budget", turns[0].runs, turns[1].runs)
	}
	says := run(0, t1)
	if turns[0].runs != 1 || len(says) != 1 || !strings.Contains(says[0], "today's token budget for this channel (600 of 500 tokens)") ||
		!strings.Contains(says[0], "resets at 00:00 UTC, in 2 h 30 min") {
		t.Errorf("over the channel's budget: runs %d, said %q; want no run and a decline saying when it resets", turns[0].runs, says)
	}
	if says := run(1, c2); turns[1].runs != 2 || len(says) != 0 {
		t.Errorf("another channel: runs %d, said %q; want it run", turns[1].runs, says)
	}
	meters[1].Govern(map[string]int64{"slack:T1": 1000})
	if says := run(1, c2); turns[1].runs != 3 || len(says) != 0 {
		t.Errorf("900 of the workspace's 1000: runs %d, said %q; want it run", turns[1].runs, says)
	}
	if says := run(1, c2); turns[1].runs != 3 || len(says) != 1 || !strings.Contains(says[0], "for this workspace (1200 of 1000 tokens)") {
		t.Errorf("over the workspace's budget: runs %d, said %q; want a decline naming the workspace", turns[1].runs, says)
	}
	st.failRead = errors.New("disk gone")
	if says := run(1, c2); turns[1].runs != 3 || len(says) != 1 || !strings.Contains(says[0], "I can't tell how much of this workspace's daily token budget is left just now") {
		t.Errorf("budget unreadable: runs %d, said %q; want no run and a sentence saying why", turns[1].runs, says)
	}
	st.failRead = nil
	meters[1].Govern(nil)
	if says := run(1, t1); turns[1].runs != 4 || len(says) != 0 {
		t.Errorf("budget removed: runs %d, said %q; want it run", turns[1].runs, says)
	}
	clock.Advance(3 * time.Hour)
	if says := run(0, t1); turns[0].runs != 2 || len(says) != 0 {
		t.Errorf("the next day: runs %d, said %q; want a fresh budget", turns[0].runs, says)
	}
}

func TestReport(t *testing.T) {
	rows := []Row{
		{Key{Day: "2026-11-23", Platform: "slack", Workspace: "T1", User: "UA", Model: "gpt"}, Tokens{Calls: 2, Prompt: 2_000_000, Completion: 500_000}},
		{Key{Day: "2026-11-24", Platform: "slack", Workspace: "T1", User: "UB", Model: "cheap"}, Tokens{Calls: 1, Prompt: 1_000_000}},
		{Key{Day: "2026-11-24", Platform: "discord", Workspace: "G1", User: "UC", Model: "local"}, Tokens{Calls: 1, Prompt: 10}},
	}
	prices := map[string]Price{"gpt": {Prompt: 2, Completion: 8}, "cheap": {Prompt: 0.1, Completion: 0.4}}
	lines, err := Report(rows, "workspace", prices)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || lines[0].Group != "slack/T1" || lines[0].Total() != 3_500_000 || lines[0].Cost != 8.1 || !lines[0].Priced {
		t.Errorf("by workspace = %+v; want slack/T1 first: 3.5M tokens, $8.10, priced", lines)
	}
	if lines[1].Priced {
		t.Errorf("discord/G1 used an unpriced model but is marked priced")
	}
	if _, err := Report(rows, "planet", nil); err == nil || !strings.Contains(err.Error(), "workspace") {
		t.Errorf("Report(by planet) = %v, want an error listing the groupings", err)
	}
}

// TestMostSpentCrossesMidnight: the busiest workspace's tokens today,
// the budget's gauge, start again at midnight UTC, and the new day's
// first call counts from nothing, as the budget does, without waiting
// for Run's next tick; a spend of exactly the budget is spent.
func TestMostSpentCrossesMidnight(t *testing.T) {
	ctx := context.Background()
	clock := coretest.NewClock(time.Date(2026, 11, 24, 23, 59, 0, 0, time.UTC))
	m, err := NewMeter(ctx, Options{Store: &memStore{rows: map[Key]Tokens{}}, DailyBudget: 1000, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		advance     time.Duration
		thread      core.Thread
		tokens      int
		most, spent int64 // after the step; spent is t1's
		over        bool
	}{
		{0, t1, 900, 900, 900, false},
		{0, t2, 950, 950, 900, false},
		{0, t1, 100, 1000, 1000, true}, // exactly the budget: spent
		{2 * time.Minute, t1, 0, 0, 0, false},
		{0, t1, 30, 30, 30, false}, // the new day counts from nothing
	}
	for i, s := range steps {
		clock.Advance(s.advance)
		if s.tokens > 0 {
			m.Record(turnCtx(s.thread, "U"), "gpt", llm.Usage{PromptTokens: s.tokens})
		}
		if got := m.MostSpent(); got != s.most {
			t.Errorf("step %d: MostSpent = %d, want %d", i, got, s.most)
		}
		if spent, over := m.Spent(t1); spent != s.spent || over != s.over {
			t.Errorf("step %d: Spent(t1) = %d, %v; want %d, %v", i, spent, over, s.spent, s.over)
		}
	}
}

// TestExhaustedMidTurn: during a turn, the calls it has made count
// before they are written (this meter's own), so the budget stops the
// turn at the call that spends it; the sentence says which budget, when
// it resets and who can raise it.
func TestExhaustedMidTurn(t *testing.T) {
	ctx := context.Background()
	clock := coretest.NewClock(time.Date(2026, 11, 24, 21, 30, 0, 0, time.UTC))
	st := &memStore{rows: map[Key]Tokens{}}
	var raised []string
	m, err := NewMeter(ctx, Options{Store: st, DailyBudget: 2000, Now: clock.Now, Interval: time.Hour, Raisers: func(place string) string {
		raised = append(raised, place)
		return "Ada can raise it."
	}})
	if err != nil {
		t.Fatal(err)
	}
	m.Govern(map[string]int64{"slack:T1/C1": 500})
	in := core.Inbound{Thread: t1, User: "UA"}
	tctx := core.WithTurn(ctx, &core.Turn{Inbound: in})
	for i, want := range []string{"", "", "I've used today's token budget for this channel (600 of 500 tokens), so I stopped before finishing. The budget resets at 00:00 UTC, in 2 h 30 min; ask me again then. Ada can raise it."} {
		if got, err := m.Exhausted(ctx, in); got != want || err != nil {
			t.Errorf("Exhausted after %d calls = %q, %v; want %q", i, got, err, want)
		}
		m.Record(tctx, "gpt", llm.Usage{PromptTokens: 250, CompletionTokens: 50})
	}
	if len(raised) != 1 || raised[0] != "slack:T1/C1" {
		t.Errorf("Raisers asked for %q, want the channel's place", raised)
	}
	// The workspace's NEO_DAILY_TOKEN_BUDGET, in another channel.
	m.Record(tctx, "gpt", llm.Usage{PromptTokens: 1200})
	c2 := core.Inbound{Thread: core.Thread{Platform: "slack", Workspace: "T1", Channel: "C2", ID: "3.3"}}
	if got, err := m.Exhausted(ctx, c2); !strings.Contains(got, "for this workspace (2100 of 2000 tokens)") || err != nil || raised[1] != "" {
		t.Errorf("Exhausted over the workspace's budget = %q, %v (raisers asked for %q); want the workspace named", got, err, raised)
	}
	st.failRead = errors.New("disk gone")
	m.Govern(map[string]int64{"slack:T2": 5000})
	if got, err := m.Exhausted(ctx, core.Inbound{Thread: t2}); err == nil || !strings.Contains(got, "I can't tell how much of this workspace's daily token budget is left") {
		t.Errorf("Exhausted, store unreadable = %q, %v; want a sentence and the error", got, err)
	}
}

// TestExhaustedReadsLittle: the checks between a turn's model calls read
// a place's usage from the store once an Interval, not before every
// call; the calls this meter wrote since count all the same, and other
// instances' count from the next read. The check a turn starts with
// always reads.
func TestExhaustedReadsLittle(t *testing.T) {
	ctx := context.Background()
	clock := coretest.NewClock(time.Date(2026, 11, 24, 21, 30, 0, 0, time.UTC))
	st := &memStore{rows: map[Key]Tokens{}}
	m, err := NewMeter(ctx, Options{Store: st, Now: clock.Now, Interval: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewMeter(ctx, Options{Store: st, Now: clock.Now, Interval: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	m.Govern(map[string]int64{"slack:T1/C1": 1000})
	in := core.Inbound{Thread: t1, User: "UA"}
	tctx := core.WithTurn(ctx, &core.Turn{Inbound: in})
	exhausted := func() string {
		t.Helper()
		why, err := m.Exhausted(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return why
	}
	exhausted() // one read
	// Calls elsewhere, written and pending, never count here.
	for _, th := range []core.Thread{t2, {Platform: "slack", Workspace: "T1", Channel: "C2", ID: "3.3"}, {Platform: "slack", Workspace: "T2", Channel: "C1", ID: "4.4"}} {
		m.Record(core.WithTurn(ctx, &core.Turn{Inbound: core.Inbound{Thread: th}}), "gpt", llm.Usage{PromptTokens: 5000})
	}
	if err := m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	m.Record(core.WithTurn(ctx, &core.Turn{Inbound: core.Inbound{Thread: t2}}), "gpt", llm.Usage{PromptTokens: 5000})
	m.Record(tctx, "gpt", llm.Usage{PromptTokens: 400})
	if err := m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	m.Record(tctx, "gpt", llm.Usage{PromptTokens: 300})
	if why := exhausted(); why != "" || st.readsIn != 1 {
		t.Errorf("700 of 1000, within the interval: Exhausted = %q after %d reads, want none and one read", why, st.readsIn)
	}
	m.Record(tctx, "gpt", llm.Usage{PromptTokens: 300})
	if why := exhausted(); !strings.Contains(why, "(1000 of 1000 tokens)") || st.readsIn != 1 {
		t.Errorf("this meter's written and pending calls: Exhausted = %q after %d reads, want 1000 of 1000 and still one read", why, st.readsIn)
	}
	m.Govern(map[string]int64{"slack:T1/C1": 2000})
	other.Record(tctx, "gpt", llm.Usage{PromptTokens: 500})
	if err := other.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	exhausted() // Govern forgets the reads: read again
	other.Record(tctx, "gpt", llm.Usage{PromptTokens: 600})
	if err := other.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if why := exhausted(); why != "" {
		t.Errorf("another instance's calls within the interval: Exhausted = %q, want them counted from the next read", why)
	}
	clock.Advance(5 * time.Second)
	if why := exhausted(); !strings.Contains(why, "(2100 of 2000 tokens)") {
		t.Errorf("after the interval: Exhausted = %q, want every instance's 2100 of 2000", why)
	}
	reads := st.readsIn
	if _, over, err := m.overBudget(ctx, in, true); !over || err != nil || st.readsIn != reads+1 {
		t.Errorf("a turn's start check: over %v, %v, reads %d → %d; want it over, read afresh", over, err, reads, st.readsIn)
	}
}
