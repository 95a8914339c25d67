package conversation

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/neobot/neobot/core"
)

// TestApprovalWaitFreesSlot: with one slot, a turn waiting on a person's
// approval lets another thread's turn run meanwhile, then takes a slot
// back to finish.
func TestApprovalWaitFreesSlot(t *testing.T) {
	idle, approved := make(chan struct{}), make(chan struct{})
	var order []string
	r := newHeldRunner()
	runner := runFunc(func(ctx context.Context, turn core.Turn) error {
		if turn.Inbound.Thread.ID == "A" {
			resume := core.Idle(ctx) // as Gates.Ask does around the wait
			close(idle)
			<-approved
			resume(ctx)
			order = append(order, "A finished")
			return nil
		}
		return r.Run(ctx, turn)
	})
	h, j, _ := startHub(t, Options{Runner: runner, MaxConcurrent: 1})
	submit(t, h, msg("A", "A1", "send 5 PAX"))
	<-idle
	submit(t, h, msg("B", "B1", "hello"))
	b := r.next(t) // B runs while A waits on its approval
	h.mu.Lock()
	running := h.running
	h.mu.Unlock()
	if running != 1 {
		t.Errorf("slots taken while A waits and B runs = %d, want 1", running)
	}
	close(approved)
	order = append(order, "B finished")
	b.reply <- nil
	j.waitCompleted(t, 2)
	if strings.Join(order, ", ") != "B finished, A finished" {
		t.Errorf("order = %v, want B to finish before A took a slot back", order)
	}
}

// TestPerUserCap: one user's threads run at most MaxPerUser turns at once;
// another user's thread runs meanwhile.
func TestPerUserCap(t *testing.T) {
	r := newHeldRunner()
	h, j, _ := startHub(t, Options{Runner: r, MaxConcurrent: 4, MaxPerUser: 1})
	mine := func(thread string) core.Inbound {
		in := msg(thread, thread+"1", "hi")
		in.User = "U-busy"
		return in
	}
	submit(t, h, mine("A"))
	submit(t, h, mine("B"))
	submit(t, h, msg("C", "C1", "hi"))
	first, second := r.next(t), r.next(t)
	if first.turn.Inbound.Thread.ID == "C" {
		first, second = second, first
	}
	if first.turn.Inbound.Thread.ID != "A" || second.turn.Inbound.Thread.ID != "C" {
		t.Fatalf("first turns ran in threads %s and %s, want A and C (B waits behind its author's running turn)",
			first.turn.Inbound.Thread.ID, second.turn.Inbound.Thread.ID)
	}
	first.reply <- nil
	third := r.next(t)
	if third.turn.Inbound.Thread.ID != "B" {
		t.Errorf("third turn in %s, want B once A ended", third.turn.Inbound.Thread.ID)
	}
	second.reply <- nil
	third.reply <- nil
	j.waitCompleted(t, 3)
}

// TestQueueCap: a thread with MaxQueued messages waiting sets the next one
// aside and tells its author; the message is never journaled, so a flood
// into one thread writes nothing, and a restart does not bring it back.
func TestQueueCap(t *testing.T) {
	r := newHeldRunner()
	h, j, p := startHub(t, Options{Runner: r, MaxQueued: 2})
	submit(t, h, msg("A", "A1", "first"))
	running := r.next(t)
	submit(t, h, msg("A", "A2", "second"))
	submit(t, h, msg("A", "A3", "third"))
	if ok, err := h.Submit(t.Context(), msg("A", "A4", "fourth")); ok || !errors.Is(err, core.ErrQueueFull) {
		t.Errorf("Submit(fourth) = %v, %v, want false, core.ErrQueueFull", ok, err)
	}
	rec := p.rec(msg("A", "", "").Thread)
	notices, err := rec.WaitNotices(waitCtx(t), 3)
	if err != nil {
		t.Fatalf("notices: %v (got %q)", err, rec.Notices())
	}
	if n := strings.Count(strings.Join(notices, "\n"), "set this one aside"); n != 1 {
		t.Errorf("notices = %q, want the fourth message, and only it, set aside in words", notices)
	}
	j.mu.Lock()
	journaled := j.seen[eventKey(msg("A", "A4", ""))]
	j.mu.Unlock()
	if journaled {
		t.Error("the set-aside message was journaled as accepted")
	}
	running.reply <- nil
	for range 2 {
		r.next(t).reply <- nil
	}
	j.waitCompleted(t, 3)
}

