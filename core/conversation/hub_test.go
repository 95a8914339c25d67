package conversation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/neobot/neobot/core"
)

func TestTurnsInOrderWithinThread(t *testing.T) {
	const threads, perThread, limit = 20, 10, 4
	var (
		mu                sync.Mutex
		order             = map[string][]string{}
		active            = map[string]int{}
		global, maxGlobal int
		maxPerThread      int
	)
	runner := runFunc(func(ctx context.Context, turn core.Turn) error {
		id := turn.Inbound.Thread.ID
		mu.Lock()
		active[id]++
		global++
		maxPerThread = max(maxPerThread, active[id])
		maxGlobal = max(maxGlobal, global)
		order[id] = append(order[id], turn.Inbound.EventID)
		mu.Unlock()
		err := turn.Reporter.Say(ctx, "ok")
		mu.Lock()
		active[id]--
		global--
		mu.Unlock()
		return err
	})
	h, j, _ := startHub(t, Options{Runner: runner, MaxConcurrent: limit})

	var wg sync.WaitGroup
	for th := range threads {
		wg.Go(func() {
			for m := range perThread {
				submit(t, h, msg(fmt.Sprint("t", th), fmt.Sprintf("t%d-m%d", th, m), "hello"))
			}
		})
	}
	wg.Wait()
	j.waitCompleted(t, threads*perThread)

	for th := range threads {
		var want []string
		for m := range perThread {
			want = append(want, fmt.Sprintf("t%d-m%d", th, m))
		}
		if got := order[fmt.Sprint("t", th)]; !slices.Equal(got, want) {
			t.Errorf("turn order in t%d = %v, want %v", th, got, want)
		}
	}
	if maxPerThread != 1 {
		t.Errorf("turns running at once in one thread = %d, want 1", maxPerThread)
	}
	if maxGlobal > limit {
		t.Errorf("turns running at once = %d, want <= MaxConcurrent %d", maxGlobal, limit)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	assertIdle(t, h)
}

func TestThreadsRunInParallelUnderLimit(t *testing.T) {
	r := newHeldRunner()
	h, j, _ := startHub(t, Options{Runner: r, MaxConcurrent: 3})
	for _, th := range []string{"A", "B", "C", "D"} {
		submit(t, h, msg(th, th+"1", "hi"))
	}
	// Three turns run at once: each is held until all three started.
	var held []*heldCall
	seen := map[string]bool{}
	for range 3 {
		c := r.next(t)
		held = append(held, c)
		seen[c.turn.Inbound.Thread.ID] = true
	}
	if len(seen) != 3 {
		t.Fatalf("threads running at once = %v, want 3 distinct", seen)
	}
	h.mu.Lock()
	running, waiting := h.running, len(h.ready)
	h.mu.Unlock()
	if running != 3 || waiting != 1 {
		t.Fatalf("with 3 turns held: %d running, %d waiting; want 3 and 1 (MaxConcurrent 3)", running, waiting)
	}
	for _, c := range held {
		c.reply <- nil
	}
	last := r.next(t)
	if seen[last.turn.Inbound.Thread.ID] {
		t.Errorf("fourth turn ran in thread %s again, want the waiting thread", last.turn.Inbound.Thread.ID)
	}
	last.reply <- nil
	j.waitCompleted(t, 4)
}

func TestFairnessUnderHotThread(t *testing.T) {
	tests := []struct {
		name   string
		before []core.Inbound // submitted before the first turn is released
		want   []string
	}{
		{
			name: "cold threads run before the hot thread's second turn",
			before: []core.Inbound{
				msg("H", "H1", "a"), msg("H", "H2", "b"), msg("H", "H3", "c"), msg("H", "H4", "d"),
				msg("A", "A1", "a"), msg("A", "A2", "b"), msg("B", "B1", "a"),
			},
			want: []string{"H1", "A1", "B1", "H2", "A2", "H3", "H4"},
		},
		{
			name: "two busy threads alternate",
			before: []core.Inbound{
				msg("H", "H1", "a"), msg("H", "H2", "b"), msg("H", "H3", "c"),
				msg("G", "G1", "a"), msg("G", "G2", "b"), msg("G", "G3", "c"),
			},
			want: []string{"H1", "G1", "H2", "G2", "H3", "G3"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newHeldRunner()
			h, j, _ := startHub(t, Options{Runner: r, MaxConcurrent: 1})
			submit(t, h, tt.before[0])
			first := r.next(t)
			for _, in := range tt.before[1:] {
				submit(t, h, in)
			}
			got := []string{first.turn.Inbound.EventID}
			first.reply <- nil
			for len(got) < len(tt.want) {
				c := r.next(t)
				got = append(got, c.turn.Inbound.EventID)
				c.reply <- nil
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("turn order = %v, want %v", got, tt.want)
			}
			j.waitCompleted(t, len(tt.want))
		})
	}
}

func TestDuplicatesDropped(t *testing.T) {
	r := &sayRunner{}
	h, j, p := startHub(t, Options{Runner: r})
	in := msg("A", "E1", "hello")
	submit(t, h, in)
	if ok, err := h.Submit(t.Context(), in); ok || err != nil {
		t.Errorf("Submit(duplicate) = %v, %v, want false, nil", ok, err)
	}
	j.waitCompleted(t, 1)
	if ok, err := h.Submit(t.Context(), in); ok || err != nil {
		t.Errorf("Submit(duplicate after its turn) = %v, %v, want false, nil", ok, err)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	if got := r.calls(); !slices.Equal(got, []string{"E1"}) {
		t.Errorf("turns run = %v, want [E1]", got)
	}
	if got := p.rec(in.Thread).Says(); len(got) != 1 {
		t.Errorf("answers = %q, want exactly one", got)
	}
}

func TestQueuedMessageIsAcknowledged(t *testing.T) {
	r := newHeldRunner()
	h, j, p := startHub(t, Options{Runner: r})
	m1, m2 := msg("A", "E1", "book a table"), msg("A", "E2", "for four people")
	submit(t, h, m1)
	c1 := r.next(t)
	submit(t, h, m2)
	rec := p.rec(m1.Thread)
	notices, err := rec.WaitNotices(waitCtx(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if notices[0] != textQueued {
		t.Errorf("notice for a queued message = %q, want %q", notices[0], textQueued)
	}
	c1.reply <- nil
	c2 := r.next(t)
	if c2.turn.Inbound.EventID != "E2" {
		t.Errorf("second turn = %s, want E2", c2.turn.Inbound.EventID)
	}
	c2.reply <- nil
	j.waitCompleted(t, 2)
	if got := rec.Notices(); len(got) != 1 {
		t.Errorf("notices = %q, want only the one for the queued message", got)
	}
}

func TestTurnGetsThreadReporterAndApprover(t *testing.T) {
	var got core.Turn
	var fromCtx bool
	runner := runFunc(func(ctx context.Context, turn core.Turn) error {
		got = turn
		ct, ok := core.TurnFrom(ctx)
		fromCtx = ok && ct.Inbound.EventID == turn.Inbound.EventID
		return nil
	})
	h, j, p := startHub(t, Options{Runner: runner})
	p.approver = func(ctx context.Context, req core.GateRequest) (core.GateAnswer, error) {
		return core.GateAnswer{Approved: true, Answer: "yes", By: "U9"}, nil
	}
	in := msg("A", "E1", "pay the invoice")
	in.User = "U42"
	submit(t, h, in)
	j.waitCompleted(t, 1)
	if got.Reporter != p.rec(in.Thread) {
		t.Errorf("Turn.Reporter is not the platform's reporter for %s", in.Thread)
	}
	if got.Approver == nil {
		t.Fatal("Turn.Approver = nil, want the platform's approver")
	}
	if want := []string{in.Thread.Key() + " U42"}; !slices.Equal(p.asked, want) {
		t.Errorf("Platform.Approver calls = %q, want %q (requester is the author)", p.asked, want)
	}
	if !fromCtx {
		t.Error("core.TurnFrom(ctx) in Run = missing, want the turn")
	}
}

func TestSubmitRefuses(t *testing.T) {
	bad := msg("A", "E1", "hi")
	bad.Thread.Channel = "C/1"
	noEvent := msg("A", "", "hi")
	other := msg("A", "E2", "hi")
	other.Thread.Platform = "discord"
	tests := []struct {
		name    string
		in      core.Inbound
		journal error
		wantErr error // nil: any error
	}{
		{name: "platform not attached", in: other, wantErr: ErrNoPlatform},
		{name: "no event ID", in: noEvent},
		{name: "invalid thread", in: bad},
		{name: "journal fails", in: msg("A", "E3", "hi"), journal: errors.New("disk full")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := newMemJournal()
			j.fail = tt.journal
			h, _, _ := startHub(t, Options{Runner: &sayRunner{}, Journal: j})
			ok, err := h.Submit(t.Context(), tt.in)
			if ok || err == nil {
				t.Fatalf("Submit() = %v, %v, want false and an error", ok, err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Submit() = %v, want %v", err, tt.wantErr)
			}
			if tt.journal != nil && !errors.Is(err, tt.journal) {
				t.Errorf("Submit() = %v, want it to wrap the journal's %v", err, tt.journal)
			}
			if len(j.log) != 0 {
				t.Errorf("journaled %d messages, want none", len(j.log))
			}
		})
	}
}

func TestSubmitAfterClose(t *testing.T) {
	h, _, _ := startHub(t, Options{Runner: &sayRunner{}})
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ok, err := h.Submit(t.Context(), msg("A", "E1", "hi")); ok || !errors.Is(err, ErrClosed) {
		t.Errorf("Submit() after Close = %v, %v, want false, ErrClosed", ok, err)
	}
	if err := h.Start(t.Context()); !errors.Is(err, ErrClosed) {
		t.Errorf("Start() after Close = %v, want ErrClosed", err)
	}
}

func TestNewMisconfigured(t *testing.T) {
	tests := []struct {
		name string
		opts Options
	}{
		{"no runner", Options{Journal: newMemJournal()}},
		{"no journal", Options{Runner: &sayRunner{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := New(tt.opts)
			if err := h.Start(t.Context()); err == nil || !strings.Contains(err.Error(), "nil") {
				t.Errorf("Start() = %v, want an error naming the missing option", err)
			}
			if _, err := h.Submit(t.Context(), msg("A", "E1", "hi")); err == nil {
				t.Error("Submit() = nil error, want the misconfiguration")
			}
		})
	}
}

// lazyJournal is a memJournal that can complete lazily, recording which
// messages it was asked to.
type lazyJournal struct {
	*memJournal
	lmu  sync.Mutex
	lazy []string
}

func (j *lazyJournal) CompleteInboundLater(t core.Thread, eventID string) {
	j.lmu.Lock()
	j.lazy = append(j.lazy, eventID)
	j.lmu.Unlock()
	_ = j.CompleteInbound(context.Background(), t, eventID)
}

// TestAnsweredTurnsCompleteLazily: a turn whose answer is stored is
// marked done without waiting for the mark to be durable; a failed turn's
// mark is durable, since resuming it would run it again.
func TestAnsweredTurnsCompleteLazily(t *testing.T) {
	j := &lazyJournal{memJournal: newMemJournal()}
	runner := runFunc(func(ctx context.Context, turn core.Turn) error {
		if turn.Inbound.Text == "fail" {
			return errors.New("model down")
		}
		return turn.Reporter.Say(ctx, "ok")
	})
	h, _, _ := startHub(t, Options{Runner: runner, Journal: j})
	for _, in := range []core.Inbound{msg("t1", "E1", "hello"), msg("t2", "E2", "fail")} {
		if _, err := h.Submit(t.Context(), in); err != nil {
			t.Fatal(err)
		}
	}
	j.waitCompleted(t, 2)
	j.lmu.Lock()
	defer j.lmu.Unlock()
	if !slices.Equal(j.lazy, []string{"E1"}) {
		t.Errorf("completed lazily: %v, want only the answered E1", j.lazy)
	}
}
