package perthread

import (
	"sync"
	"testing"
)

type board struct{ steps map[string]int }

func TestMap(t *testing.T) {
	var m Map[board]
	if m.Peek("a") != nil || m.Take("a") != nil {
		t.Fatal("an empty map has a value")
	}
	a := m.Get("a")
	if m.Get("a") != a || m.Peek("a") != a {
		t.Fatal("Get made a second value for one thread")
	}
	if m.Get("b") == a {
		t.Fatal("two threads share a value")
	}
	if m.Take("a") != a || m.Peek("a") != nil || m.Get("a") == a {
		t.Fatal("Take did not remove the thread's value")
	}

	made := Map[board]{New: func() *board { return &board{steps: map[string]int{}} }}
	if made.Get("x").steps == nil {
		t.Fatal("Get did not make the value with New")
	}
}

// TestMapConcurrent: threads racing for one key all get its one value
// (run with -race).
func TestMapConcurrent(t *testing.T) {
	var m Map[board]
	var wg sync.WaitGroup
	got := make([]*board, 8)
	for i := range got {
		wg.Go(func() { got[i] = m.Get("k") })
	}
	wg.Wait()
	for _, b := range got {
		if b != got[0] {
			t.Fatal("concurrent Gets made two values for one thread")
		}
	}
}
