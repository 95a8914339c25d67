// Package recent remembers the last n keys seen: the fast path of an
// adapter's event deduplication (the hub's journal is the durable one).
package recent

import (
	"container/list"
	"sync"
)

// Keys is a bounded set of recently seen keys, oldest dropped first. It is
// safe for concurrent use.
type Keys struct {
	mu    sync.Mutex
	n     int
	order *list.List // front = newest
	index map[string]*list.Element
}

// New returns a Keys remembering at most n keys.
func New(n int) *Keys {
	return &Keys{n: n, order: list.New(), index: map[string]*list.Element{}}
}

// First records key and reports whether it had not been seen.
func (r *Keys) First(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.index[key]; ok {
		r.order.MoveToFront(e)
		return false
	}
	r.index[key] = r.order.PushFront(key)
	if r.order.Len() > r.n {
		old := r.order.Back()
		r.order.Remove(old)
		delete(r.index, old.Value.(string))
	}
	return true
}

// Forget drops key, so a later delivery of it is handled again.
func (r *Keys) Forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.index[key]; ok {
		r.order.Remove(e)
		delete(r.index, key)
	}
}
