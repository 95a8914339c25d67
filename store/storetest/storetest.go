// Package storetest is the conformance suite for neobot's persistence
// interfaces: transcripts, gates, the delegation ledger, the inbound
// journal and memory records. Every backend must pass [Run].
package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/memory"
)

// Backend is every persistence interface a store implements, with the
// method names the core packages declare.
type Backend interface {
	// agent.Transcript, plus the archive.
	AppendEntries(ctx context.Context, t core.Thread, data ...[]byte) (uint64, error)
	LoadTranscript(ctx context.Context, t core.Thread) (core.Summary, []core.Entry, error)
	Compact(ctx context.Context, t core.Thread, s core.Summary) error
	Archived(ctx context.Context, t core.Thread) ([]core.Entry, error)

	core.GateStore

	// delegate.Ledger.
	SaveDelegation(ctx context.Context, d core.Delegation) error
	DelegationFor(ctx context.Context, t core.Thread, callID string) (core.Delegation, error)
	FinishDelegation(ctx context.Context, t core.Thread, callID string) error
	Delegations(ctx context.Context) ([]core.Delegation, error)

	// conversation.Journal and slack.Threads.
	JournalInbound(ctx context.Context, in core.Inbound) (fresh bool, err error)
	CompleteInbound(ctx context.Context, t core.Thread, eventID string) error
	PendingInbound(ctx context.Context) ([]core.Inbound, error)
	ThreadKnown(ctx context.Context, t core.Thread) (bool, error)

	memory.Store
}

// Opener returns a new, empty backend whose clock is now. The backend's
// dedupe TTL must be the default, 24 hours.
type Opener func(t *testing.T, now func() time.Time) Backend

// Run runs the conformance suite against backends from open.
func Run(t *testing.T, open Opener) {
	t.Run("Transcript", func(t *testing.T) { testTranscript(t, open) })
	t.Run("Compact", func(t *testing.T) { testCompact(t, open) })
	t.Run("ConcurrentAppends", func(t *testing.T) { testConcurrentAppends(t, open) })
	t.Run("Gates", func(t *testing.T) { testGates(t, open) })
	t.Run("GatesFlow", func(t *testing.T) { testGatesFlow(t, open) })
	t.Run("Ledger", func(t *testing.T) { testLedger(t, open) })
	t.Run("Journal", func(t *testing.T) { testJournal(t, open) })
	t.Run("ThreadKnown", func(t *testing.T) { testThreadKnown(t, open) })
	t.Run("Memories", func(t *testing.T) { testMemories(t, open) })
}

// Clock is a manual clock for tests.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock stopped at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func thread(id string) core.Thread {
	return core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: id}
}
