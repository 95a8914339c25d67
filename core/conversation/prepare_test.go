package conversation

import (
	"context"
	"sync"
	"testing"

	"github.com/neobot/neobot/core"
)

// preparingPlatform reads attachments the way an adapter does: when the
// turn starts, from what was journaled.
type preparingPlatform struct {
	*fakePlatform
	mu       sync.Mutex
	prepared []string // event IDs, one per Prepare call
}

func (p *preparingPlatform) Prepare(ctx context.Context, in core.Inbound) core.Inbound {
	p.mu.Lock()
	p.prepared = append(p.prepared, in.EventID)
	p.mu.Unlock()
	for _, a := range in.Attachments {
		in.Files = append(in.Files, core.File{Name: a.Name, Size: a.Size, Text: "content of " + a.Name})
	}
	in.Attachments = nil
	if in.FetchContext {
		in.Context, in.FetchContext = "<@U2>: earlier", false
	}
	return in
}

// TestPrepareWhenTurnStarts: a message is journaled with its attachments
// unread; they are read when its turn starts, and a message with nothing
// to read is not prepared at all.
func TestPrepareWhenTurnStarts(t *testing.T) {
	var (
		mu   sync.Mutex
		seen = map[string]core.Inbound{}
	)
	runner := runFunc(func(ctx context.Context, turn core.Turn) error {
		mu.Lock()
		seen[turn.Inbound.EventID] = turn.Inbound
		mu.Unlock()
		return nil
	})
	j := newMemJournal()
	h := New(Options{Runner: runner, Journal: j, Grace: -1})
	p := &preparingPlatform{fakePlatform: newFakePlatform()}
	h.Attach("test", p)
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })

	withFile := msg("t1", "e1", "read this")
	withFile.Attachments = []core.Attachment{{ID: "F1", Name: "notes.txt", Size: 5}}
	withFile.FetchContext = true
	submit(t, h, withFile)
	submit(t, h, msg("t1", "e2", "thanks"))
	j.waitCompleted(t, 2)

	j.mu.Lock()
	journaled := j.log[0]
	j.mu.Unlock()
	if len(journaled.Files) != 0 || len(journaled.Attachments) != 1 {
		t.Errorf("journaled %+v, want the attachment unread", journaled)
	}
	mu.Lock()
	defer mu.Unlock()
	got := seen["e1"]
	if len(got.Files) != 1 || got.Files[0].Text != "content of notes.txt" || got.Context != "<@U2>: earlier" {
		t.Errorf("turn saw %+v, want the attachment read and the context fetched", got)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.prepared) != 1 || p.prepared[0] != "e1" {
		t.Errorf("prepared %v, want only e1 (e2 has nothing to read)", p.prepared)
	}
}
