package coretest

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/neobot/neobot/core"
)

// Ledger is an in-memory record of delegations in flight, with the method
// set of delegate.Ledger.
type Ledger struct {
	mu       sync.Mutex
	inFlight map[ledgerKey]core.Delegation
	finished []core.Delegation
}

type ledgerKey struct{ thread, callID string }

// NewLedger returns an empty Ledger.
func NewLedger() *Ledger {
	return &Ledger{inFlight: map[ledgerKey]core.Delegation{}}
}

// SaveDelegation records d under (d.Thread, d.CallID), replacing any
// earlier record with that key.
func (l *Ledger) SaveDelegation(ctx context.Context, d core.Delegation) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight[ledgerKey{d.Thread.Key(), d.CallID}] = d
	return nil
}

// DelegationFor returns the delegation in flight for the thread's tool
// call, or core.ErrNotFound.
func (l *Ledger) DelegationFor(ctx context.Context, t core.Thread, callID string) (core.Delegation, error) {
	if err := ctx.Err(); err != nil {
		return core.Delegation{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	d, ok := l.inFlight[ledgerKey{t.Key(), callID}]
	if !ok {
		return core.Delegation{}, core.ErrNotFound
	}
	return d, nil
}

// FinishDelegation removes the delegation from the in-flight set; finishing
// one that is not in flight is not an error.
func (l *Ledger) FinishDelegation(ctx context.Context, t core.Thread, callID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	k := ledgerKey{t.Key(), callID}
	if d, ok := l.inFlight[k]; ok {
		l.finished = append(l.finished, d)
		delete(l.inFlight, k)
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
	out := make([]core.Delegation, 0, len(l.inFlight))
	for _, d := range l.inFlight {
		out = append(out, d)
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
