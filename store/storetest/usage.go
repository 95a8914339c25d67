package storetest

import (
	"context"
	"testing"

	"github.com/neobot/neobot/core/usage"
)

func testUsage(t *testing.T, open Opener) {
	ctx := context.Background()
	b := open(t, epochClock().Now)
	k := func(day, model string) usage.Key {
		return usage.Key{Day: day, Platform: "slack", Workspace: "T1", Channel: "C1", User: "U1", Thread: "1.1", Model: model}
	}
	batches := [][]usage.Row{
		{{Key: k("2026-11-23", "gpt"), Tokens: usage.Tokens{Calls: 1, Prompt: 100, Completion: 10}}},
		{{Key: k("2026-11-24", "gpt"), Tokens: usage.Tokens{Calls: 2, Prompt: 200, Completion: 20}},
			{Key: k("2026-11-24", "cheap"), Tokens: usage.Tokens{Calls: 1, Prompt: 5}}},
		{{Key: k("2026-11-24", "gpt"), Tokens: usage.Tokens{Calls: 1, Prompt: 50, Completion: 5}}},
	}
	for _, rows := range batches {
		if err := b.AddUsage(ctx, rows); err != nil {
			t.Fatalf("AddUsage = %v", err)
		}
	}
	rows, err := b.Usage(ctx, "2026-11-24")
	if err != nil {
		t.Fatalf("Usage = %v", err)
	}
	got := map[usage.Key]usage.Tokens{}
	for _, r := range rows {
		got[r.Key] = r.Tokens
	}
	want := map[usage.Key]usage.Tokens{
		k("2026-11-24", "gpt"):   {Calls: 3, Prompt: 250, Completion: 25},
		k("2026-11-24", "cheap"): {Calls: 1, Prompt: 5},
	}
	if len(got) != len(want) {
		t.Fatalf("Usage(since 2026-11-24) = %+v, want %+v", got, want)
	}
	for key, w := range want {
		if got[key] != w {
			t.Errorf("Usage row %+v = %+v, want %+v (added up)", key, got[key], w)
		}
	}
	if all, _ := b.Usage(ctx, "2026-01-01"); len(all) != 3 {
		t.Errorf("Usage(since 2026-01-01) = %d rows, want 3", len(all))
	}

	// A place's tokens of a day: its own rows only (T10 is not T1, C10
	// not C1), whatever their user, thread or model.
	others := []usage.Row{
		{Key: usage.Key{Day: "2026-11-24", Platform: "slack", Workspace: "T10", Channel: "C1", User: "U1", Model: "gpt"}, Tokens: usage.Tokens{Calls: 1, Prompt: 1000}},
		{Key: usage.Key{Day: "2026-11-24", Platform: "slack", Workspace: "T1", Channel: "C10", User: "U2", Model: "gpt"}, Tokens: usage.Tokens{Calls: 1, Prompt: 7}},
		{Key: usage.Key{Day: "2026-11-24", Platform: "discord", Workspace: "T1", Channel: "C1", User: "U1", Model: "gpt"}, Tokens: usage.Tokens{Calls: 1, Prompt: 9000}},
	}
	if err := b.AddUsage(ctx, others); err != nil {
		t.Fatalf("AddUsage = %v", err)
	}
	for _, c := range []struct {
		platform, workspace, channel string
		want                         int64
	}{
		{"slack", "T1", "C1", 280},
		{"slack", "T1", "", 287},
		{"slack", "", "", 1287},
		{"discord", "", "", 9000},
		{"web", "", "", 0},
	} {
		if got, err := b.UsageIn(ctx, "2026-11-24", c.platform, c.workspace, c.channel); err != nil || got != c.want {
			t.Errorf("UsageIn(2026-11-24, %s/%s/%s) = %d, %v; want %d", c.platform, c.workspace, c.channel, got, err, c.want)
		}
	}
}
