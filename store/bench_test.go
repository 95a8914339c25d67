package store_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/memory"
	"github.com/neobot/neobot/store"
	"github.com/neobot/neobot/store/storetest"
)

// BenchmarkAppend appends one 256-byte entry per call, fsync on, from 1
// and from 64 concurrent writers (each on its own thread), and reports
// acknowledged entries per second.
func BenchmarkAppend(b *testing.B) {
	for _, writers := range []int{1, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			db := openTemp(b, store.Options{Writers: writers})
			payload := bytes.Repeat([]byte("x"), 256)
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					th := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: fmt.Sprintf("w%d", w)}
					for next.Add(1) <= int64(b.N) {
						if _, err := db.AppendEntries(context.Background(), th, payload); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "entries/s")
		})
	}
}

// BenchmarkOpen100kThreads opens a file holding 100k threads (two entries
// each) and answers ThreadKnown once.
func BenchmarkOpen100kThreads(b *testing.B) {
	const threads = 100_000
	path := filepath.Join(b.TempDir(), "big.db")
	db, err := store.Open(path, store.Options{NoSync: true}) // setup only
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for i := range threads {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			th := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: fmt.Sprintf("%d.%06d", 1700000000+i, i)}
			if _, err := db.AppendEntries(ctx, th, []byte("hello"), []byte("world")); err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
	db.Close()
	probe := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: fmt.Sprintf("%d.%06d", 1700000000+4242, 4242)}
	b.ResetTimer()
	for b.Loop() {
		db, err := store.Open(path, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if ok, err := db.ThreadKnown(ctx, probe); !ok || err != nil {
			b.Fatalf("ThreadKnown = %v, %v", ok, err)
		}
		db.Close()
	}
}

// BenchmarkCortexOpen100k rebuilds the memory index from a file holding
// 100k memory records: what starting neobot costs for memory.
func BenchmarkCortexOpen100k(b *testing.B) {
	const n = 100_000
	path := filepath.Join(b.TempDir(), "mem.db")
	db, err := store.Open(path, store.Options{NoSync: true}) // setup only
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	words := []string{"deploy", "wallet", "billing", "staging", "release", "alice", "bob", "friday", "cluster", "invoice", "bridge", "fee"}
	recs := make([]memory.Record, 0, 1000)
	for i := range n {
		text := fmt.Sprintf("%s %s %s %s record %d INC-%d", words[i%12], words[(i/12)%12], words[(i/144)%12], words[(i*7)%12], i, i)
		recs = append(recs, memory.Record{ID: fmt.Sprintf("m%06d", i), Kind: memory.KindFact, Text: text,
			Scope: memory.Scope{Platform: "slack", Workspace: "T1", User: fmt.Sprintf("U%d", i%50)}})
		if len(recs) == cap(recs) {
			if err := db.WriteMemories(ctx, recs, nil); err != nil {
				b.Fatal(err)
			}
			recs = recs[:0]
		}
	}
	db.Close()
	b.ResetTimer()
	for b.Loop() {
		db, err := store.Open(path, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		c, err := memory.New(ctx, memory.Options{Store: db})
		if err != nil || c.Len() != n {
			b.Fatalf("memory.New = %v, %d records", err, c.Len())
		}
		db.Close()
	}
}

// BenchmarkJournal is storetest.BenchJournal on a bbolt file, fsync on.
func BenchmarkJournal(b *testing.B) {
	for _, writers := range []int{1, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			storetest.BenchJournal(b, openTemp(b, store.Options{Writers: writers}), writers)
		})
	}
}
