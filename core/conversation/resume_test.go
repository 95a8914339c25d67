package conversation

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
)

func TestStartResumesPending(t *testing.T) {
	at := func(in core.Inbound, age time.Duration) core.Inbound {
		in.At = epoch.Add(time.Minute - age)
		return in
	}
	discord := msg("D", "X1", "hello")
	discord.Thread.Platform = "discord"
	tests := []struct {
		name        string
		pending     []core.Inbound
		answered    []string // the Runner reports these already answered
		wantTurns   []string
		wantSays    []string // in thread A
		wantNotices []string // in thread A
		wantPending []string
	}{
		{
			name:      "resumed in order",
			pending:   []core.Inbound{msg("A", "E1", "one"), msg("A", "E2", "two")},
			wantTurns: []string{"E1", "E2"},
			wantSays:  []string{"answer E1", "answer E2"},
		},
		{
			name:      "answered before the restart says nothing",
			pending:   []core.Inbound{msg("A", "E1", "one"), msg("A", "E2", "two")},
			answered:  []string{"E1"},
			wantTurns: []string{"E1", "E2"},
			wantSays:  []string{"answer E2"},
		},
		{
			name:        "too old gets an honest notice",
			pending:     []core.Inbound{at(msg("A", "E1", "one"), 25*time.Hour), at(msg("A", "E2", "two"), time.Hour)},
			wantTurns:   []string{"E2"},
			wantSays:    []string{"answer E2"},
			wantNotices: []string{expiredText(epoch.Add(time.Minute - 25*time.Hour))},
		},
		{
			name: "pending stop sets aside what came before it",
			pending: []core.Inbound{
				msg("A", "E1", "one"), msg("A", "E2", "two"), msg("A", "E3", "stop"), msg("A", "E4", "four"),
			},
			wantTurns:   []string{"E4"},
			wantSays:    []string{"answer E4"},
			wantNotices: []string{stopText(false, 2)},
		},
		{
			name:        "platform not attached stays pending",
			pending:     []core.Inbound{discord, msg("A", "E1", "one")},
			wantTurns:   []string{"E1"},
			wantSays:    []string{"answer E1"},
			wantPending: []string{"X1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := newMemJournal()
			for _, in := range tt.pending {
				if _, err := j.JournalInbound(context.Background(), in); err != nil {
					t.Fatal(err)
				}
			}
			r := &sayRunner{errs: map[string]error{}}
			for _, id := range tt.answered {
				r.errs[id] = core.ErrAnswered
			}
			h, _, p := startHub(t, Options{Runner: r, Journal: j})
			j.waitCompleted(t, len(tt.pending)-len(tt.wantPending))
			if err := h.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			rec := p.rec(msg("A", "", "").Thread)
			if got := r.calls(); !slices.Equal(got, tt.wantTurns) {
				t.Errorf("turns = %v, want %v", got, tt.wantTurns)
			}
			if got := rec.Says(); !slices.Equal(got, tt.wantSays) {
				t.Errorf("answers = %q, want %q", got, tt.wantSays)
			}
			if got := rec.Notices(); !slices.Equal(got, tt.wantNotices) {
				t.Errorf("notices = %q, want %q", got, tt.wantNotices)
			}
			if got := j.pendingIDs(t); !slices.Equal(got, tt.wantPending) {
				t.Errorf("pending = %v, want %v", got, tt.wantPending)
			}
			assertIdle(t, h)
		})
	}
}

func TestSubmitBeforeStartOnlyJournals(t *testing.T) {
	j := newMemJournal()
	r := &sayRunner{}
	h := New(Options{Runner: r, Journal: j, Now: func() time.Time { return epoch }})
	p := newFakePlatform()
	h.Attach("test", p)
	in := msg("A", "E1", "hello")
	submit(t, h, in)
	h.mu.Lock()
	queued := len(h.threads)
	h.mu.Unlock()
	if queued != 0 {
		t.Errorf("mailboxes before Start = %d, want 0 (the journal holds the message)", queued)
	}
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	j.waitCompleted(t, 1)
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := r.calls(); !slices.Equal(got, []string{"E1"}) {
		t.Errorf("turns = %v, want [E1] once", got)
	}
}

