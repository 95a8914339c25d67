package serial

import (
	"context"
	"slices"
	"sync"
	"testing"
)

func TestQueueOrderPerKey(t *testing.T) {
	var wg sync.WaitGroup
	q := New(&wg)
	var mu sync.Mutex
	got := map[string][]int{}
	release := make(chan struct{})
	for i := range 5 {
		for _, key := range []string{"a", "b"} {
			q.Do(key, func() {
				if i == 0 {
					<-release // the first item holds its key; Do must not block
				}
				mu.Lock()
				got[key] = append(got[key], i)
				mu.Unlock()
			})
		}
	}
	close(release)
	if err := q.WaitIdle(context.Background()); err != nil {
		t.Fatalf("WaitIdle = %v, want nil", err)
	}
	wg.Wait()
	want := []int{0, 1, 2, 3, 4}
	for _, key := range []string{"a", "b"} {
		if !slices.Equal(got[key], want) {
			t.Errorf("order for %s = %v, want %v", key, got[key], want)
		}
	}
}

func TestWaitIdleHonoursContext(t *testing.T) {
	var wg sync.WaitGroup
	q := New(&wg)
	block := make(chan struct{})
	q.Do("k", func() { <-block })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := q.WaitIdle(ctx); err != context.Canceled {
		t.Errorf("WaitIdle(cancelled) = %v, want context.Canceled", err)
	}
	close(block)
	wg.Wait()
	if err := q.WaitIdle(context.Background()); err != nil {
		t.Errorf("WaitIdle after drain = %v, want nil", err)
	}
}

// TestCloseKeepsWorkRunning: Close ends the queue's parked goroutines
// once its work is done; work queued after Close still runs, in order.
func TestCloseKeepsWorkRunning(t *testing.T) {
	var wg sync.WaitGroup
	q := New(&wg)
	var got []int
	for i := range 3 {
		q.Do("k", func() { got = append(got, i) })
	}
	wg.Wait()
	q.Close()
	for i := 3; i < 5; i++ {
		q.Do("k", func() { got = append(got, i) })
	}
	wg.Wait()
	if want := []int{0, 1, 2, 3, 4}; !slices.Equal(got, want) {
		t.Errorf("ran %v, want %v", got, want)
	}
	q.Close()
}
