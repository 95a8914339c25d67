package conversation

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
)

// epoch is the fixed time test messages are sent at.
var epoch = time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)

// msg returns a message in thread id of the "test" platform.
func msg(thread, event, text string) core.Inbound {
	return core.Inbound{
		Thread:  core.Thread{Platform: "test", Workspace: "W1", Channel: "C1", ID: thread},
		User:    "U-" + thread, // one author per thread: the per-user cap is tested on its own
		Text:    text,
		EventID: event,
		At:      epoch,
	}
}

// memJournal is an in-memory Journal with the store's contract.
type memJournal struct {
	mu        sync.Mutex
	log       []core.Inbound
	seen      map[string]bool
	done      map[string]bool
	doneOrder []string
	changed   chan struct{}
	// onPending, when set, runs at the start of PendingInbound.
	onPending func()
	// fail, when set, is returned by JournalInbound.
	fail error
	// afterJournal, when set, runs after JournalInbound has written a
	// fresh message and before it returns.
	afterJournal func(in core.Inbound)
}

func newMemJournal() *memJournal {
	return &memJournal{seen: map[string]bool{}, done: map[string]bool{}}
}

func (j *memJournal) JournalInbound(ctx context.Context, in core.Inbound) (bool, error) {
	j.mu.Lock()
	if j.fail != nil {
		j.mu.Unlock()
		return false, j.fail
	}
	k := eventKey(in)
	if j.seen[k] {
		j.mu.Unlock()
		return false, nil
	}
	j.seen[k] = true
	j.log = append(j.log, in)
	j.notifyLocked()
	after := j.afterJournal
	j.mu.Unlock()
	if after != nil {
		after(in)
	}
	return true, nil
}

func (j *memJournal) CompleteInbound(ctx context.Context, t core.Thread, eventID string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	k := t.Platform + "\x00" + eventID
	if !j.done[k] {
		j.done[k] = true
		j.doneOrder = append(j.doneOrder, eventID)
	}
	j.notifyLocked()
	return nil
}

func (j *memJournal) PendingInbound(ctx context.Context) ([]core.Inbound, error) {
	if j.onPending != nil {
		j.onPending()
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []core.Inbound
	for _, in := range j.log {
		if !j.done[eventKey(in)] {
			out = append(out, in)
		}
	}
	return out, nil
}

func (j *memJournal) notifyLocked() {
	if j.changed != nil {
		close(j.changed)
		j.changed = nil
	}
}

// completed reports whether the message with event was completed.
func (j *memJournal) completed(in core.Inbound) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.done[eventKey(in)]
}

// pendingIDs returns the event IDs of pending messages, in journal order.
func (j *memJournal) pendingIDs(t *testing.T) []string {
	t.Helper()
	p, _ := j.PendingInbound(context.Background())
	var ids []string
	for _, in := range p {
		ids = append(ids, in.EventID)
	}
	return ids
}

// waitCompleted blocks until n messages are completed.
func (j *memJournal) waitCompleted(t *testing.T, n int) {
	t.Helper()
	ctx := waitCtx(t)
	for {
		j.mu.Lock()
		got := len(j.done)
		if got >= n {
			j.mu.Unlock()
			return
		}
		if j.changed == nil {
			j.changed = make(chan struct{})
		}
		ch := j.changed
		j.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("waiting for %d completed messages, got %d (%v)", n, got, j.doneOrder)
		}
	}
}

// waitCtx bounds a test's waits, so a hub bug fails the test instead of
// hanging it.
func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// fakePlatform hands out a recording Reporter per thread and an approver.
type fakePlatform struct {
	mu        sync.Mutex
	reporters map[string]*coretest.Recorder
	asked     []string // "thread-key requester", one per Approver call
	approver  core.Approver
}

func newFakePlatform() *fakePlatform {
	return &fakePlatform{reporters: map[string]*coretest.Recorder{}}
}

func (p *fakePlatform) Reporter(t core.Thread) core.Reporter { return p.rec(t) }

