package statusline

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/core/coretest"
)

// editor records the edits made through it.
type editor struct {
	mu    sync.Mutex
	edits []string
	err   error
}

func (e *editor) edit(_ context.Context, id, text string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.edits = append(e.edits, id+":"+text)
	return e.err
}

func (e *editor) got() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.edits)
}

const interval = time.Second

func newLines(c *coretest.Clock) *Lines[bool] {
	return New(Options[bool]{Interval: interval, Clock: c, Keep: func(keep bool) bool { return keep }})
}

func TestUpdateThrottles(t *testing.T) {
	type step struct {
		wait   time.Duration // the clock moves on first, firing due timers
		status string        // then Update, unless ""
	}
	tests := []struct {
		name          string
		steps         []step
		wantEdits     []string
		wantScheduled bool
	}{
		{"within interval: held back", []step{{0, "one"}, {0, "two"}}, nil, true},
		{"past interval: at once", []step{{interval, "one"}, {interval, "two"}}, []string{"m:one", "m:two"}, false},
		{"latest held back wins", []step{{0, "one"}, {0, "two"}, {interval, ""}}, []string{"m:two"}, false},
		{"timer waits out the interval", []step{{interval / 2, "one"}, {interval / 4, ""}}, nil, true},
		{"edit after a flush waits again", []step{{0, "one"}, {interval, ""}, {0, "two"}}, []string{"m:one"}, true},
		{"while scheduled, no edit at once", []step{{0, "one"}, {0, "two"}, {interval / 2, ""}, {0, "three"}, {interval / 2, ""}}, []string{"m:three"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := coretest.NewClock(time.Unix(1e9, 0))
			s, e := newLines(c), &editor{}
			_ = s.With("k", func(l *Line[bool]) error { l.Posted("m"); return nil })
			for _, st := range tt.steps {
				c.Advance(st.wait)
				if st.status == "" {
					continue
				}
				err := s.With("k", func(l *Line[bool]) error { return l.Update(context.Background(), st.status, e.edit) })
				if err != nil {
					t.Fatalf("Update(%q) = %v, want nil", st.status, err)
				}
			}
			if got := e.got(); !slices.Equal(got, tt.wantEdits) {
				t.Errorf("edits = %q, want %q", got, tt.wantEdits)
			}
			var scheduled bool
			_ = s.With("k", func(l *Line[bool]) error { scheduled = l.Scheduled(); return nil })
			if scheduled != tt.wantScheduled {
				t.Errorf("Scheduled() = %v, want %v", scheduled, tt.wantScheduled)
			}
		})
	}
}

func TestUpdateReturnsEditError(t *testing.T) {
	c := coretest.NewClock(time.Unix(1e9, 0))
	var flushed []error
	s := New(Options[bool]{Interval: interval, Clock: c, FlushFailed: func(key string, err error) {
		flushed = append(flushed, err)
	}})
	boom := errors.New("boom")
	e := &editor{err: boom}
	update := func(text string) error {
		return s.With("k", func(l *Line[bool]) error { return l.Update(context.Background(), text, e.edit) })
	}
	_ = s.With("k", func(l *Line[bool]) error { l.Posted("m"); return nil })
	c.Advance(interval)
	if err := update("now"); !errors.Is(err, boom) {
		t.Errorf("Update past the interval = %v, want %v", err, boom)
	}
	if err := update("later"); err != nil {
		t.Errorf("Update within the interval = %v, want nil (held back)", err)
	}
	c.Advance(interval)
	if len(flushed) != 1 || !errors.Is(flushed[0], boom) {
		t.Errorf("FlushFailed heard %v, want [%v]", flushed, boom)
	}
}

func TestClear(t *testing.T) {
	c := coretest.NewClock(time.Unix(1e9, 0))
	s, e := newLines(c), &editor{}
	var id string
	_ = s.With("k", func(l *Line[bool]) error {
		l.Posted("m")
		_ = l.Update(context.Background(), "held", e.edit)
		id = l.Clear()
		return nil
	})
	if id != "m" {
		t.Errorf("Clear() = %q, want %q", id, "m")
	}
	c.Advance(interval)
	if got := e.got(); len(got) != 0 {
		t.Errorf("edits after Clear = %q, want none", got)
	}
	_ = s.With("k", func(l *Line[bool]) error {
		if l.ID() != "" || l.Scheduled() {
			t.Errorf("after Clear: ID() = %q, Scheduled() = %v; want \"\", false", l.ID(), l.Scheduled())
		}
		return nil
	})
	s.Close() // returns: nothing scheduled
}