// TestStartWaitsForEarlySubmit: a Submit that began before Start is still
// in flight when Start begins; Start waits for it, and the message runs
// once. (Before, Start could resume and finish it while Submit went on to
// queue it again.)
func TestStartWaitsForEarlySubmit(t *testing.T) {
	j := newMemJournal()
	r := &sayRunner{}
	h := New(Options{Runner: r, Journal: j, Now: func() time.Time { return epoch }})
	h.Attach("test", newFakePlatform())
	in := msg("A", "E1", "hello")
	journaled, release := make(chan struct{}), make(chan struct{})
	j.afterJournal = func(core.Inbound) { close(journaled); <-release }
	submitted := make(chan error, 1)
	go func() { _, err := h.Submit(t.Context(), in); submitted <- err }()
	<-journaled
	started := make(chan error, 1)
	go func() { started <- h.Start(t.Context()) }()
	// Either Start waits for the Submit (fixed), or it runs E1 to its end
	// without it (the defect): wait for one or the other.
	ctx := waitCtx(t)
	for {
		waiting := !h.starting.TryRLock() // Start holds it, waiting for the Submit
		if !waiting {
			h.starting.RUnlock()
		}
		if waiting || j.completed(in) || len(started) > 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("Start neither waited for the Submit nor ran the message")
		case <-time.After(time.Millisecond): // polling the hub's state, not timing it
		}
	}
	close(release)
	if err := <-submitted; err != nil {
		t.Fatal(err)
	}
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	j.waitCompleted(t, 1)
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := r.calls(); !slices.Equal(got, []string{"E1"}) {
		t.Errorf("turns = %v, want [E1] once", got)
	}
}

// TestSubmitWhileStarting submits a message while Start reads the journal:
// it must run once, after the older pending message.
func TestSubmitWhileStarting(t *testing.T) {
	j := newMemJournal()
	old := msg("A", "E1", "before the restart")
	if _, err := j.JournalInbound(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	r := &sayRunner{}
	h := New(Options{Runner: r, Journal: j, Now: func() time.Time { return epoch }})
	h.Attach("test", newFakePlatform())
	submitted := make(chan error, 1)
	j.onPending = func() {
		// A Submit racing Start's journal read waits for Start, then queues.
		go func() { _, err := h.Submit(t.Context(), msg("A", "E2", "during the restart")); submitted <- err }()
	}
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-submitted; err != nil {
		t.Fatal(err)
	}
	j.waitCompleted(t, 2)
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := r.calls(); !slices.Equal(got, []string{"E1", "E2"}) {
		t.Errorf("turns = %v, want [E1 E2], each once", got)
	}
	if err := h.Start(t.Context()); err == nil {
		t.Error("second Start() = nil, want an error")
	}
}

// TestResumeBlamesLeftoversOnTheTurnThatLeftThem: what a crash left in a
// thread (the newest leftover Tidy finds) is blamed on the last of the
// thread's resumed messages posted before it, as the turn that was cut
// short. An earlier message's turn ended before a later one's started, so
// its answer was said: telling it Unsaid would say it twice. A message
// posted after the leftover cannot be the turn that left it, so the last
// one before it is blamed, and a leftover older than every message blames
// none.
func TestResumeBlamesLeftoversOnTheTurnThatLeftThem(t *testing.T) {
	at := func(in core.Inbound, id string) core.Inbound { in.MessageID = id; return in }
	two := []core.Inbound{at(msg("A", "E1", "one"), "100"), at(msg("A", "E2", "two"), "200")}
	for _, tt := range []struct {
		name       string
		pending    []core.Inbound
		leftover   string
		wantUnsaid []string
	}{
		{"one message, leftovers", []core.Inbound{at(msg("A", "E1", "one"), "100")}, "150", []string{"E1"}},
		{"two messages, leftovers after both", two, "250", []string{"E2"}},
		{"two messages, leftovers between them", two, "150", []string{"E1"}},
		{"two messages, leftovers older than both", two, "50", nil},
		{"two messages, a tidy thread", two, "", nil},
		{"messages without IDs: the last is blamed", []core.Inbound{msg("A", "E1", "one"), msg("A", "E2", "two")}, "150", []string{"E2"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j := newMemJournal()
			for _, in := range tt.pending {
				if _, err := j.JournalInbound(context.Background(), in); err != nil {
					t.Fatal(err)
				}
			}
			r := &sayRunner{}
			p := &redelivering{fakePlatform: newFakePlatform(), leftover: tt.leftover}
			h := New(Options{Runner: r, Journal: j, Grace: -1, Now: func() time.Time { return epoch.Add(time.Minute) }})
			h.Attach("test", p)
			if err := h.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = h.Close(context.Background()) })
			j.waitCompleted(t, len(tt.pending))
			r.mu.Lock()
			defer r.mu.Unlock()
			if !slices.Equal(r.unsaid, tt.wantUnsaid) {
				t.Errorf("turns told Unsaid = %v, want %v", r.unsaid, tt.wantUnsaid)
			}
			p.mu.Lock()
			defer p.mu.Unlock()
			if len(p.tidied) != 1 {
				t.Errorf("tidied %v, want the thread once, before its first resumed turn", p.tidied)
			}
		})
	}
}
