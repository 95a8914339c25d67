package postgres

import (
	"context"
	"sync"
)

// later commits writes nobody waits for, in order, one merged write at a
// time: those queued while one commits are merged into the next (a
// memory write-back's records, messages marked done). Each merged write
// is one statement in a batch of other writes (see group), so it costs
// neither a round trip nor a commit of its own. A crash before it
// commits loses it; what each kind loses is said where it is queued.
type later[W any] struct {
	write func(ctx context.Context, w *W) error
	// failed is told of a write that failed: it is not tried again.
	failed func(w *W, err error)

	mu      sync.Mutex
	pending *laterWrite[W] // queued since the running write began
	running *laterWrite[W] // being committed; nil when no writer runs
}

// laterWrite is writes merged into one, and done, closed once it
// committed or failed.
type laterWrite[W any] struct {
	w    W
	done chan struct{}
}

// queue merges a write into the pending one (add changes it), and
// starts the writer when none runs.
func (l *later[W]) queue(add func(into *W)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending == nil {
		l.pending = &laterWrite[W]{done: make(chan struct{})}
	}
	add(&l.pending.w)
	if l.running == nil {
		l.running, l.pending = l.pending, nil
		go l.run(l.running)
	}
}

// run commits w, then whatever was queued meanwhile, until none is left.
func (l *later[W]) run(w *laterWrite[W]) {
	for w != nil {
		ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		if err := l.write(ctx, &w.w); err != nil {
			l.failed(&w.w, err)
		}
		cancel()
		close(w.done)
		l.mu.Lock()
		l.running, l.pending = l.pending, nil
		w = l.running
		l.mu.Unlock()
	}
}

// flush waits until the writes queued so far have committed (or failed).
func (l *later[W]) flush(ctx context.Context) error {
	l.mu.Lock()
	last := l.pending
	if last == nil {
		last = l.running
	}
	l.mu.Unlock()
	if last == nil {
		return nil
	}
	select {
	case <-last.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// each calls fn with the writes queued or committing, under the lock:
// fn must not block.
func (l *later[W]) each(fn func(w *W)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, lw := range []*laterWrite[W]{l.running, l.pending} {
		if lw != nil {
			fn(&lw.w)
		}
	}
}
