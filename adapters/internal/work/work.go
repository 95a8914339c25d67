// Package work is what a chat adapter's Run leaves running and must wait
// for, the same on every platform: the goroutines that handle events and
// clicks off the socket or gateway reader, the per-thread queues toward
// the hub (serial), and the signal that Run's context has ended (a turn
// cancelled then is a shutdown, not a stop).
package work

import (
	"context"
	"sync"

	"github.com/neobot/neobot/adapters/internal/serial"
)

// Group is one adapter's work. The zero Group is not usable; call [New].
type Group struct {
	wg       sync.WaitGroup
	queues   *serial.Queue
	stopping chan struct{} // closed when Run's context ends
	once     sync.Once
}

// New returns a Group with nothing running.
func New() *Group {
	g := &Group{stopping: make(chan struct{})}
	g.queues = serial.New(&g.wg)
	return g
}

// Go runs fn on a goroutine of its own, which Run's end waits for.
func (g *Group) Go(fn func()) { g.wg.Go(fn) }

// Do queues fn after the work already queued for key (a thread, a
// channel): one at a time per key, in order, never blocking the caller.
func (g *Group) Do(key string, fn func()) { g.queues.Do(key, fn) }

// WaitIdle waits until no key has work queued or running, or ctx ends.
func (g *Group) WaitIdle(ctx context.Context) error { return g.queues.WaitIdle(ctx) }

// Stopping reports whether Run's context has ended.
func (g *Group) Stopping() bool {
	select {
	case <-g.stopping:
		return true
	default:
		return false
	}
}

// Run starts an adapter's Run, which defers the function it returns.
// Stopping is true from ctx's end, or from that function's call if Run
// returns first. The function then calls closers, in order (the status
// lines, whose timers must schedule nothing more: turns outlive Run),
// waits for every goroutine and queued item, and ends the queues' parked
// goroutines.
func (g *Group) Run(ctx context.Context, closers ...func()) (end func()) {
	stop := context.AfterFunc(ctx, g.Stop)
	return func() {
		g.Stop()
		stop()
		for _, c := range closers {
			c()
		}
		g.wg.Wait()
		g.queues.Close()
	}
}

// Stop makes Stopping true, as the end of Run's context does.
func (g *Group) Stop() { g.once.Do(func() { close(g.stopping) }) }
