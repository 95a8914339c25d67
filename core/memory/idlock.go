package memory

import (
	"slices"
	"sync"
)

// idLocks serializes writes that touch the same record IDs, so the store
// and the in-memory index see them in the same order, while writes about
// different records (every new fact, every turn excerpt) run in parallel
// and share the store's batched fsync.
type idLocks struct {
	mu    sync.Mutex
	locks map[string]*idLock
}

type idLock struct {
	sync.Mutex
	refs int
}

// lock locks every ID (sorted, so two writers never wait on each other in
// a cycle) and returns the function that unlocks them.
func (l *idLocks) lock(ids []string) (unlock func()) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	held := make([]*idLock, len(ids))
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]*idLock{}
	}
	for i, id := range ids {
		k := l.locks[id]
		if k == nil {
			k = &idLock{}
			l.locks[id] = k
		}
		k.refs++
		held[i] = k
	}
	l.mu.Unlock()
	for _, k := range held {
		k.Lock()
	}
	return func() {
		for _, k := range held {
			k.Unlock()
		}
		l.mu.Lock()
		for i, k := range held {
			if k.refs--; k.refs == 0 {
				delete(l.locks, ids[i])
			}
		}
		l.mu.Unlock()
	}
}
