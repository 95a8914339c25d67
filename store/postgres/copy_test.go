package postgres_test

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/memory"
	"github.com/neobot/neobot/core/usage"
	"github.com/neobot/neobot/store"
	"github.com/neobot/neobot/store/postgres"
	"github.com/neobot/neobot/store/storetest"
)

// TestCopyRoundTrip fills a bbolt file through its API, copies it into
// PostgreSQL, and reads everything back through the same API: what a
// running neobot would see after moving up.
func TestCopyRoundTrip(t *testing.T) {
	ctx := t.Context()
	clock := coretest.NewClock(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	from, err := store.Open(filepath.Join(t.TempDir(), "neobot.db"), store.Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer from.Close()
	to := open(t, postgres.Options{Now: clock.Now})
	fill(t, from, clock)

	read, err := from.CopyTo(ctx, to)
	if err != nil {
		t.Fatalf("CopyTo = %v", err)
	}
	want, err := from.Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if read != want || read.Threads != 3 || read.Entries != 6 || read.Pending != 2 || read.Memories != 3 || read.Ratings != 1 || read.Postures != 1 || read.MCPTokens != 1 || read.Files != 1 || read.SlackInstalls != 1 {
		t.Errorf("copied %+v, the file holds %+v", read, want)
	}

	for _, key := range []string{"a", "b", "c"} {
		th := thread(key)
		sf, ef, _ := from.LoadTranscript(ctx, th)
		st, et, err := to.LoadTranscript(ctx, th)
		if err != nil || !reflect.DeepEqual(sf, st) || !reflect.DeepEqual(ef, et) {
			t.Errorf("thread %s: copied transcript %+v %+v (%v), want %+v %+v", key, st, et, err, sf, ef)
		}
		af, _ := from.Archived(ctx, th)
		at, _ := to.Archived(ctx, th)
		if !reflect.DeepEqual(af, at) {
			t.Errorf("thread %s: copied archive %+v, want %+v", key, at, af)
		}
	}
	// The web's titles and files come along.
	if infos, err := to.Threads(ctx); err != nil || !slices.ContainsFunc(infos, func(i store.ThreadInfo) bool { return i.Title == "Deploy notes" }) {
		t.Errorf("copied threads = %+v, %v; want thread b titled \"Deploy notes\"", infos, err)
	}
	if f, err := to.File(ctx, "file-1"); err != nil || f.Owner != "alice" || f.Thread != thread("a").Key() || string(f.Data) != "\x89PNG" {
		t.Errorf("copied file = %+v, %v; want alice's cat.png in thread a", f, err)
	}
	// Numbering continues where the file left off.
	if seq, err := to.AppendEntries(ctx, thread("a"), []byte("next")); err != nil || seq != 5 {
		t.Errorf("append after the copy = %d, %v; want entry 5", seq, err)
	}
	for name, check := range map[string]func(b storetest.Backend) (any, error){
		"pending":     func(b storetest.Backend) (any, error) { return b.PendingInbound(ctx) },
		"delegations": func(b storetest.Backend) (any, error) { return b.Delegations(ctx) },
		"usage":       func(b storetest.Backend) (any, error) { return b.Usage(ctx, "") },
		"memories": func(b storetest.Backend) (any, error) {
			var ids []string
			err := b.ScanMemories(ctx, func(r memory.Record) error { ids = append(ids, r.ID+"="+r.Text); return nil })
			return ids, err
		},
		"gate by binding": func(b storetest.Backend) (any, error) { return b.GateBound(ctx, "bind-1") },
		"legacy gate":     func(b storetest.Backend) (any, error) { return b.LoadGate(ctx, "tok-legacy") },
		"ratings":         func(b storetest.Backend) (any, error) { return b.Ratings(ctx, time.Time{}) },
		"posture": func(b storetest.Backend) (any, error) {
			return b.ModelPosture(ctx, "m", "http://127.0.0.1:8000/v1/chat/completions")
		},
		"mcp token": func(b storetest.Backend) (any, error) {
			return b.(storetest.MCPTokens).MCPToken(ctx, "user/notes/slack.T1.U1")
		},
		"slack install": func(b storetest.Backend) (any, error) {
			return b.(storetest.SlackInstalls).SlackInstall(ctx, "team/T1")
		},
		"finished delegation": func(b storetest.Backend) (any, error) {
			return b.DelegationFor(ctx, thread("a"), "call-done")
		},
	} {
		f, ferr := check(from)
		g, gerr := check(to)
		if ferr != nil || gerr != nil || !reflect.DeepEqual(f, g) {
			t.Errorf("%s: copied %+v (%v), want %+v (%v)", name, g, gerr, f, ferr)
		}
	}
	// The completed message's dedupe key came along: a redelivery is not
	// journaled again. The pending ones are still pending.
	if fresh, err := to.JournalInbound(ctx, core.Inbound{Thread: thread("a"), EventID: "Ev-done"}); err != nil || fresh {
		t.Errorf("redelivered completed event: fresh %v, %v; want a duplicate", fresh, err)
	}

	// A second copy into the same database is refused, naming what is there.
	if _, err := from.CopyTo(ctx, to); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("copy into a non-empty database = %v, want it refused", err)
	}
}

func thread(id string) core.Thread {
	return core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: id}
}

