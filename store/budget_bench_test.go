package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/usage"
	"github.com/neobot/neobot/store"
)

// BenchmarkBudgetCheck is what a turn pays for its daily budgets when it
// starts (usage.Meter.Guard) and before each model call after its first
// (usage.Meter.Exhausted, docs/governance.md): a channel under its
// channel's, workspace's and platform's budgets, the day holding 10,000
// usage rows of 100 channels on a bbolt file.
func BenchmarkBudgetCheck(b *testing.B) {
	ctx := context.Background()
	db := openTemp(b, store.Options{})
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	rows := make([]usage.Row, 0, 10_000)
	for i := range 10_000 {
		rows = append(rows, usage.Row{Key: usage.Key{Day: usage.Day(now), Platform: "slack", Workspace: "T1",
			Channel: fmt.Sprintf("C%03d", i%100), User: fmt.Sprintf("U%d", i), Thread: "1.1", Model: "m"}, Tokens: usage.Tokens{Calls: 1, Prompt: 10}})
	}
	if err := db.AddUsage(ctx, rows); err != nil {
		b.Fatal(err)
	}
	m, err := usage.NewMeter(ctx, usage.Options{Store: db, DailyBudget: 1 << 40, Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	in := core.Inbound{Thread: core.Thread{Platform: "slack", Workspace: "T1", Channel: "C007", ID: "1.1"}}
	for _, bc := range []struct {
		name    string
		budgets map[string]int64
	}{
		{"channel", map[string]int64{"slack:T1/C007": 1 << 30}},
		{"channel+workspace+platform", map[string]int64{"slack:T1/C007": 1 << 30, "slack:T1": 1 << 30, "slack": 1 << 30}},
	} {
		m.Govern(bc.budgets)
		// The check a turn starts with reads every budget's rows.
		b.Run("start/"+bc.name, func(b *testing.B) {
			guard := m.Guard(noTurn{})
			for b.Loop() {
				if err := guard.Run(ctx, core.Turn{Inbound: in}); err != nil {
					b.Fatal(err)
				}
			}
		})
		// The checks between its model calls read them once an Interval.
		b.Run("between calls/"+bc.name, func(b *testing.B) {
			for b.Loop() {
				if why, err := m.Exhausted(ctx, in); why != "" || err != nil {
					b.Fatalf("Exhausted = %q, %v; want the budgets left", why, err)
				}
			}
		})
	}
}

// noTurn is a turn that does nothing.
type noTurn struct{}

func (noTurn) Run(context.Context, core.Turn) error { return nil }