// TestLateTimer checks a timer that fired as Clear cancelled it: it must
// neither show its status in the next status message nor take over the
// newer timer's place.
func TestLateTimer(t *testing.T) {
	c := coretest.NewClock(time.Unix(1e9, 0))
	s, e := newLines(c), &editor{}
	with := func(fn func(l *Line[bool])) { _ = s.With("k", func(l *Line[bool]) error { fn(l); return nil }) }
	with(func(l *Line[bool]) { l.Posted("m1"); _ = l.Update(context.Background(), "old", e.edit) })
	late := c.Due(interval) // fired, blocked on the line's lock
	with(func(l *Line[bool]) {
		l.Clear()
		l.Posted("m2")
		_ = l.Update(context.Background(), "new", e.edit)
	})
	for _, f := range late {
		f()
	}
	if got := e.got(); len(got) != 0 {
		t.Errorf("edits after the late timer = %q, want none", got)
	}
	c.Advance(interval)
	if got, want := e.got(), []string{"m2:new"}; !slices.Equal(got, want) {
		t.Errorf("edits after the new timer = %q, want %q", got, want)
	}
	s.Close()
}

func TestClose(t *testing.T) {
	c := coretest.NewClock(time.Unix(1e9, 0))
	s, e := newLines(c), &editor{}
	update := func(text string) {
		_ = s.With("k", func(l *Line[bool]) error { return l.Update(context.Background(), text, e.edit) })
	}
	_ = s.With("k", func(l *Line[bool]) error { l.Posted("m"); return nil })
	update("before close")
	closed := make(chan struct{})
	go func() {
		s.Close()
		close(closed)
	}()
	c.Advance(interval) // the scheduled edit, which Close waits for
	<-closed
	if got, want := e.got(), []string{"m:before close"}; !slices.Equal(got, want) {
		t.Errorf("edits after Close = %q, want %q", got, want)
	}
	update("after close")
	_ = s.With("k", func(l *Line[bool]) error {
		if l.Scheduled() {
			t.Error("Update after Close scheduled a timer, want none")
		}
		return nil
	})
}

func TestFinishForgets(t *testing.T) {
	tests := []struct {
		name     string
		fn       func(l *Line[bool])
		wantKept bool
	}{
		{"idle", func(l *Line[bool]) {}, false},
		{"cleared", func(l *Line[bool]) { l.Posted("m"); l.Clear() }, false},
		{"showing a status", func(l *Line[bool]) { l.Posted("m") }, true},
		{"edit scheduled", func(l *Line[bool]) {
			l.Posted("m")
			_ = l.Update(context.Background(), "x", (&editor{}).edit)
			l.id = "" // the edit still pending is what keeps it
		}, true},
		{"Ext worth keeping", func(l *Line[bool]) { l.Ext = true }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := coretest.NewClock(time.Unix(1e9, 0))
			s := newLines(c)
			_ = s.Finish("k", func(l *Line[bool]) error { tt.fn(l); return nil })
			s.mu.Lock()
			_, kept := s.m["k"]
			s.mu.Unlock()
			if kept != tt.wantKept {
				t.Errorf("line kept after Finish = %v, want %v", kept, tt.wantKept)
			}
		})
	}
}

// TestFinishKeepsAWaitedForLine checks that a line another caller took
// while a Finish held it outlives that Finish: a status message the
// waiting caller then posts is the one the thread's next answer replaces.
// Forgotten, it would stay in the thread for good (a notice said while a
// turn's first status was on its way).
func TestFinishKeepsAWaitedForLine(t *testing.T) {
	s := newLines(coretest.NewClock(time.Unix(1e9, 0)))
	posted := make(chan struct{})
	_ = s.Finish("k", func(*Line[bool]) error {
		go func() {
			defer close(posted)
			_ = s.With("k", func(l *Line[bool]) error { l.Posted("status"); return nil })
		}()
		for s.holders("k") < 2 { // the With has the line, and waits for its lock
			runtime.Gosched()
		}
		return nil
	})
	<-posted
	_ = s.Finish("k", func(l *Line[bool]) error {
		if l.ID() != "status" {
			t.Errorf("status message after the Finish = %q, want the one posted while it ran, %q", l.ID(), "status")
		}
		return nil
	})
}

// holders is how many callers hold the line of key.
func (s *Lines[T]) holders(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.m[key]; ok {
		return l.holders
	}
	return 0
}
