// Package warm runs functions on goroutines that are kept, parked, when
// their function returns, so the next function starts on a stack already
// grown.
//
// A new goroutine starts on a small stack. Each time it runs out, the
// runtime copies the stack to one twice the size and fixes up every frame
// on it. A reply's turn, its status call and its intake each ran on a new
// goroutine and grew it to tens of kilobytes (TLS, JSON, bbolt): some 30
// us of the bot's 900 us of CPU per reply went to those copies
// (docs/benchmarks.md, "The reply path, seventh pass"). A parked
// goroutine keeps its stack until the garbage collector finds it mostly
// unused and halves it, so in a steady stream of replies the copies all
// but stop.
package warm

import (
	"sync"
	"sync/atomic"
)

// Pool runs functions on goroutines it keeps for the next function. Its
// zero value is not usable; build one with New. Close ends its goroutines.
type Pool struct {
	maxIdle int
	started atomic.Int64 // goroutines started, for tests
	wg      sync.WaitGroup

	mu     sync.Mutex
	idle   []chan func() // each parked goroutine's own hand-off; nil means end
	closed bool
}

// New returns a Pool that keeps at most maxIdle goroutines parked (at
// least 1); a goroutine finding that many parked ends instead.
func New(maxIdle int) *Pool {
	return &Pool{maxIdle: max(maxIdle, 1)}
}

// Go runs f on a parked goroutine, or on a new one when none is parked.
// It does not wait for f. After Close, f runs on a goroutine of its own,
// which Close does not wait for.
func (p *Pool) Go(f func()) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1] // the most recently parked: its stack is the warmest
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		c <- f // buffered: the goroutine may not be receiving yet
		return
	}
	closed := p.closed
	if !closed {
		p.wg.Add(1)
	}
	p.mu.Unlock()
	if closed {
		go f()
		return
	}
	p.started.Add(1)
	go p.run(f)
}

// run runs f, then each function handed to it while parked, until the
// pool has enough goroutines parked or is closed.
func (p *Pool) run(f func()) {
	defer p.wg.Done()
	c := make(chan func(), 1)
	for f != nil {
		f()
		p.mu.Lock()
		if p.closed || len(p.idle) >= p.maxIdle {
			p.mu.Unlock()
			return
		}
		p.idle = append(p.idle, c)
		p.mu.Unlock()
		f = <-c
	}
}

// Close ends the parked goroutines, then waits for the functions still
// running to return; their goroutines end then too. Close may be called
// more than once.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, c := range idle {
		c <- nil
	}
	p.wg.Wait()
}
