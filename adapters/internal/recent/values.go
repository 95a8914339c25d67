package recent

import (
	"container/list"
	"sync"
)

// Values maps the last n keys used to a value each, the least recently
// used dropped first: what an adapter learned of a channel, so a chatty
// channel costs one API call, not one per message. It is safe for
// concurrent use.
type Values[V any] struct {
	mu    sync.Mutex
	n     int
	order *list.List // front = newest; values are *entry[V]
	index map[string]*list.Element
}

type entry[V any] struct {
	key   string
	value V
}

// NewValues returns a Values holding at most n keys.
func NewValues[V any](n int) *Values[V] {
	return &Values[V]{n: n, order: list.New(), index: map[string]*list.Element{}}
}

// Get returns key's value and whether it is held.
func (c *Values[V]) Get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.index[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*entry[V]).value, true
}

// Put sets key's value, dropping the least recently used key past n.
func (c *Values[V]) Put(key string, value V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.index[key]; ok {
		e.Value.(*entry[V]).value = value
		c.order.MoveToFront(e)
		return
	}
	c.index[key] = c.order.PushFront(&entry[V]{key, value})
	if c.order.Len() > c.n {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.index, old.Value.(*entry[V]).key)
	}
}

// Drop forgets key: the next Get misses.
func (c *Values[V]) Drop(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.index[key]; ok {
		c.order.Remove(e)
		delete(c.index, key)
	}
}