func (p *fakePlatform) Approver(t core.Thread, requester string) core.Approver {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, t.Key()+" "+requester)
	return p.approver
}

// rec returns the thread's recorder.
func (p *fakePlatform) rec(t core.Thread) *coretest.Recorder {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.reporters[t.Key()]
	if r == nil {
		r = coretest.NewRecorder()
		p.reporters[t.Key()] = r
	}
	return r
}

// runFunc adapts a function to Runner.
type runFunc func(ctx context.Context, t core.Turn) error

func (f runFunc) Run(ctx context.Context, t core.Turn) error { return f(ctx, t) }

// sayRunner answers every message at once with "answer <event>" and
// records the order of turns.
type sayRunner struct {
	mu    sync.Mutex
	order []string
	// errs returns a scripted error per event ID instead of answering.
	errs map[string]error
	// unsaid lists the event IDs of the turns run with core.Turn.Unsaid.
	unsaid []string
}

func (r *sayRunner) Run(ctx context.Context, t core.Turn) error {
	r.mu.Lock()
	r.order = append(r.order, t.Inbound.EventID)
	if t.Unsaid {
		r.unsaid = append(r.unsaid, t.Inbound.EventID)
	}
	err := r.errs[t.Inbound.EventID]
	r.mu.Unlock()
	if err != nil {
		return err
	}
	return t.Reporter.Say(ctx, "answer "+t.Inbound.EventID)
}

func (r *sayRunner) calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.order)
}

// heldCall is one turn held by a heldRunner until the test replies.
type heldCall struct {
	turn  core.Turn
	ctx   context.Context
	reply chan error
}

// heldRunner hands each turn to the test and returns what the test
// replies, or ctx.Err() when the turn is cancelled first.
type heldRunner struct{ calls chan *heldCall }

func newHeldRunner() *heldRunner { return &heldRunner{calls: make(chan *heldCall)} }

func (r *heldRunner) Run(ctx context.Context, t core.Turn) error {
	c := &heldCall{turn: t, ctx: ctx, reply: make(chan error, 1)}
	select {
	case r.calls <- c:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-c.reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// next returns the next turn the hub started.
func (r *heldRunner) next(t *testing.T) *heldCall {
	t.Helper()
	select {
	case c := <-r.calls:
		return c
	case <-waitCtx(t).Done():
		t.Fatal("waiting for a turn to start: none did")
		return nil
	}
}

// startHub returns a started hub over opts with a fake platform attached
// as "test" and a memJournal unless opts has a Journal. The hub is closed
// at the end of the test.
func startHub(t *testing.T, opts Options) (*Hub, *memJournal, *fakePlatform) {
	t.Helper()
	j, _ := opts.Journal.(*memJournal)
	if opts.Journal == nil {
		j = newMemJournal()
		opts.Journal = j
	}
	if opts.Grace == 0 {
		opts.Grace = -1 // tests that care set it
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return epoch.Add(time.Minute) }
	}
	h := New(opts)
	p := newFakePlatform()
	h.Attach("test", p)
	if err := h.Start(t.Context()); err != nil {
		t.Fatalf("Start() = %v, want nil", err)
	}
	t.Cleanup(func() {
		if err := h.Close(context.Background()); err != nil {
			t.Errorf("Close() = %v, want nil", err)
		}
	})
	return h, j, p
}

// submit submits in and fails the test unless it is accepted.
func submit(t *testing.T, h *Hub, in core.Inbound) {
	t.Helper()
	ok, err := h.Submit(t.Context(), in)
	if err != nil || !ok {
		t.Fatalf("Submit(%s) = %v, %v, want true, nil", in.EventID, ok, err)
	}
}

// assertIdle checks, after Close, that no thread holds a mailbox and no
// worker is left.
func assertIdle(t *testing.T, h *Hub) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.threads) != 0 || len(h.inflight) != 0 || len(h.ready) != 0 || h.running != 0 {
		t.Errorf("idle hub holds %d mailboxes, %d in flight, %d ready, %d workers; want none",
			len(h.threads), len(h.inflight), len(h.ready), h.running)
	}
}
