package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/memory"
	"github.com/neobot/neobot/core/memory/memorytest"
)

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func newCortex(t testing.TB, opts memory.Options) *memory.Cortex {
	t.Helper()
	if opts.Store == nil {
		opts.Store = &memorytest.Store{}
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
