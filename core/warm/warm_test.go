package warm

import (
	"runtime"
	"sync"
	"testing"
)

// parked waits until n of p's goroutines are parked.
func parked(t *testing.T, p *Pool, n int) {
	t.Helper()
	for {
		p.mu.Lock()
		idle := len(p.idle)
		p.mu.Unlock()
		if idle == n {
			return
		}
		runtime.Gosched() // waiting for the goroutine to park, not for a time
	}
}

// TestGoReusesAParkedGoroutine: a function handed to a pool whose
// goroutine is parked runs on that goroutine; none is started for it.
func TestGoReusesAParkedGoroutine(t *testing.T) {
	p := New(4)
	defer p.Close()
	for i := range 5 {
		done := make(chan struct{})
		p.Go(func() { close(done) })
		<-done
		parked(t, p, 1)
		if got := p.started.Load(); got != 1 {
			t.Fatalf("after %d calls in a row, %d goroutines started; want the first one reused", i+1, got)
		}
	}
}

// TestGoRunsAlongsideBusyGoroutines: with every goroutine busy, Go starts
// another, so functions never wait for each other.
func TestGoRunsAlongsideBusyGoroutines(t *testing.T) {
	p := New(1)
	var all sync.WaitGroup
	all.Add(3)
	release := make(chan struct{})
	for range 3 {
		p.Go(func() {
			all.Done()
			<-release // each holds its goroutine until all three run
		})
	}
	all.Wait()
	if got := p.started.Load(); got != 3 {
		t.Errorf("%d goroutines started for 3 functions running at once; want 3", got)
	}
	close(release)
	parked(t, p, 1) // maxIdle 1: the other two end
	p.Close()
	if len(p.idle) != 0 {
		t.Errorf("after Close, %d goroutines parked; want none", len(p.idle))
	}
}

// TestCloseWaitsForRunningFunctions: Close returns only once the running
// functions have; a function handed over after Close still runs.
func TestCloseWaitsForRunningFunctions(t *testing.T) {
	p := New(2)
	running, release := make(chan struct{}), make(chan struct{})
	finished := false
	p.Go(func() {
		close(running)
		<-release
		finished = true
	})
	<-running
	closed := make(chan struct{})
	go func() {
		p.Close()
		close(closed)
	}()
	select {
	case <-closed:
		t.Fatal("Close returned while a function was still running")
	default:
	}
	close(release)
	<-closed
	if !finished {
		t.Error("Close returned before the running function did")
	}
	ran := make(chan struct{})
	p.Go(func() { close(ran) })
	<-ran
	p.Close()
}
