// Package perthread keeps one value per conversation thread: what a chat
// adapter tracks of a turn in progress (its step board, say) between the
// calls that build it, made on first use and taken when the turn is done.
package perthread

import "sync"

// Map holds one *T per thread key. Its zero value is ready to use and
// makes new values with new(T); it is safe for concurrent use. The values
// themselves are the caller's to guard.
type Map[T any] struct {
	// New makes a thread's value on first use; nil uses new(T).
	New func() *T

	mu sync.Mutex
	m  map[string]*T
}

// Get returns key's value, made on first use.
func (m *Map[T]) Get(key string) *T {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v := m.m[key]; v != nil {
		return v
	}
	if m.m == nil {
		m.m = map[string]*T{}
	}
	v := new(T)
	if m.New != nil {
		v = m.New()
	}
	m.m[key] = v
	return v
}

// Peek returns key's value, or nil when it has none.
func (m *Map[T]) Peek(key string) *T {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.m[key]
}

// Take removes key's value and returns it, or nil when it had none.
func (m *Map[T]) Take(key string) *T {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := m.m[key]
	delete(m.m, key)
	return v
}
