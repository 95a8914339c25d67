package agent

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// lazyTranscript is a memTranscript that is also a LaterAppender, as the
// bbolt store is: lazy entries are numbered at once and stored by the next
// durable append or compaction, before it; crash drops those not stored.
type lazyTranscript struct {
	*memTranscript
	mu      sync.Mutex
	pending []lazyEntries
	lazy    int // entries appended lazily, ever
}

type lazyEntries struct {
	t    core.Thread
	data [][]byte
}

func (l *lazyTranscript) AppendEntriesLater(ctx context.Context, t core.Thread, data ...[]byte) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lazy += len(data)
	l.pending = append(l.pending, lazyEntries{t, data})
	l.memTranscript.mu.Lock()
	defer l.memTranscript.mu.Unlock()
	last := l.memTranscript.seq[t.Key()]
	for _, p := range l.pending {
		if p.t == t {
			last += uint64(len(p.data))
		}
	}
	return last, nil
}

// store writes the pending lazy entries.
func (l *lazyTranscript) store(ctx context.Context) {
	l.mu.Lock()
	pending := l.pending
	l.pending = nil
	l.mu.Unlock()
	for _, p := range pending {
		_, _ = l.memTranscript.AppendEntries(ctx, p.t, p.data...)
	}
}

func (l *lazyTranscript) AppendEntries(ctx context.Context, t core.Thread, data ...[]byte) (uint64, error) {
	l.store(ctx)
	return l.memTranscript.AppendEntries(ctx, t, data...)
}

func (l *lazyTranscript) Compact(ctx context.Context, t core.Thread, s core.Summary) error {
	l.store(ctx)
	return l.memTranscript.Compact(ctx, t, s)
}

// crash loses the lazy entries not stored yet.
func (l *lazyTranscript) crash() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending = nil
}

// TestUserMessageRidesWithTheNextWrite: a turn's user message is appended
// lazily and stored with the answer, numbered as if stored at once. When a
// crash loses it before anything else was stored, the resumed turn starts
// afresh and answers once.
func TestUserMessageRidesWithTheNextWrite(t *testing.T) {
	lazy := &lazyTranscript{memTranscript: newTranscript()}
	h := newHarness(t, func(o *Options) { o.Transcript = lazy })
	h.srv.Enqueue(llmtest.Text("Hello, Ada."))
	if err := h.run(t, inbound("E1", "hi")); err != nil {
		t.Fatalf("Run = %v", err)
	}
	recs := lazy.records(testThread)
	if lazy.lazy != 1 || len(recs) != 2 || recs[0].Msg.Role != llm.RoleUser || !recs[1].Final {
		t.Fatalf("%d lazy entries; transcript = %+v; want the user message lazily, then the answer", lazy.lazy, recs)
	}
	if _, es, _ := lazy.LoadTranscript(context.Background(), testThread); es[0].Seq != 1 || es[1].Seq != 2 {
		t.Errorf("entries numbered %d, %d; want 1, 2", es[0].Seq, es[1].Seq)
	}

	// The process dies while the model thinks: nothing durable followed
	// the user message, and the store never committed it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.srv.Handle(func(llmtest.Request) llmtest.Reply {
		lazy.crash()
		cancel()
		return llmtest.Text("never said").After(time.Hour)
	})
	if err := h.agent.Run(ctx, core.Turn{Inbound: inbound("E2", "and now?"), Reporter: h.rec}); err == nil {
		t.Fatal("Run cut off while the model thinks = nil, want an error")
	}
	h.srv.Handle(nil)
	h.srv.Enqueue(llmtest.Text("Now, this."))
	if err := h.run(t, inbound("E2", "and now?")); err != nil {
		t.Fatalf("resumed Run = %v", err)
	}
	recs = lazy.records(testThread)
	if len(recs) != 4 || recs[2].EventID != "E2" || recs[2].Msg.Role != llm.RoleUser || !recs[3].Final || recs[3].Msg.Content != "Now, this." {
		t.Errorf("transcript after the resumed turn = %+v; want E2's message once, then its answer", recs)
	}
	if says := h.rec.Says(); len(says) != 2 || says[1] != "Now, this." {
		t.Errorf("Says = %q, want each answer once", says)
	}
}

// slowStatus is a Reporter whose first status is held until released; it
// notes anything said before that status was out.
type slowStatus struct {
	*coretest.Recorder
	held    chan struct{} // closed when the first status arrives
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	out     bool // the first status is recorded
	early   []string
}

func (s *slowStatus) Status(ctx context.Context, text string) error {
	s.once.Do(func() {
		close(s.held)
		<-s.release
	})
	err := s.Recorder.Status(ctx, text)
	s.mu.Lock()
	s.out = true
	s.mu.Unlock()
	return err
}

func (s *slowStatus) Say(ctx context.Context, text string) error {
	s.mu.Lock()
	if !s.out {
		s.early = append(s.early, text)
	}
	s.mu.Unlock()
	return s.Recorder.Say(ctx, text)
}

// TestStatusOverlapsTheTurn: the model is asked while the first status is
// still on its way, and the answer is said only after that status is out.
func TestStatusOverlapsTheTurn(t *testing.T) {
	h := newHarness(t, nil)
	rep := &slowStatus{Recorder: coretest.NewRecorder(), held: make(chan struct{}), release: make(chan struct{})}
	asked := make(chan struct{})
	h.srv.Handle(func(llmtest.Request) llmtest.Reply {
		close(asked)
		return llmtest.Text("Hello, Ada.")
	})
	done := make(chan error, 1)
	go func() {
		done <- h.agent.Run(context.Background(), core.Turn{Inbound: inbound("E1", "hi"), Reporter: rep})
	}()
	<-rep.held
	<-asked // the model is asked while the status is held
	close(rep.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(rep.early) != 0 {
		t.Errorf("said %q before the first status was out", rep.early)
	}
	if says := rep.Says(); len(says) != 1 || says[0] != "Hello, Ada." {
		t.Errorf("Says = %q, want the answer once", says)
	}
}
