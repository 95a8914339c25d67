// Package storetest is the conformance suite for neobot's persistence
// interfaces: transcripts, gates, the delegation ledger, the inbound
// journal, memory records and usage. Every backend must pass [Run].
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/memory"
	"github.com/neobot/neobot/core/quota"
	"github.com/neobot/neobot/core/usage"
	"github.com/neobot/neobot/store"
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
	// GatesSince lists the gates created since, for the approvals export.
	GatesSince(ctx context.Context, since time.Time) ([]core.Gate, error)
	Ledger
	core.SpendLedger
	core.SpendChain
	core.CallLog

	// conversation.Journal and slack.Threads.
	JournalInbound(ctx context.Context, in core.Inbound) (fresh bool, err error)
	CompleteInbound(ctx context.Context, t core.Thread, eventID string) error
	PendingInbound(ctx context.Context) ([]core.Inbound, error)
	ThreadKnown(ctx context.Context, t core.Thread) (bool, error)

	memory.Store
	usage.Store
	quota.Store

	// llm.Postures.
	ModelPosture(ctx context.Context, model, endpoint string) (string, error)
	SaveModelPosture(ctx context.Context, model, endpoint, posture string) error

	// feedback.Store.
	SaveRating(ctx context.Context, r core.Rating) error
	Ratings(ctx context.Context, since time.Time) ([]core.Rating, error)

	// The web's uploads and tools' files.
	PutFile(ctx context.Context, f core.StoredFile) error
	File(ctx context.Context, id string) (core.StoredFile, error)
	SendFile(ctx context.Context, id, thread string) error

	// The web's conversations: listed, renamed and deleted by their owner.
	Threads(ctx context.Context) ([]store.ThreadInfo, error)
	SetThreadTitle(ctx context.Context, t core.Thread, title string) error
	DeleteThread(ctx context.Context, t core.Thread) error
}

// Ledger is the delegation ledger, with the method set of delegate.Ledger.
type Ledger interface {
	SaveDelegation(ctx context.Context, d core.Delegation) error
	DelegationFor(ctx context.Context, t core.Thread, callID string) (core.Delegation, error)
	FinishDelegation(ctx context.Context, t core.Thread, callID string) error
	Delegations(ctx context.Context) ([]core.Delegation, error)
}

// Opener returns a new, empty backend whose clock is now. The backend's
// dedupe TTL must be the default, 24 hours.
type Opener func(t *testing.T, now func() time.Time) Backend

// RunGates runs the gate part of the suite against stores from open: for
// a store of gates alone, such as coretest.GateStore.
func RunGates(t *testing.T, open func(t *testing.T) core.GateStore) {
	t.Run("Gates", func(t *testing.T) { testGates(t, open(t)) })
	t.Run("GatesFlow", func(t *testing.T) { testGatesFlow(t, open(t)) })
	t.Run("GatesQuorum", func(t *testing.T) { testGatesQuorum(t, open(t)) })
}

// RunLedger runs the ledger part of the suite against ledgers from open:
// for a ledger alone, such as coretest.Ledger.
func RunLedger(t *testing.T, open func(t *testing.T) Ledger) {
	t.Run("Ledger", func(t *testing.T) { testLedger(t, open(t)) })
}

// Run runs the conformance suite against backends from open.
func Run(t *testing.T, open Opener) {
	t.Run("Transcript", func(t *testing.T) { testTranscript(t, open) })
	t.Run("Compact", func(t *testing.T) { testCompact(t, open) })
	t.Run("ConcurrentAppends", func(t *testing.T) { testConcurrentAppends(t, open) })
	RunGates(t, func(t *testing.T) core.GateStore { return open(t, epochClock().Now) })
	RunLedger(t, func(t *testing.T) Ledger { return open(t, epochClock().Now) })
	t.Run("Journal", func(t *testing.T) { testJournal(t, open) })
	t.Run("ThreadKnown", func(t *testing.T) { testThreadKnown(t, open) })
	t.Run("Conversations", func(t *testing.T) { testConversations(t, open) })
	t.Run("Memories", func(t *testing.T) { testMemories(t, open) })
	t.Run("Usage", func(t *testing.T) { testUsage(t, open) })
	t.Run("Postures", func(t *testing.T) { testPostures(t, open) })
	t.Run("Ratings", func(t *testing.T) { testRatings(t, open) })
	t.Run("Files", func(t *testing.T) { testFiles(t, open(t, epochClock().Now)) })
	RunShares(t, func(t *testing.T) quota.Store { return open(t, epochClock().Now) })
	RunSpends(t, func(t *testing.T) SpendBackend { return open(t, epochClock().Now) })
	t.Run("SpendChain", func(t *testing.T) { testSpendChain(t, open(t, epochClock().Now)) })
	t.Run("GatesSince", func(t *testing.T) { testGatesSince(t, open(t, epochClock().Now)) })
}

// RunSpends runs the spend ledger and calls log part of the suite.
func RunSpends(t *testing.T, open func(t *testing.T) SpendBackend) {
	t.Run("Spends", func(t *testing.T) { testSpends(t, open(t)) })
	t.Run("SpendDayLimit", func(t *testing.T) { testSpendDayLimit(t, open(t)) })
	t.Run("SpendOneTransition", func(t *testing.T) { testSpendOneTransition(t, open(t)) })
	t.Run("SpendExact", func(t *testing.T) { testSpendExact(t, open(t)) })
	t.Run("CallLog", func(t *testing.T) { testCallLog(t, open(t)) })
}

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// epochClock returns a manual clock stopped at epoch.
func epochClock() *coretest.Clock { return coretest.NewClock(epoch) }

func thread(id string) core.Thread {
	return core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: id}
}
