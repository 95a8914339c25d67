package postgres

import "sync"

// coalesced runs queued items in batches, one batch at a time: items
// queued while a batch runs go together in the next one. A goroutine
// runs the batches while any are queued, then ends. Claims and journal
// reads use it: a statement for many threads costs little more than one
// for a single thread.
type coalesced[T any] struct {
	run  func(batch []T) // runs one batch; each item learns its own result
	idle func()          // optional: after a batch, when none is queued

	mu      sync.Mutex
	queue   []T
	running bool
}

// add queues item for the next batch.
func (c *coalesced[T]) add(item T) {
	c.mu.Lock()
	c.queue = append(c.queue, item)
	start := !c.running
	c.running = true
	c.mu.Unlock()
	if start {
		go c.drain()
	}
}

// drain runs batches until none is queued.
func (c *coalesced[T]) drain() {
	for {
		c.mu.Lock()
		batch := c.queue
		c.queue = nil
		if len(batch) == 0 {
			c.running = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		c.run(batch)
		if c.idle != nil {
			c.mu.Lock()
			idle := len(c.queue) == 0
			c.mu.Unlock()
			if idle {
				c.idle()
			}
		}
	}
}
