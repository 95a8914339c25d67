package conversation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/neobot/neobot/core"
)

// laterJournal is a memJournal that takes messages in two halves, as the
// store does: JournalInboundLater decides at once, and the record commits
// when the test sends its outcome on the channel commits returns.
type laterJournal struct {
	*memJournal
	mu      sync.Mutex
	pending map[string]chan error // event ID -> the commit's outcome, sent by the test
	later   int                   // JournalInboundLater calls
	arrived chan string           // event IDs, as JournalInboundLater takes them
}

func newLaterJournal() *laterJournal {
	return &laterJournal{memJournal: newMemJournal(), pending: map[string]chan error{}, arrived: make(chan string, 16)}
}

func (j *laterJournal) JournalInboundLater(ctx context.Context, in core.Inbound) (bool, <-chan error, error) {
	j.mu.Lock()
	j.later++
	j.mu.Unlock()
	j.memJournal.mu.Lock()
	k := eventKey(in)
	if j.seen[k] {
		j.memJournal.mu.Unlock()
		return false, nil, nil
	}
	j.seen[k] = true
	j.memJournal.mu.Unlock()

	outcome, durable := make(chan error, 1), make(chan error, 1)
	j.mu.Lock()
	j.pending[in.EventID] = outcome
	j.mu.Unlock()
	go func() {
		err := <-outcome
		if err == nil {
			j.memJournal.mu.Lock()
			j.log = append(j.log, in)
			j.memJournal.mu.Unlock()
		}
		durable <- err
	}()
	j.arrived <- in.EventID
	return true, durable, nil
}

// commit ends event's wait for the disk with err.
func (j *laterJournal) commit(t *testing.T, event string, err error) {
	t.Helper()
	j.mu.Lock()
	c := j.pending[event]
	j.mu.Unlock()
	if c == nil {
		t.Fatalf("commit %s: JournalInboundLater never took it", event)
	}
	c <- err
}

// laterCalls is how many messages went through JournalInboundLater.
func (j *laterJournal) laterCalls() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.later
}

// redelivering is a fake platform that redelivers what it was not told
// arrived, as Slack does, and records the threads it tidied.
type redelivering struct {
	*fakePlatform
	mu     sync.Mutex
	tidied []string
	// leftover is the newest leftover Tidy finds ("" for none). Message
	// IDs here are numbers, and order as numbers do.
	leftover string
}

func (p *redelivering) Redelivers() bool { return true }

func (p *redelivering) Tidy(_ context.Context, t core.Thread) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tidied = append(p.tidied, t.Key())
	return p.leftover
}

func (p *redelivering) Before(a, b string) bool {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if errA != nil || errB != nil {
		panic(fmt.Sprintf("Before(%q, %q): message IDs here are numbers", a, b))
	}
	return x < y
}

// startEarlyHub starts a hub over a laterJournal with p attached as "test".
func startEarlyHub(t *testing.T, r Runner, p Platform) (*Hub, *laterJournal) {
	t.Helper()
	return startEarlyHubWith(t, Options{Runner: r}, p)
}

