package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/store"
)

// BenchmarkTinyTurnBytes writes what a tiny turn in a new thread writes
// (its journal record, the user's message and the answer as transcript
// entries of a realistic size, the completion) and reports the file's
// growth per turn once it has settled: the cost of a channel where every
// mention starts a thread.
func BenchmarkTinyTurnBytes(b *testing.B) {
	const turns = 20000
	path := filepath.Join(b.TempDir(), "size.db")
	db, err := store.Open(path, store.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	user := []byte(`{"k":"user","m":{"role":"user","content":"<@U0BOT> what is the status of the deploy?"},"event":"Ev0123456789","user":"U0123456789","at":"2026-11-25T16:00:00.123456789Z"}`)
	answer := []byte(`{"k":"answer","m":{"role":"assistant","content":"` + strings.Repeat("The deploy finished. ", 5) + `"},"event":"Ev0123456789","at":"2026-11-25T16:00:00.223456789Z"}`)
	size := func() int64 {
		info, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		return info.Size()
	}
	var half int64
	for i := range turns {
		if i == turns/2 {
			half = size()
		}
		th := core.Thread{Platform: "slack", Workspace: "T0123456", Channel: "C0123456", ID: fmt.Sprintf("17000%05d.%06d", i, i)}
		in := core.Inbound{Thread: th, User: "U0123456789", Text: "what is the status of the deploy?", EventID: fmt.Sprint("Ev", i)}
		if _, err := db.JournalInbound(ctx, in); err != nil {
			b.Fatal(err)
		}
		if _, err := db.AppendEntries(ctx, th, user); err != nil {
			b.Fatal(err)
		}
		if _, err := db.AppendEntries(ctx, th, answer); err != nil {
			b.Fatal(err)
		}
		if err := db.CompleteInbound(ctx, th, in.EventID); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(size()-half)/float64(turns/2)/1024, "KB/turn")
	b.ReportMetric(float64(size())/float64(turns)/1024, "file-KB/turn")
}
