package agent

import (
	"context"
	"errors"

	"github.com/neobot/neobot/core"
)

// EventKind is what an [Event] reports.
type EventKind string

// Kinds of events.
const (
	// EventStep: the main model answered one step of a turn.
	EventStep EventKind = "step"
	// EventCompaction: the working history was compacted, or a turn's
	// tool results set aside or cut to fit, or nothing could make the
	// next request fit; Detail is the reason (ReasonSoft, ReasonHard,
	// ReasonRefused, ReasonSetAside, ReasonCut, ReasonNoRoom).
	EventCompaction EventKind = "compaction"
	// EventStall: a turn repeated itself without progress and stopped.
	EventStall EventKind = "stall"
	// EventTurn: a turn ended; Detail is its outcome ("answered",
	// "partial", "stopped" or "failed").
	EventTurn EventKind = "turn"
	// EventWriteBackSkipped: a turn's memory write-back was skipped,
	// because maxWriteBacks were running: what the turn said is not
	// remembered.
	EventWriteBackSkipped EventKind = "writeback_skipped"
)

// Turn outcomes, the Detail of an [EventTurn].
const (
	OutcomeAnswered = "answered"
	OutcomePartial  = "partial"
	OutcomeStopped  = "stopped"
	OutcomeFailed   = "failed"
)

// Event is something a turn did, reported to Options.Observe for metrics.
type Event struct {
	Kind   EventKind
	Detail string
}

// observe reports ev when an observer is set.
func (a *Agent) observe(kind EventKind, detail string) {
	if a.opts.Observe != nil {
		a.opts.Observe(Event{Kind: kind, Detail: detail})
	}
}

// observeTurn reports how a Run ended. A turn found already answered ran
// nothing and is not counted.
func (a *Agent) observeTurn(ctx context.Context, tr *turn, err error) {
	var outcome string
	switch {
	case errors.Is(err, core.ErrAnswered):
		return
	case err == nil && tr != nil && tr.partialEnd:
		outcome = OutcomePartial
	case err == nil:
		outcome = OutcomeAnswered
	case errors.Is(err, core.ErrStopped) || ctx.Err() != nil:
		outcome = OutcomeStopped
	default:
		outcome = OutcomeFailed
	}
	a.observe(EventTurn, outcome)
}
