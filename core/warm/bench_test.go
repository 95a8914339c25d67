package warm

import (
	"sync"
	"testing"
)

// deep uses about 32 KB of stack, as a turn's TLS, JSON and bbolt calls do.
//
//go:noinline
func deep(n int) byte {
	var buf [1024]byte
	buf[n%len(buf)] = byte(n)
	if n == 0 {
		return buf[0]
	}
	return deep(n-1) + buf[n%len(buf)]
}

var sink byte

// BenchmarkGoDeepStack: a function that grows its stack to 32 KB, run on a
// new goroutine each time (go) and on a pool's.
func BenchmarkGoDeepStack(b *testing.B) {
	run := func(b *testing.B, spawn func(func())) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for b.Loop() {
			wg.Add(1)
			spawn(func() {
				defer wg.Done()
				v := deep(30)
				mu.Lock()
				sink += v
				mu.Unlock()
			})
			wg.Wait()
		}
	}
	b.Run("go", func(b *testing.B) { run(b, func(f func()) { go f() }) })
	b.Run("pool", func(b *testing.B) {
		p := New(4)
		defer p.Close()
		run(b, p.Go)
	})
}
