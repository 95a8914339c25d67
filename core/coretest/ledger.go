package coretest

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/neobot/neobot/core"
)

// Ledger is an in-memory record of delegations, with the method set of
// delegate.Ledger.
type Ledger struct {
	mu       sync.Mutex
	records  map[ledgerKey]*ledgerRecord
	finished []core.Delegation
}

type ledgerKey struct{ thread, callID string }

type ledgerRecord struct {
	d    core.Delegation
	done bool
}

// NewLedger returns an empty Ledger.
func NewLedger() *Ledger {
	return &Ledger{records: map[ledgerKey]*ledgerRecord{}}
}

// SaveDelegation records d under (d.Thread, d.CallID), in flight,
// replacing any earlier record with that key.
func (l *Ledger) SaveDelegation(ctx context.Context, d core.Delegation) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records[ledgerKey{d.Thread.Key(), d.CallID}] = &ledgerRecord{d: d}
	return nil
}

// DelegationFor returns the delegation recorded for the thread's tool
// call, in flight or finished (so a resumed turn polls the same intent
// rather than submitting again), or core.ErrNotFound.
func (l *Ledger) DelegationFor(ctx context.Context, t core.Thread, callID string) (core.Delegation, error) {
	if err := ctx.Err(); err != nil {
		return core.Delegation{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.records[ledgerKey{t.Key(), callID}]
	if !ok {
		return core.Delegation{}, core.ErrNotFound
	}
	return r.d, nil
}

// FinishDelegation marks the delegation finished: it leaves Delegations
// and stays findable by DelegationFor. Finishing it twice is not an error;
// finishing one never saved is core.ErrNotFound.
func (l *Ledger) FinishDelegation(ctx context.Context, t core.Thread, callID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.records[ledgerKey{t.Key(), callID}]
	if !ok {
		return core.ErrNotFound
	}
	if !r.done {
		r.done = true
		l.finished = append(l.finished, r.d)
	}
	return nil
}

// Delegations returns the delegations in flight, oldest first.
func (l *Ledger) Delegations(ctx context.Context) ([]core.Delegation, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []core.Delegation
	for _, r := range l.records {
		if !r.done {
			out = append(out, r.d)
		}
	}
	slices.SortFunc(out, func(a, b core.Delegation) int {
		if c := a.Started.Compare(b.Started); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.Thread.Key(), b.Thread.Key()), cmp.Compare(a.CallID, b.CallID))
	})
	return out, nil
}

// Finished returns the delegations finished so far, in order, for
// assertions.
func (l *Ledger) Finished() []core.Delegation {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.finished)
}
