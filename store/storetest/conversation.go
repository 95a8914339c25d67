package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/store"
)

// testConversations: a title set on a stored thread is listed with it,
// one on a thread never stored is not found, a bad one is refused; a
// deleted thread is gone with its transcript and archive, and its
// neighbours (one whose key its key starts) keep theirs.
func testConversations(t *testing.T, open Opener) {
	ctx := context.Background()
	b := open(t, epochClock().Now)
	th, other, never := thread("200.1"), thread("200.10"), thread("200.2")
	for _, x := range []core.Thread{th, other} {
		if _, err := b.AppendEntries(ctx, x, []byte("a"), []byte("b")); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Compact(ctx, th, core.Summary{Text: "sum", UpTo: 1}); err != nil {
		t.Fatal(err)
	}
	if err := b.SetThreadTitle(ctx, th, "Deploy keys"); err != nil {
		t.Fatal(err)
	}
	if err := b.SetThreadTitle(ctx, th, "Rotating deploy keys"); err != nil { // a second rename wins
		t.Fatal(err)
	}
	if err := b.SetThreadTitle(ctx, never, "x"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("SetThreadTitle on a thread never stored = %v, want core.ErrNotFound", err)
	}
	for _, bad := range []string{"", "  ", "two\nlines", strings.Repeat("x", store.MaxTitle+1)} {
		if err := b.SetThreadTitle(ctx, other, bad); err == nil {
			t.Errorf("SetThreadTitle(%q) was taken", bad)
		}
	}
	titles := func() map[string]string {
		t.Helper()
		infos, err := b.Threads(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, i := range infos {
			out[i.Thread.Key()] = i.Title
		}
		return out
	}
	got := titles()
	if got[th.Key()] != "Rotating deploy keys" || got[other.Key()] != "" {
		t.Errorf("titles = %v", got)
	}

	if err := b.DeleteThread(ctx, th); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteThread(ctx, never); err != nil {
		t.Errorf("DeleteThread on a thread never stored = %v", err)
	}
	if known, err := b.ThreadKnown(ctx, th); err != nil || known {
		t.Errorf("ThreadKnown after DeleteThread = %v, %v", known, err)
	}
	sum, live, err := b.LoadTranscript(ctx, th)
	if err != nil || len(live) != 0 || sum.Text != "" {
		t.Errorf("transcript after DeleteThread = %+v, %d entries, %v", sum, len(live), err)
	}
	if old, err := b.Archived(ctx, th); err != nil || len(old) != 0 {
		t.Errorf("archive after DeleteThread = %d entries, %v", len(old), err)
	}
	if _, ok := titles()[th.Key()]; ok {
		t.Error("a deleted thread is still listed")
	}
	if _, live, _ := b.LoadTranscript(ctx, other); len(live) != 2 {
		t.Errorf("the neighbour kept %d entries, want 2", len(live))
	}
	// A thread deleted and written again starts afresh, untitled.
	if _, err := b.AppendEntries(ctx, th, []byte("c")); err != nil {
		t.Fatal(err)
	}
	if _, live, _ := b.LoadTranscript(ctx, th); len(live) != 1 || string(live[0].Data) != "c" {
		t.Errorf("after writing again: %d entries", len(live))
	}
	if got := titles()[th.Key()]; got != "" {
		t.Errorf("title after writing again = %q, want none", got)
	}
}
