package memory_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/memory"
)

func TestForgetAbout(t *testing.T) {
	ctx := context.Background()
	c := newCortex(t, memory.Options{})
	alice := memory.Scope{Platform: "slack", Workspace: "TA", User: "alice"}
	aliceDM := memory.Scope{Platform: "slack", Workspace: "TA", User: "alice", DM: true}
	remember(t, c, alice, memory.KindPreference, "Alice drinks green tea")
	remember(t, c, alice, memory.KindProfile, "Alice is on team Atlas")
	remember(t, c, aliceDM, memory.KindFact, "Alice is interviewing elsewhere")
	remember(t, c, memory.Scope{Platform: "slack", Workspace: "TA", User: "bob"}, memory.KindPreference, "Bob drinks green tea")
	remember(t, c, memory.Scope{Platform: "slack", Workspace: "TB", User: "alice"}, memory.KindPreference, "Alice drinks coffee in TB")
	inChannel := inbound("TA", "general", "alice", false, "forget")

	if recs, _ := c.About(ctx, inChannel); len(recs) != 2 {
		t.Errorf("About(alice in channel) = %d records, want 2 (no DM memory)", len(recs))
	}
	gone, err := c.ForgetAbout(ctx, inChannel, "green tea")
	if err != nil || len(gone) != 1 || gone[0].Text != "Alice drinks green tea" {
		t.Fatalf("ForgetAbout(green tea) = %+v, %v; want only Alice's tea", gone, err)
	}
	gone, err = c.ForgetAbout(ctx, inChannel, "")
	if err != nil || len(gone) != 2 {
		t.Fatalf("ForgetAbout(everything) = %d records, %v; want 2 (profile and DM fact)", len(gone), err)
	}
	left, _ := c.List(ctx, memory.Filter{})
	if len(left) != 2 {
		t.Errorf("records left = %+v, want Bob's and the other workspace's", left)
	}
}

// TestForgetTool: a user asks Neo to forget; only their own matching
// memories go, and the tool says which.
func TestForgetTool(t *testing.T) {
	c := newCortex(t, memory.Options{})
	alice := memory.Scope{Platform: "slack", Workspace: "TA", User: "alice"}
	remember(t, c, alice, memory.KindPreference, "Alice drinks green tea")
	remember(t, c, memory.Scope{Platform: "slack", Workspace: "TA", User: "bob"}, memory.KindPreference, "Bob drinks green tea")
	turn := &core.Turn{Inbound: inbound("TA", "general", "alice", false, "forget that I drink tea")}
	ctx := core.WithTurn(context.Background(), turn)

	got, err := c.ForgetTool(ctx, "green tea")
	if err != nil || !strings.Contains(got, "Forgot 1 memory") || !strings.Contains(got, "Alice drinks green tea") {
		t.Fatalf("ForgetTool(green tea) = %q, %v; want Alice's tea forgotten", got, err)
	}
	got, err = c.ForgetTool(ctx, "green tea")
	if err != nil || !strings.Contains(got, "nothing was forgotten") {
		t.Errorf("ForgetTool(green tea) again = %q, %v; want nothing forgotten", got, err)
	}
	if left, _ := c.List(context.Background(), memory.Filter{}); len(left) != 1 || left[0].Scope.User != "bob" {
		t.Errorf("records left = %+v, want only Bob's", left)
	}
	if _, err := c.ForgetTool(context.Background(), ""); !errors.Is(err, memory.ErrNoTurn) {
		t.Errorf("ForgetTool without a turn = %v, want ErrNoTurn", err)
	}
}

