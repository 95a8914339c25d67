package work

import (
	"context"
	"slices"
	"sync"
	"testing"
)

func TestRunEndWaitsForWorkInOrder(t *testing.T) {
	g := New()
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var order []string
	note := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, s)
	}
	end := g.Run(ctx, func() { note("closer") })
	if g.Stopping() {
		t.Fatal("Stopping before ctx ended, want false")
	}
	release := make(chan struct{})
	g.Go(func() { <-release; note("goroutine") })
	g.Do("t1", func() { <-release; note("queued") })
	cancel()
	<-g.stopping // ctx's end reaches the Group on a goroutine of its own
	close(release)
	end()
	mu.Lock()
	defer mu.Unlock()
	if order[0] != "closer" || !slices.Contains(order, "goroutine") || !slices.Contains(order, "queued") || len(order) != 3 {
		t.Errorf("order = %v, want the closer first, then the goroutine and the queued item both done", order)
	}
}

func TestEndStopsWithoutCtx(t *testing.T) {
	g := New()
	end := g.Run(context.Background())
	end()
	if !g.Stopping() {
		t.Error("Stopping after Run's end = false, want true")
	}
}

func TestStop(t *testing.T) {
	g := New()
	g.Stop()
	g.Stop() // twice is fine
	if !g.Stopping() {
		t.Error("Stopping after Stop = false, want true")
	}
}
