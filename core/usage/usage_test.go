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
	if g := (&Meter{opts: Options{}}).Guard(r); g != Runner(r) {
		t.Errorf("Guard without a budget wraps the runner")
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