// startEarlyHubWith is startEarlyHub with more options.
func startEarlyHubWith(t *testing.T, opts Options, p Platform) (*Hub, *laterJournal) {
	t.Helper()
	j := newLaterJournal()
	opts.Journal, opts.Grace = j, -1
	h := New(opts)
	h.Attach("test", p)
	if err := h.Start(t.Context()); err != nil {
		t.Fatalf("Start() = %v", err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h, j
}

// submitted is the outcome of a Submit run in the background.
type submitted struct {
	ok  bool
	err error
}

// submitAsync runs Submit in the background; its outcome arrives on the
// returned channel.
func submitAsync(t *testing.T, h *Hub, in core.Inbound) <-chan submitted {
	out := make(chan submitted, 1)
	go func() {
		ok, err := h.Submit(t.Context(), in)
		out <- submitted{ok, err}
	}()
	return out
}

func TestTurnStartsWhileTheJournalCommits(t *testing.T) {
	r := newHeldRunner()
	p := &redelivering{fakePlatform: newFakePlatform()}
	h, j := startEarlyHub(t, r, p)
	in := msg("A", "A1", "hi")
	done := submitAsync(t, h, in)

	turn := r.next(t) // running, though the record has not committed
	select {
	case s := <-done:
		t.Fatalf("Submit returned %v, %v before the journal committed; the platform would be acknowledged too early", s.ok, s.err)
	default:
	}
	if got := j.pendingIDs(t); len(got) != 0 {
		t.Fatalf("journal holds %v before the commit", got)
	}
	j.commit(t, "A1", nil)
	if s := <-done; !s.ok || s.err != nil {
		t.Fatalf("Submit() = %v, %v after the commit, want true, nil", s.ok, s.err)
	}
	if dup, err := h.Submit(t.Context(), in); dup || err != nil {
		t.Errorf("Submit(redelivery) = %v, %v, want false, nil (a duplicate)", dup, err)
	}
	turn.reply <- nil
	j.waitCompleted(t, 1)
	if n := j.laterCalls(); n != 2 {
		t.Errorf("JournalInboundLater calls = %d, want 2", n)
	}
	if len(p.tidied) != 0 {
		t.Errorf("tidied %v before a first delivery's turn, want nothing", p.tidied)
	}
}

func TestJournalFailureCallsOffTheTurn(t *testing.T) {
	r := newHeldRunner()
	p := &redelivering{fakePlatform: newFakePlatform()}
	h, j := startEarlyHubWith(t, Options{Runner: r, MaxConcurrent: 1}, p)
	diskFull := core.ErrDiskFull
	failed := func(name string, s submitted) {
		t.Helper()
		if s.ok || !errors.Is(s.err, diskFull) {
			t.Errorf("Submit(%s) = %v, %v, want false and the journal's error", name, s.ok, s.err)
		}
	}

	// The running turn is cancelled, silently: the intake tells the author.
	first := submitAsync(t, h, msg("A", "A1", "hi"))
	turn := r.next(t)
	j.commit(t, "A1", diskFull)
	failed("A1", <-first)
	select {
	case <-turn.ctx.Done():
	case <-waitCtx(t).Done():
		t.Fatal("the turn of a message whose journal failed was not called off")
	}
	if cause := context.Cause(turn.ctx); !errors.Is(cause, errNotJournaled) {
		t.Errorf("turn cancelled by %v, want errNotJournaled", cause)
	}
	turn.reply <- turn.ctx.Err()

	// B1 runs and holds the only slot.
	second := submitAsync(t, h, msg("B", "B1", "one"))
	held := r.next(t)
	j.commit(t, "B1", nil)
	if s := <-second; !s.ok || s.err != nil {
		t.Fatalf("Submit(B1) = %v, %v", s.ok, s.err)
	}
	// C1 waits for that slot, and B2 behind B1, when their records fail.
	waiting := submitAsync(t, h, msg("C", "C1", "three"))
	queued := submitAsync(t, h, msg("B", "B2", "two"))
	for range 4 { // A1, B1, C1, B2
		<-j.arrived
	}
	j.commit(t, "C1", diskFull)
	j.commit(t, "B2", diskFull)
	failed("C1", <-waiting)
	failed("B2", <-queued)
	held.reply <- nil
	j.waitCompleted(t, 1)
	// The slot goes to the next message, not to the called-off C1.
	next := submitAsync(t, h, msg("D", "D1", "four"))
	<-j.arrived
	j.commit(t, "D1", nil)
	if got := r.next(t); got.turn.Inbound.EventID != "D1" {
		t.Fatalf("the freed slot ran %s, want D1", got.turn.Inbound.EventID)
	} else {
		got.reply <- nil
	}
	<-next
	j.waitCompleted(t, 2)
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertIdle(t, h)
	for _, th := range []string{"A", "B", "C"} {
		rec := p.rec(msg(th, "", "").Thread)
		if says, notices := rec.Says(), rec.Notices(); len(says)+len(notices) != 0 {
			t.Errorf("thread %s shows %q %q, want nothing: a message not journaled is not answered", th, says, notices)
		}
	}
	if got := j.pendingIDs(t); len(got) != 0 {
		t.Errorf("pending after the turns = %v, want none", got)
	}
	// Only the turn that ran may have left a status line.
	if want := []string{msg("A", "", "").Thread.Key()}; !slices.Equal(p.tidied, want) {
		t.Errorf("tidied %v, want %v", p.tidied, want)
	}
}

func TestEarlyTurnOnlyWherePlatformRedelivers(t *testing.T) {
	r := &sayRunner{}
	h, j := startEarlyHub(t, r, newFakePlatform()) // Discord: nothing redelivers
	submit(t, h, msg("A", "A1", "hi"))
	j.waitCompleted(t, 1)
	if n := j.laterCalls(); n != 0 {
		t.Errorf("JournalInboundLater calls = %d for a platform that never redelivers, want 0", n)
	}
}

// TestRedeliveredMessageTidiesFirst: the turn of a redelivered message
// starts with Tidy, and learns from it whether the thread showed a turn
// cut short (core.Turn.Unsaid), so a stored answer never said is said: a
// leftover posted after the message is its turn's, an older one is not.
func TestRedeliveredMessageTidiesFirst(t *testing.T) {
	for _, tt := range []struct {
		leftover string // the newest leftover's ID; the message's is 100
		cut      bool
	}{{"", false}, {"150", true}, {"50", false}} {
		t.Run("leftover="+tt.leftover, func(t *testing.T) {
			cut := tt.cut
			r := &sayRunner{}
			p := &redelivering{fakePlatform: newFakePlatform(), leftover: tt.leftover}
			h, j := startEarlyHub(t, r, p)
			in := msg("A", "A1", "hi")
			in.Redelivered, in.MessageID = true, "100"
			done := submitAsync(t, h, in)
			<-j.arrived
			j.commit(t, "A1", nil)
			if s := <-done; !s.ok || s.err != nil {
				t.Fatalf("Submit() = %v, %v", s.ok, s.err)
			}
			j.waitCompleted(t, 1)
			p.mu.Lock()
			defer p.mu.Unlock()
			if want := []string{in.Thread.Key()}; !slices.Equal(p.tidied, want) {
				t.Errorf("tidied %v, want %v: a process that died may have left a status line", p.tidied, want)
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			if got := len(r.unsaid) == 1; got != cut {
				t.Errorf("turn run with Unsaid = %v, want %v (what Tidy found)", got, cut)
			}
		})
	}
}
