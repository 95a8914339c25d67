package core_test

import (
	"context"
	"testing"

	"github.com/neobot/neobot/core"
)

// TestContextValues: a context carrying a nil turn or a nil idler is as
// one carrying none: no turn is found, and idling is a no-op, never a
// call through nil.
func TestContextValues(t *testing.T) {
	ctx := context.Background()
	if _, ok := core.TurnFrom(core.WithTurn(ctx, nil)); ok {
		t.Error("TurnFrom found a nil turn")
	}
	turn := &core.Turn{Inbound: core.Inbound{User: "U1"}}
	if got, ok := core.TurnFrom(core.WithTurn(ctx, turn)); !ok || got != turn {
		t.Errorf("TurnFrom = %v, %v; want the turn", got, ok)
	}
	if _, ok := core.TurnFrom(ctx); ok {
		t.Error("TurnFrom found a turn in an empty context")
	}
	resume := core.Idle(core.WithIdler(ctx, nil)) // must not call through nil
	resume(ctx)
	idled, resumed := 0, 0
	resume = core.Idle(core.WithIdler(ctx, func() func(context.Context) {
		idled++
		return func(context.Context) { resumed++ }
	}))
	resume(ctx)
	if idled != 1 || resumed != 1 {
		t.Errorf("idled %d, resumed %d; want 1 and 1", idled, resumed)
	}
}

// TestUnprepared: a message needs preparing when it carries attachments
// to read or history to fetch, either one.
func TestUnprepared(t *testing.T) {
	tests := []struct {
		in   core.Inbound
		want bool
	}{
		{core.Inbound{}, false},
		{core.Inbound{Attachments: []core.Attachment{{ID: "F1"}}}, true},
		{core.Inbound{FetchContext: true}, true},
		{core.Inbound{Attachments: []core.Attachment{{ID: "F1"}}, FetchContext: true}, true},
	}
	for _, tt := range tests {
		if got := tt.in.Unprepared(); got != tt.want {
			t.Errorf("Unprepared(%+v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