// fill writes one of everything a store keeps.
func fill(t *testing.T, db *store.DB, clock *coretest.Clock) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.PutMCPToken(ctx, "user/notes/slack.T1.U1", []byte{1, 2, 3}))
	must(db.PutSlackInstall(ctx, "team/T1", []byte{4, 5, 6}))
	journal := func(th core.Thread, id string) {
		t.Helper()
		_, err := db.JournalInbound(ctx, core.Inbound{Thread: th, EventID: id, User: "U1", Text: "hi " + id})
		must(err)
	}
	a, b := thread("a"), thread("b")
	_, err := db.AppendEntries(ctx, a, []byte("one"), []byte("two"), []byte("three"))
	must(err)
	clock.Advance(time.Second)
	_, err = db.AppendEntries(ctx, a, []byte("four"))
	must(err)
	must(db.Compact(ctx, a, core.Summary{Text: "GOAL: x", UpTo: 2}))
	_, err = db.AppendEntries(ctx, b, []byte("b1"), []byte("b2"))
	must(err)
	journal(a, "Ev-done")
	must(db.CompleteInbound(ctx, a, "Ev-done"))
	journal(b, "Ev-2")
	journal(thread("c"), "Ev-1")
	must(db.CreateGate(ctx, core.Gate{Token: "tok-1", Binding: "bind-1", IntentID: "i1", NodeID: "n1", Thread: a, State: core.GatePending, Expires: clock.Now().Add(time.Hour), Options: []core.Option{{Label: "approve", Approves: true}, {Label: "deny"}}}))
	must(db.CreateGate(ctx, core.Gate{Token: "tok-legacy", IntentID: "i0", NodeID: "n0", Thread: a, State: core.GateApproved, DecidedBy: "U2"}))
	must(db.SaveDelegation(ctx, core.Delegation{Thread: a, CallID: "call-done", IntentID: "i0", Started: clock.Now()}))
	must(db.FinishDelegation(ctx, a, "call-done"))
	must(db.SaveDelegation(ctx, core.Delegation{Thread: b, CallID: "call-live", IntentID: "i1", Started: clock.Now()}))
	must(db.WriteMemories(ctx, []memory.Record{
		{ID: "m1", Kind: memory.KindFact, Text: "fact"},
		{ID: "m2", Kind: memory.KindProfile, Text: "profile"},
		{ID: "m3", Kind: memory.KindProcedure, Text: "procedure"},
	}, nil))
	must(db.AddUsage(ctx, []usage.Row{{Key: usage.Key{Day: "2026-05-01", Platform: "slack", Model: "m"}, Tokens: usage.Tokens{Calls: 2, Prompt: 10, Completion: 5}}}))
	must(db.SaveRating(ctx, core.Rating{Thread: a, Turn: "Ev-done", User: "U1", At: clock.Now(), Reason: "wrong", Question: "q", Answer: "a"}))
	must(db.SaveModelPosture(ctx, "m", "http://127.0.0.1:8000/v1/chat/completions", "yes"))
	must(db.SetThreadTitle(ctx, b, "Deploy notes"))
	must(db.PutFile(ctx, core.StoredFile{ID: "file-1", Owner: "alice", Thread: a.Key(), Name: "cat.png", MIMEType: "image/png", Data: []byte("\x89PNG"), At: clock.Now()}))
}
