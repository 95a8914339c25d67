package progress

import (
	"context"
	"errors"
	"testing"
	"time"
)

type board struct {
	Board
	shows int
}

func TestOpenEnd(t *testing.T) {
	var s Boards[board, *board]
	b := s.Open("t1")
	if b == nil {
		t.Fatal("Open of a new thread = nil, want a board")
	}
	b.shows = 1
	b.Unlock()
	if e := s.End("t1"); e != b || !e.Ended() {
		t.Fatalf("End = %p (ended %v), want the open board %p, ended", e, e != nil && e.Ended(), b)
	}
	b.Unlock()
	if e := s.End("t1"); e != nil {
		t.Errorf("End twice = %p, want nil: the board was taken", e)
	}
	// A turn still holding the ended board cannot open it again.
	s.Map.Get("t2").End()
	if got := s.Open("t2"); got != nil {
		t.Errorf("Open of an ended board = %p, want nil", got)
	}
}

func TestShowPaced(t *testing.T) {
	failed := make(chan error, 1)
	s := Boards[board, *board]{Interval: time.Hour, Timeout: time.Second,
		Failed: func(thread string, err error) { failed <- err }}
	b := s.Open("t1")
	defer b.Unlock()
	show := func(context.Context) error { b.shows++; b.Shown(); return nil }
	if err := s.Show(context.Background(), "t1", b, show); err != nil || b.shows != 1 {
		t.Fatalf("first Show: err %v, shows %d; want it shown at once", err, b.shows)
	}
	if s.Due(b) {
		t.Error("Due right after a show = true, want false")
	}
	if err := s.Show(context.Background(), "t1", b, show); err != nil || b.shows != 1 || b.timer == nil {
		t.Fatalf("Show within the interval: err %v, shows %d, timer %v; want it left to a timer", err, b.shows, b.timer)
	}
	first := b.timer
	_ = s.Show(context.Background(), "t1", b, show)
	if b.timer != first {
		t.Error("a second Show within the interval armed another timer, want the waiting one kept")
	}
	b.Stop()
	if b.timer != nil {
		t.Error("Stop left the timer, want it dropped")
	}

	// Once due, a waiting show runs locked, and its error reaches Failed.
	s.Interval = time.Millisecond
	b.Shown() // not due yet: the show waits on a timer
	boom := errors.New("boom")
	_ = s.Show(context.Background(), "t1", b, func(context.Context) error { return boom })
	b.Unlock()
	if err := <-failed; !errors.Is(err, boom) {
		t.Errorf("Failed got %v, want %v", err, boom)
	}
	b.Lock()
}
