package memory

import (
	"sync"
	"testing"
)

func TestIDLocksIndependentIDsDoNotWait(t *testing.T) {
	var l idLocks
	unlockA := l.lock([]string{"a"})
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.lock([]string{"b", "c"})() // must not wait for "a"
	}()
	<-done
	unlockA()
	if n := len(l.locks); n != 0 {
		t.Errorf("idLocks holds %d entries after every unlock, want 0", n)
	}
}

func TestIDLocksSerializeSharedIDs(t *testing.T) {
	var l idLocks
	var mu sync.Mutex
	inside := map[string]int{}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			ids := []string{"shared", string(rune('a' + i%5)), "shared"}
			defer l.lock(ids)()
			mu.Lock()
			inside["shared"]++
			if inside["shared"] > 1 {
				t.Errorf("two writers hold the lock on %q at once", "shared")
			}
			mu.Unlock()
			mu.Lock()
			inside["shared"]--
			mu.Unlock()
		})
	}
	wg.Wait()
	if n := len(l.locks); n != 0 {
		t.Errorf("idLocks holds %d entries after every unlock, want 0", n)
	}
}
