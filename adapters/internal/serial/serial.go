// Package serial runs work one item at a time per key, in submission
// order, while different keys run in parallel. An adapter uses it so the
// socket or gateway reader never waits on a turn, yet the messages of one
// thread still reach the hub in the order they arrived.
package serial

import (
	"context"
	"sync"

	"github.com/neobot/neobot/core/warm"
)

// Queue runs the work of each key on a goroutine of its own while the key
// has work. The goroutines are kept warm between keys (core/warm): the
// work reaches the journal, whose calls grow a new goroutine's stack.
// The zero Queue is not usable; call [New], and [Queue.Close] when done.
type Queue struct {
	wg   *sync.WaitGroup
	pool *warm.Pool
	mu   sync.Mutex
	q    map[string][]func() // a present key means a drainer runs for it
	idle chan struct{}       // closed and replaced whenever q empties
}

// parked is how many drainer goroutines a Queue keeps between keys.
const parked = 16

// New returns a Queue whose work is counted in wg, so the owner's Close
// or Run can wait for every queued item to finish.
func New(wg *sync.WaitGroup) *Queue {
	return &Queue{wg: wg, pool: warm.New(parked), q: map[string][]func(){}, idle: make(chan struct{})}
}

// Close ends the goroutines the queue keeps parked, once the work running
// has finished. Work queued after Close still runs.
func (s *Queue) Close() { s.pool.Close() }

// WaitIdle waits until no key has work queued or running, or ctx ends.
func (s *Queue) WaitIdle(ctx context.Context) error {
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

// Do queues fn after the work already queued for key. It never blocks on
// that work.
func (s *Queue) Do(key string, fn func()) {
	s.mu.Lock()
	pending, running := s.q[key]
	s.q[key] = append(pending, fn)
	if !running {
		s.wg.Add(1)
	}
	s.mu.Unlock()
	if !running {
		s.pool.Go(func() { s.drain(key) })
	}
}

func (s *Queue) drain(key string) {
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