func TestOperatorAPI(t *testing.T) {
	ctx := context.Background()
	c := newCortex(t, memory.Options{})
	remember(t, c, memory.Scope{Platform: "slack", Workspace: "TA", Channel: "ops"}, memory.KindFact, "Pager rotation starts Monday")
	remember(t, c, memory.Scope{Platform: "slack", Workspace: "TA", User: "alice"}, memory.KindPreference, "Alice wants pager alerts by SMS")
	remember(t, c, memory.Scope{Platform: "discord", Workspace: "G1"}, memory.KindFact, "Guild pager is the bot")
	tests := []struct {
		name   string
		f      memory.Filter
		list   int
		search int // hits for "pager"
	}{
		{"all", memory.Filter{}, 3, 3},
		{"workspace", memory.Filter{Workspace: "TA"}, 2, 2},
		{"user", memory.Filter{Workspace: "TA", User: "alice"}, 1, 1},
		{"channel", memory.Filter{Channel: "ops"}, 1, 1},
		{"kind", memory.Filter{Kind: memory.KindFact}, 2, 2},
		{"platform", memory.Filter{Platform: "discord"}, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := c.List(ctx, tc.f); len(got) != tc.list {
				t.Errorf("List(%+v) = %d records, want %d", tc.f, len(got), tc.list)
			}
			if got, _ := c.Search(ctx, tc.f, "pager", 10); len(got) != tc.search {
				t.Errorf("Search(%+v, pager) = %d hits, want %d", tc.f, len(got), tc.search)
			}
		})
	}
	if _, err := c.Forget(ctx, memory.Filter{}); err == nil {
		t.Errorf("Forget(no workspace, no IDs) = nil, want a refusal")
	}
	gone, err := c.Forget(ctx, memory.Filter{Workspace: "TA"})
	if err != nil || len(gone) != 2 || c.Len() != 1 {
		t.Errorf("Forget(TA) = %d, %v; left %d, want 2 gone, 1 left", len(gone), err, c.Len())
	}
}

func TestSweepDropsOldTurns(t *testing.T) {
	ctx := context.Background()
	now := t0
	c := newCortex(t, memory.Options{Now: func() time.Time { return now }, TurnTTL: 30 * 24 * time.Hour})
	remember(t, c, wsA, memory.KindTurn, "old exchange")
	remember(t, c, wsA, memory.KindFact, "old fact")
	now = t0.Add(20 * 24 * time.Hour)
	remember(t, c, wsA, memory.KindTurn, "recent exchange")
	n, err := c.Sweep(ctx, t0.Add(31*24*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1", n, err)
	}
	left, _ := c.List(ctx, memory.Filter{})
	if len(left) != 2 || left[0].Text != "recent exchange" || left[1].Text != "old fact" {
		t.Errorf("left after Sweep = %+v, want the recent turn and the fact", left)
	}
}

// TestProfileAfterForgetAndCompaction: the profile block every turn
// renders lists the reader's own profile and preference records, newest
// first, and follows them as they are replaced, forgotten, and moved by a
// compaction of the space.
func TestProfileAfterForgetAndCompaction(t *testing.T) {
	ctx := context.Background()
	now := t0
	c := newCortex(t, memory.Options{Now: func() time.Time { now = now.Add(time.Second); return now }})
	alice := memory.Scope{Platform: "slack", Workspace: "TA", User: "alice"}
	bob := memory.Scope{Platform: "slack", Workspace: "TA", User: "bob"}
	remember(t, c, alice, memory.KindProfile, "Alice is on team Atlas")
	tea := remember(t, c, alice, memory.KindPreference, "Alice drinks green tea")
	remember(t, c, bob, memory.KindPreference, "Bob drinks coffee")
	remember(t, c, memory.Scope{Platform: "slack", Workspace: "TA", User: "alice", DM: true}, memory.KindPreference, "Alice prefers DMs at night")
	in := inbound("TA", "general", "alice", false, "hello")
	profile := func() string {
		t.Helper()
		rec, err := c.Fault(ctx, in, "anything")
		if err != nil {
			t.Fatalf("Fault = %v", err)
		}
		return rec.Profile
	}
	if got, want := profile(), "Alice drinks green tea\nAlice is on team Atlas"; got != want {
		t.Fatalf("profile = %q, want %q (newest first, no DM record, not Bob's)", got, want)
	}
	tea.Text = "Alice drinks oolong"
	if _, err := c.Remember(ctx, tea); err != nil {
		t.Fatal(err)
	}
	if got, want := profile(), "Alice drinks oolong\nAlice is on team Atlas"; got != want {
		t.Fatalf("profile after replacing the tea = %q, want %q", got, want)
	}
	// Enough forgotten records that the space is rebuilt without them.
	for i := range 1100 {
		remember(t, c, bob, memory.KindFact, fmt.Sprintf("Bob filed ticket %d", i))
	}
	if gone, err := c.ForgetAbout(ctx, inbound("TA", "general", "bob", false, ""), ""); err != nil || len(gone) != 1101 {
		t.Fatalf("Bob forgets everything: %d records, %v; want 1101", len(gone), err)
	}
	if _, err := c.ForgetAbout(ctx, in, "oolong"); err != nil {
		t.Fatal(err)
	}
	if got, want := profile(), "Alice is on team Atlas"; got != want {
		t.Fatalf("profile after forgetting the tea and a compaction = %q, want %q", got, want)
	}
}