// TestResumeWaitsForASlot: a turn whose approval is answered while every
// slot is taken waits for one before it goes on, so no more than
// MaxConcurrent turns ever run; it goes on as soon as one frees.
func TestResumeWaitsForASlot(t *testing.T) {
	idle, approved, finished := make(chan struct{}), make(chan struct{}), make(chan int, 1)
	r := newHeldRunner()
	var h *Hub
	runner := runFunc(func(ctx context.Context, turn core.Turn) error {
		if turn.Inbound.Thread.ID == "A" {
			resume := core.Idle(ctx)
			close(idle)
			<-approved
			resume(ctx)
			finished <- h.Stats().Running // A's own slot and no other
			return nil
		}
		return r.Run(ctx, turn)
	})
	h, j, _ := startHub(t, Options{Runner: runner, MaxConcurrent: 1})
	submit(t, h, msg("A", "A1", "send 5 PAX"))
	<-idle
	submit(t, h, msg("B", "B1", "hello"))
	b := r.next(t)
	close(approved)
	ctx := waitCtx(t)
	for h.Stats().Resuming != 1 {
		select {
		case running := <-finished:
			t.Fatalf("A went on while B held the only slot (%d running)", running)
		case <-ctx.Done():
			t.Fatal("A never waited for a slot")
		default:
			runtime.Gosched() // polling the hub's state, not timing it
		}
	}
	if s := h.Stats(); s.Running != 1 {
		t.Errorf("running while A waits = %d, want B's 1", s.Running)
	}
	b.reply <- nil
	if running := <-finished; running != 1 {
		t.Errorf("running once A went on = %d, want 1", running)
	}
	if s := h.Stats(); s.Resuming != 0 {
		t.Errorf("Resuming once A went on = %d, want 0", s.Resuming)
	}
	j.waitCompleted(t, 2)
}

// TestPerUserDefault: without MaxPerUser, one person runs at most a
// quarter of MaxConcurrent turns at once.
func TestPerUserDefault(t *testing.T) {
	r := newHeldRunner()
	h, j, _ := startHub(t, Options{Runner: r, MaxConcurrent: 8})
	if !h.Stats().Started {
		t.Error("Stats().Started = false for a running hub")
	}
	for _, th := range []string{"A", "B", "C", "D"} {
		in := msg(th, th+"1", "hi")
		in.User = "U-busy"
		submit(t, h, in)
	}
	first, second := r.next(t), r.next(t)
	if s := h.Stats(); s.Running != 2 || s.Queued != 2 {
		t.Errorf("one person's four threads: %d running, %d queued; want 2 (8/4) and 2", s.Running, s.Queued)
	}
	first.reply <- nil
	third := r.next(t) // one ended, one more starts; the count stays 2
	if s := h.Stats(); s.Running != 2 || s.Queued != 1 {
		t.Errorf("after one ended: %d running, %d queued; want 2 and 1", s.Running, s.Queued)
	}
	second.reply <- nil
	fourth := r.next(t)
	third.reply <- nil
	fourth.reply <- nil
	j.waitCompleted(t, 4)
	if err := h.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if h.Stats().Started {
		t.Error("Stats().Started = true after Close")
	}
}

// TestResumeLoneStop: a "stop" journaled with nothing before it (the
// process died right after taking it) is settled at start: completed,
// with no turn and no notice, since nothing was set aside.
func TestResumeLoneStop(t *testing.T) {
	j := newMemJournal()
	stop := msg("A", "S1", "stop")
	if _, err := j.JournalInbound(t.Context(), stop); err != nil {
		t.Fatal(err)
	}
	ran := make(chan core.Inbound, 1)
	runner := runFunc(func(ctx context.Context, turn core.Turn) error { ran <- turn.Inbound; return nil })
	_, _, p := startHub(t, Options{Runner: runner, Journal: j})
	j.waitCompleted(t, 1)
	select {
	case in := <-ran:
		t.Errorf("a turn ran for %q", in.Text)
	default:
	}
	if n := p.rec(stop.Thread).Notices(); len(n) != 0 {
		t.Errorf("notices = %q, want none: nothing was set aside", n)
	}
}
