package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
)

func testJournal(t *testing.T, open Opener) {
	ctx := context.Background()
	clock := epochClock()
	b := open(t, clock.Now)
	in := func(platform, event, text string) core.Inbound {
		th := thread("j1")
		th.Platform = platform
		return core.Inbound{Thread: th, User: "U1", Text: text, EventID: event, At: epoch, Files: []core.File{{Name: "a.txt", Size: 1, Text: "a"}}}
	}
	steps := []struct {
		in   core.Inbound
		want bool
	}{
		{in("slack", "Ev1", "first"), true},
		{in("slack", "Ev1", "first, redelivered"), false},
		{in("discord", "Ev1", "same ID, other platform"), true},
		{in("slack", "Ev2", "second"), true},
	}
	for _, s := range steps {
		if got, err := b.JournalInbound(ctx, s.in); err != nil || got != s.want {
			t.Errorf("JournalInbound(%s %s) = %v, %v; want %v", s.in.Thread.Platform, s.in.EventID, got, err, s.want)
		}
	}
	if _, err := b.JournalInbound(ctx, in("slack", "", "no id")); err == nil {
		t.Errorf("JournalInbound(no event ID) = nil error, want one")
	}
	checkPending(t, b, "first", "same ID, other platform", "second")

	if err := b.CompleteInbound(ctx, thread("j1"), "Ev1"); err != nil {
		t.Fatalf("CompleteInbound = %v", err)
	}
	if err := b.CompleteInbound(ctx, thread("j1"), "Ev1"); err != nil {
		t.Errorf("CompleteInbound twice = %v, want nil", err)
	}
	if err := b.CompleteInbound(ctx, thread("j1"), "Ev404"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("CompleteInbound(unknown) = %v, want ErrNotFound", err)
	}
	checkPending(t, b, "same ID, other platform", "second")
	pending, _ := b.PendingInbound(ctx)
	if len(pending[0].Files) != 1 || pending[0].Files[0].Text != "a" || !pending[0].At.Equal(epoch) {
		t.Errorf("PendingInbound()[0] = %+v, want the message as journaled", pending[0])
	}

	// A completed event is still a duplicate within the TTL, fresh after.
	clock.Advance(23 * time.Hour)
	if got, _ := b.JournalInbound(ctx, in("slack", "Ev1", "retry within a day")); got {
		t.Errorf("JournalInbound(completed, 23h later) = fresh, want duplicate")
	}
	clock.Advance(2 * time.Hour)
	if got, _ := b.JournalInbound(ctx, in("slack", "Ev1", "a day later")); !got {
		t.Errorf("JournalInbound(completed, 25h later) = duplicate, want fresh")
	}
	// An uncompleted event stays a duplicate however old.
	if got, _ := b.JournalInbound(ctx, in("slack", "Ev2", "second again")); got {
		t.Errorf("JournalInbound(pending, 25h later) = fresh, want duplicate")
	}
	checkPending(t, b, "same ID, other platform", "second", "a day later")
}

func checkPending(t *testing.T, b Backend, want ...string) {
	t.Helper()
	got, err := b.PendingInbound(context.Background())
	if err != nil {
		t.Fatalf("PendingInbound = %v", err)
	}
	var texts []string
	for _, in := range got {
		texts = append(texts, in.Text)
	}
	if len(texts) != len(want) {
		t.Fatalf("PendingInbound = %q, want %q", texts, want)
	}
	for i := range want {
		if texts[i] != want[i] {
			t.Fatalf("PendingInbound = %q, want %q (oldest first)", texts, want)
		}
	}
}
