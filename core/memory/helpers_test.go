package memory_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/memory"
)

// mapStore is an in-memory memory.Store.
type mapStore struct {
	mu sync.Mutex
	m  map[string]memory.Record
}

func newMapStore() *mapStore { return &mapStore{m: map[string]memory.Record{}} }

func (s *mapStore) WriteMemories(ctx context.Context, put []memory.Record, del []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range del {
		delete(s.m, id)
	}
	for _, r := range put {
		s.m[r.ID] = r
	}
	return nil
}

func (s *mapStore) ScanMemories(ctx context.Context, fn func(memory.Record) error) error {
	s.mu.Lock()
	recs := make([]memory.Record, 0, len(s.m))
	for _, r := range s.m {
		recs = append(recs, r)
	}
	s.mu.Unlock()
	for _, r := range recs {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func newCortex(t testing.TB, opts memory.Options) *memory.Cortex {
	t.Helper()
	if opts.Store == nil {
		opts.Store = newMapStore()
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return t0 }
	}
	c, err := memory.New(context.Background(), opts)
	if err != nil {
		t.Fatalf("memory.New = %v", err)
	}
	return c
}

func remember(t testing.TB, c *memory.Cortex, scope memory.Scope, kind memory.Kind, text string, entities ...string) memory.Record {
	t.Helper()
	r, err := c.Remember(context.Background(), memory.Record{Scope: scope, Kind: kind, Text: text, Entities: entities})
	if err != nil {
		t.Fatalf("Remember(%q) = %v", text, err)
	}
	return r
}

// inbound returns a message from user in channel of workspace ws.
func inbound(ws, channel, user string, dm bool, text string) core.Inbound {
	return core.Inbound{
		Thread: core.Thread{Platform: "slack", Workspace: ws, Channel: channel, ID: "1.1"},
		User:   user, UserName: user, Text: text, EventID: "E-" + text, DM: dm,
	}
}

func texts(hs []memory.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Text
	}
	return out
}
