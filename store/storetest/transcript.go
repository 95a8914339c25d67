package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/neobot/neobot/core"
)

func testTranscript(t *testing.T, open Opener) {
	ctx := context.Background()
	b := open(t, epochClock().Now)
	th, other := thread("100.1"), thread("100.10") // one key is a prefix of the other

	sum, entries, err := b.LoadTranscript(ctx, th)
	if err != nil || sum != (core.Summary{}) || len(entries) != 0 {
		t.Fatalf("LoadTranscript(new thread) = %v, %d entries, %v; want zero summary, none, nil", sum, len(entries), err)
	}
	steps := []struct {
		thread core.Thread
		data   []string
		want   uint64
	}{
		{th, []string{"one"}, 1},
		{th, []string{"two", "three"}, 3},
		{other, []string{"elsewhere"}, 1},
		{th, []string{""}, 4},
	}
	for _, s := range steps {
		got, err := b.AppendEntries(ctx, s.thread, bytesOf(s.data)...)
		if err != nil || got != s.want {
			t.Fatalf("AppendEntries(%s, %q) = %d, %v; want %d", s.thread.ID, s.data, got, err, s.want)
		}
	}
	if _, err := b.AppendEntries(ctx, core.Thread{Platform: "slack"}, []byte("x")); err == nil {
		t.Errorf("AppendEntries(invalid thread) = nil error, want one")
	}
	_, entries, err = b.LoadTranscript(ctx, th)
	if err != nil {
		t.Fatalf("LoadTranscript: %v", err)
	}
	checkEntries(t, entries, 1, []string{"one", "two", "three", ""})
	_, entries, _ = b.LoadTranscript(ctx, other)
	checkEntries(t, entries, 1, []string{"elsewhere"})
	if !entries[0].At.Equal(epoch) {
		t.Errorf("entry At = %v, want the clock's %v", entries[0].At, epoch)
	}
}

func testCompact(t *testing.T, open Opener) {
	ctx := context.Background()
	b := open(t, epochClock().Now)
	th := thread("200.1")
	if _, err := b.AppendEntries(ctx, th, bytesOf([]string{"a", "b", "c", "d"})...); err != nil {
		t.Fatal(err)
	}
	s := core.Summary{Text: "GOAL: test", UpTo: 2, At: epoch}
	if err := b.Compact(ctx, th, s); err != nil {
		t.Fatalf("Compact(up to 2) = %v", err)
	}
	got, entries, err := b.LoadTranscript(ctx, th)
	if err != nil || got.Text != s.Text || got.UpTo != 2 || !got.At.Equal(s.At) {
		t.Fatalf("LoadTranscript summary = %+v, %v; want %+v", got, err, s)
	}
	checkEntries(t, entries, 3, []string{"c", "d"})
	archived, err := b.Archived(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	checkEntries(t, archived, 1, []string{"a", "b"})

	// Sequence numbers are never reused after compaction.
	if seq, err := b.AppendEntries(ctx, th, []byte("e")); err != nil || seq != 5 {
		t.Fatalf("AppendEntries after Compact = %d, %v; want 5", seq, err)
	}
	bad := []core.Summary{
		{Text: "beyond", UpTo: 9},
		{Text: "backwards", UpTo: 1},
	}
	for _, s := range bad {
		if err := b.Compact(ctx, th, s); err == nil {
			t.Errorf("Compact(up to %d) = nil, want an error", s.UpTo)
		}
	}
	got, entries, _ = b.LoadTranscript(ctx, th)
	if got.Text != "GOAL: test" {
		t.Errorf("summary after refused Compact = %q, want unchanged", got.Text)
	}
	checkEntries(t, entries, 3, []string{"c", "d", "e"})

	if err := b.Compact(ctx, th, core.Summary{Text: "all", UpTo: 5}); err != nil {
		t.Fatalf("Compact(up to 5) = %v", err)
	}
	_, entries, _ = b.LoadTranscript(ctx, th)
	archived, _ = b.Archived(ctx, th)
	if len(entries) != 0 {
		t.Errorf("live entries after full Compact = %d, want 0", len(entries))
	}
	checkEntries(t, archived, 1, []string{"a", "b", "c", "d", "e"})
}

func testConcurrentAppends(t *testing.T, open Opener) {
	ctx := context.Background()
	b := open(t, epochClock().Now)
	const writers, each = 16, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			th := thread(fmt.Sprintf("w%d", w%4)) // four threads, four writers each
			for i := range each {
				if _, err := b.AppendEntries(ctx, th, fmt.Appendf(nil, "%d-%d", w, i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("AppendEntries: %v", err)
	}
	for i := range 4 {
		_, entries, err := b.LoadTranscript(ctx, thread(fmt.Sprintf("w%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 4*each {
			t.Fatalf("thread w%d has %d entries, want %d", i, len(entries), 4*each)
		}
		seen := map[string]bool{}
		for j, e := range entries {
			if e.Seq != uint64(j+1) {
				t.Fatalf("thread w%d entry %d has Seq %d, want %d", i, j, e.Seq, j+1)
			}
			if seen[string(e.Data)] {
				t.Fatalf("thread w%d: %q stored twice", i, e.Data)
			}
			seen[string(e.Data)] = true
		}
	}
}

func testThreadKnown(t *testing.T, open Opener) {
	ctx := context.Background()
	b := open(t, epochClock().Now)
	appended, journaled, never := thread("k1"), thread("k2"), thread("k3")
	if _, err := b.AppendEntries(ctx, appended, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.JournalInbound(ctx, core.Inbound{Thread: journaled, EventID: "Ev1", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		t    core.Thread
		want bool
	}{{appended, true}, {journaled, true}, {never, false}} {
		if got, err := b.ThreadKnown(ctx, tc.t); err != nil || got != tc.want {
			t.Errorf("ThreadKnown(%s) = %v, %v; want %v", tc.t.ID, got, err, tc.want)
		}
	}
}

func bytesOf(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func checkEntries(t *testing.T, entries []core.Entry, first uint64, want []string) {
	t.Helper()
	if len(entries) != len(want) {
		t.Fatalf("got %d entries, want %d (%q)", len(entries), len(want), want)
	}
	for i, e := range entries {
		if e.Seq != first+uint64(i) || string(e.Data) != want[i] {
			t.Errorf("entry %d = {Seq %d, %q}, want {Seq %d, %q}", i, e.Seq, e.Data, first+uint64(i), want[i])
		}
	}
}
