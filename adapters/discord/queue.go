package discord

import (
	"container/list"
	"context"
	"sync"
)

// serial runs work for one key at a time, in submission order, on a
// goroutine that exists only while the key has work; keys run in parallel.
// It keeps the gateway reader from ever waiting on a turn while messages of
// one thread still reach the hub in order.
type serial struct {
	wg   *sync.WaitGroup
	mu   sync.Mutex
	q    map[string][]func() // a present key means a drainer runs for it
	idle chan struct{}       // closed and replaced whenever q empties
}

func newSerial(wg *sync.WaitGroup) *serial {
	return &serial{wg: wg, q: map[string][]func(){}, idle: make(chan struct{})}
}

// waitIdle waits until no key has work queued or running.
func (s *serial) waitIdle(ctx context.Context) error {
	for {
		s.mu.Lock()
		n, ch := len(s.q), s.idle
		s.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// do queues fn after the work already queued for key.
func (s *serial) do(key string, fn func()) {
	s.mu.Lock()
	pending, running := s.q[key]
	s.q[key] = append(pending, fn)
	if !running {
		s.wg.Add(1)
	}
	s.mu.Unlock()
	if !running {
		go s.drain(key)
	}
}

func (s *serial) drain(key string) {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		fns := s.q[key]
		if len(fns) == 0 {
			delete(s.q, key)
			if len(s.q) == 0 {
				close(s.idle)
				s.idle = make(chan struct{})
			}
			s.mu.Unlock()
			return
		}
		fn := fns[0]
		fns[0] = nil
		s.q[key] = fns[1:]
		s.mu.Unlock()
		fn()
	}
}

// recent remembers the last n keys seen: the fast path of event
// deduplication (the hub's journal is the durable one).
type recent struct {
	mu    sync.Mutex
	n     int
	order *list.List // front = newest
	index map[string]*list.Element
}

func newRecent(n int) *recent {
	return &recent{n: n, order: list.New(), index: map[string]*list.Element{}}
}

// first records key and reports whether it had not been seen.
func (r *recent) first(key string) bool {
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

// forget drops key, so a later delivery of it is handled again.
func (r *recent) forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.index[key]; ok {
		r.order.Remove(e)
		delete(r.index, key)
	}
}

// channelCache remembers the kind of the last n guild channels looked up,
// so a chatty channel costs one REST call, not one per message.
type channelCache struct {
	mu    sync.Mutex
	n     int
	order *list.List // front = newest; values are channel IDs
	index map[string]*list.Element
	info  map[string]channelInfo
}

func newChannelCache(n int) *channelCache {
	return &channelCache{n: n, order: list.New(), index: map[string]*list.Element{}, info: map[string]channelInfo{}}
}

func (c *channelCache) get(id string) (channelInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.index[id]
	if !ok {
		return channelInfo{}, false
	}
	c.order.MoveToFront(e)
	return c.info[id], true
}

func (c *channelCache) put(id string, info channelInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.index[id]; ok {
		c.order.MoveToFront(e)
	} else {
		c.index[id] = c.order.PushFront(id)
	}
	c.info[id] = info
	if c.order.Len() > c.n {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.index, old.Value.(string))
		delete(c.info, old.Value.(string))
	}
}
