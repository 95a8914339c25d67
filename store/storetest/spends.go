package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
)

// SpendBackend is the spend ledger and the calls log.
type SpendBackend interface {
	core.SpendLedger
	core.CallLog
}

func spend(intent string, n int, th core.Thread, amount string, at time.Time) core.Spend {
	return core.Spend{
		ID: fmt.Sprintf("%s/%d", intent, n), IntentID: intent, Thread: th, Requester: "U1",
		Intent: "send 5 USDC to alice", Tool: "mcp://wallet/transfer", Server: "wallet", Name: "transfer",
		Args: json.RawMessage(`{"amount":` + amount + `}`), Amount: amount, Currency: "USDC",
		Day: at.UTC().Format(time.DateOnly), State: core.SpendPlanned, Created: at,
	}
}

func testSpends(t *testing.T, b SpendBackend) {
	ctx := context.Background()
	th := thread("s1")
	plan := []core.Spend{spend("x1", 1, th, "5", epoch), spend("x1", 2, th, "7", epoch)}
	got, err := b.PlanSpends(ctx, "x1", plan)
	if err != nil || len(got) != 2 {
		t.Fatalf("PlanSpends = %d calls, %v; want 2", len(got), err)
	}
	// A resumed intent gets its first plan back, whatever it planned now.
	again, err := b.PlanSpends(ctx, "x1", []core.Spend{spend("x1", 1, th, "999", epoch)})
	if err != nil || len(again) != 2 || again[0].Amount != "5" || again[1].ID != "x1/2" {
		t.Fatalf("PlanSpends again = %+v, %v; want the first plan", again, err)
	}
	if got, err := b.PlanSpends(ctx, "x1", nil); err != nil || len(got) != 2 || got[0].ID != "x1/1" {
		t.Errorf("PlanSpends(x1, nil) = %+v, %v; want the recorded plan", got, err)
	}
	if got, err := b.PlanSpends(ctx, "x9", nil); err != nil || len(got) != 0 {
		t.Errorf("PlanSpends(x9, nil) = %+v, %v; want nothing", got, err)
	}
	if _, err := b.PlanSpends(ctx, "x2", []core.Spend{spend("x1", 1, th, "1", epoch)}); err == nil {
		t.Errorf("PlanSpends(x2) with a call of x1 = nil, want an error")
	}

	up, err := b.UpdateSpend(ctx, "x1/1", func(s *core.Spend, day []core.Spend) error {
		if len(day) != 1 || day[0].ID != "x1/2" {
			return fmt.Errorf("same day = %+v, want x1/2 only", day)
		}
		s.State, s.DecidedBy, s.ID = core.SpendCalling, "U2", "forged"
		return nil
	})
	if err != nil || up.State != core.SpendCalling || up.ID != "x1/1" {
		t.Fatalf("UpdateSpend = %+v, %v; want calling x1/1", up, err)
	}
	refused := errors.New("over the limit")
	if _, err := b.UpdateSpend(ctx, "x1/2", func(s *core.Spend, _ []core.Spend) error {
		s.State = core.SpendCompleted
		return refused
	}); !errors.Is(err, refused) {
		t.Errorf("UpdateSpend with fn failing = %v, want fn's error", err)
	}
	if _, err := b.UpdateSpend(ctx, "nope/1", func(*core.Spend, []core.Spend) error { return nil }); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("UpdateSpend(unknown) = %v, want ErrNotFound", err)
	}

	// Another workspace's day is not seen.
	other := core.Thread{Platform: "slack", Workspace: "T2", Channel: "C1", ID: "1.0"}
	if _, err := b.PlanSpends(ctx, "x3", []core.Spend{spend("x3", 1, other, "1", epoch.Add(time.Minute))}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.UpdateSpend(ctx, "x3/1", func(_ *core.Spend, day []core.Spend) error {
		if len(day) != 0 {
			return fmt.Errorf("same day in T2 = %d calls, want none", len(day))
		}
		return nil
	}); err != nil {
		t.Error(err)
	}

	all, err := b.SpendsSince(ctx, epoch)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range all {
		ids = append(ids, s.ID+":"+string(s.State))
	}
	if fmt.Sprint(ids) != "[x1/1:calling x1/2:planned x3/1:planned]" {
		t.Errorf("SpendsSince = %v", ids)
	}
	if late, _ := b.SpendsSince(ctx, epoch.Add(time.Second)); len(late) != 1 || late[0].ID != "x3/1" {
		t.Errorf("SpendsSince(later) = %+v, want x3/1 only", late)
	}
}

// testSpendDayLimit runs many approvals of one workspace-day at once: a
// day limit checked in UpdateSpend's fn must hold under concurrency.
func testSpendDayLimit(t *testing.T, b SpendBackend) {
	ctx := context.Background()
	th := thread("limit")
	const calls, limit = 12, 5
	for i := range calls {
		id := "d" + strconv.Itoa(i)
		if _, err := b.PlanSpends(ctx, id, []core.Spend{spend(id, 1, th, "1", epoch)}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	approved := 0
	for i := range calls {
		wg.Go(func() {
			_, err := b.UpdateSpend(ctx, "d"+strconv.Itoa(i)+"/1", func(s *core.Spend, day []core.Spend) error {
				n := 0
				for _, o := range day {
					if o.State.Counts() {
						n++
					}
				}
				if n >= limit {
					return errors.New("limit")
				}
				s.State = core.SpendCalling
				return nil
			})
			if err == nil {
				mu.Lock()
				approved++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if approved != limit {
		t.Errorf("approved %d calls concurrently, want the limit %d", approved, limit)
	}
	// Appended at once (on PostgreSQL from several connections, as
	// several instances do), the chain still has one order.
	verifyChain(t, b, calls+limit)
}

// testSpendOneTransition moves one call from asked to calling from many
// goroutines at once, as overlapping runs of one turn do after one click:
// exactly one UpdateSpend may make the move, and every other must see it
// made. The executor makes the call only in the run whose move it was.
func testSpendOneTransition(t *testing.T, b SpendBackend) {
	ctx := context.Background()
	asked := spend("o1", 1, thread("overlap"), "5", epoch)
	asked.State = core.SpendAsked
	if _, err := b.PlanSpends(ctx, "o1", []core.Spend{asked}); err != nil {
		t.Fatal(err)
	}
	moved := errors.New("moved on")
	const runs = 8
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		mine  int
		after []core.SpendState
	)
	for i := range runs {
		wg.Go(func() {
			got, err := b.UpdateSpend(ctx, "o1/1", func(s *core.Spend, _ []core.Spend) error {
				if s.State != core.SpendAsked {
					return moved
				}
				s.State, s.DecidedBy = core.SpendCalling, "U"+strconv.Itoa(i)
				return nil
			})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				mine++
			case !errors.Is(err, moved):
				t.Errorf("UpdateSpend = %v", err)
			}
			after = append(after, got.State)
		})
	}
	wg.Wait()
	if mine != 1 {
		t.Errorf("%d of %d concurrent updates moved the call from asked to calling, want exactly 1", mine, runs)
	}
	for _, st := range after {
		if st != core.SpendCalling {
			t.Errorf("an update returned the call %s, want calling (made by one, seen by the rest)", st)
		}
	}
	verifyChain(t, b, 2) // asked, then calling once: the refused moves wrote nothing
}

// testSpendExact: the ledger keeps a call's amount as the exact decimal
// string it was given, the requester's message, and a failure known to
// have done nothing, as written.
func testSpendExact(t *testing.T, b SpendBackend) {
	ctx := context.Background()
	const dust, big = "0.000000000000000001", "123456789012345678901234567890.000000001"
	plan := []core.Spend{spend("e1", 1, thread("exact"), dust, epoch), spend("e1", 2, thread("exact"), big, epoch)}
	plan[0].Message = "send a little \u202e to alice\nplease"
	if _, err := b.PlanSpends(ctx, "e1", plan); err != nil {
		t.Fatal(err)
	}
	if _, err := b.UpdateSpend(ctx, "e1/2", func(s *core.Spend, day []core.Spend) error {
		if len(day) != 1 || day[0].Amount != dust {
			return fmt.Errorf("same day = %+v, want e1/1 of %s", day, dust)
		}
		s.State, s.NothingDone = core.SpendFailed, true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got, err := b.PlanSpends(ctx, "e1", nil)
	if err != nil || len(got) != 2 {
		t.Fatalf("PlanSpends(e1, nil) = %+v, %v", got, err)
	}
	if got[0].Amount != dust || got[1].Amount != big || got[0].Message != plan[0].Message || !got[1].NothingDone || got[1].Counts() {
		t.Errorf("stored = %+v; want the amounts, the message and nothing done as written", got)
	}
}

func testCallLog(t *testing.T, b SpendBackend) {
	ctx := context.Background()
	begin := func(key, run string, want core.Begun) {
		t.Helper()
		if got, err := b.BeginCall(ctx, key, run); err != nil || got != want {
			t.Errorf("BeginCall(%s, %s) = %+v, %v; want %+v", key, run, got, err, want)
		}
	}
	begin("k1", "run1", core.Begun{Fresh: true, Run: "run1"})
	// Found begun: by the same run, or by the earlier run after a restart.
	begin("k1", "run1", core.Begun{Run: "run1"})
	begin("k1", "run2", core.Begun{Run: "run1"})
	if err := b.EndCall(ctx, "k1"); err != nil {
		t.Errorf("EndCall(k1) = %v", err)
	}
	if err := b.EndCall(ctx, "k1"); err != nil {
		t.Errorf("EndCall(k1) twice = %v", err)
	}
	begin("k1", "run2", core.Begun{Run: "run1"})
	if err := b.EndCall(ctx, "k2"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("EndCall(unknown) = %v, want ErrNotFound", err)
	}

	// A call that never reached its tool is dropped, and begun again.
	begin("k3", "run1", core.Begun{Fresh: true, Run: "run1"})
	if err := b.DropCall(ctx, "k3"); err != nil {
		t.Errorf("DropCall(k3) = %v", err)
	}
	begin("k3", "run1", core.Begun{Fresh: true, Run: "run1"})
	if err := b.DropCall(ctx, "unknown"); err != nil {
		t.Errorf("DropCall(unknown) = %v, want nil", err)
	}
	testCallTasks(t, b)
}

// testCallTasks: the task a call became is kept with its entry, for a
// call begun before (one that changes things) and for one that was not
// (it changes nothing), and the entry stays begun by its run.
func testCallTasks(t *testing.T, b SpendBackend) {
	ctx := context.Background()
	tl, ok := b.(core.TaskLog)
	if !ok {
		t.Fatalf("%T keeps no tasks (core.TaskLog)", b)
	}
	task := func(key, want string) {
		t.Helper()
		if got, err := tl.CallTask(ctx, key); err != nil || got != want {
			t.Errorf("CallTask(%s) = %q, %v; want %q", key, got, err, want)
		}
	}
	task("t1", "")
	if _, err := b.BeginCall(ctx, "t1", "run1"); err != nil {
		t.Fatal(err)
	}
	task("t1", "")
	if err := tl.SetCallTask(ctx, "t1", "run1", "task-1"); err != nil {
		t.Fatalf("SetCallTask(t1) = %v", err)
	}
	task("t1", "task-1")
	if err := tl.SetCallTask(ctx, "t2", "run1", "task-2"); err != nil {
		t.Fatalf("SetCallTask(t2, not begun) = %v", err)
	}
	task("t2", "task-2")
	if got, err := b.BeginCall(ctx, "t2", "run2"); err != nil || got != (core.Begun{Run: "run1"}) {
		t.Errorf("BeginCall(t2) after its task = %+v, %v; want begun by run1", got, err)
	}
	if err := b.EndCall(ctx, "t2"); err != nil {
		t.Errorf("EndCall(t2) = %v", err)
	}
	task("t2", "task-2")
}

// ChainBackend is a spend ledger with its hash chain.
type ChainBackend interface {
	SpendBackend
	core.SpendChain
}

// verifyChain checks b's chain with core.ChainCheck, and that it has
// entries entries; a backend without a chain (coretest's) is skipped.
func verifyChain(t *testing.T, b SpendBackend, entries int) {
	t.Helper()
	c, ok := b.(core.SpendChain)
	if !ok {
		return
	}
	ctx := context.Background()
	var check core.ChainCheck
	if err := c.SpendEntries(ctx, func(e core.LedgerEntry) error { check.Entry(e); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := c.SpendRecords(ctx, func(id string, rec []byte) error { check.Record(id, rec); return nil }); err != nil {
		t.Fatal(err)
	}
	n, err := check.Done()
	if err != nil || n != uint64(entries) {
		t.Errorf("the spend chain: %d entries, %v; want %d entries that verify", n, err, entries)
	}
}

// testSpendChain: every write of a call appends one chain entry holding
// the call as written, linked to the entry before it; a write that
// changes nothing, or whose fn fails, appends none; what the ledger
// returns carries its last entry's seq and hash.
func testSpendChain(t *testing.T, b ChainBackend) {
	ctx := context.Background()
	th := thread("chain")
	planned, err := b.PlanSpends(ctx, "c1", []core.Spend{spend("c1", 1, th, "5", epoch), spend("c1", 2, th, "7", epoch)})
	if err != nil {
		t.Fatal(err)
	}
	if planned[0].Seq != 1 || planned[1].Seq != 2 || len(planned[1].Hash) != 64 {
		t.Errorf("planned = seq %d, %d, hash %q; want entries 1 and 2", planned[0].Seq, planned[1].Seq, planned[1].Hash)
	}
	var last core.Spend
	for _, st := range []core.SpendState{core.SpendAsked, core.SpendCalling, core.SpendCompleted} {
		if last, err = b.UpdateSpend(ctx, "c1/1", func(s *core.Spend, _ []core.Spend) error {
			s.State = st
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.UpdateSpend(ctx, "c1/1", func(s *core.Spend, _ []core.Spend) error {
		s.State = core.SpendFailed
		return errors.New("refused")
	}); err == nil {
		t.Fatal("UpdateSpend with fn failing = nil")
	}
	same, err := b.UpdateSpend(ctx, "c1/1", func(*core.Spend, []core.Spend) error { return nil })
	if err != nil || same.Seq != 5 || same.Hash != last.Hash {
		t.Errorf("UpdateSpend changing nothing = seq %d, %v; want entry 5 as it was", same.Seq, err)
	}
	if last.Seq != 5 || last.Receipt() != last.Hash[:8] {
		t.Errorf("completed = seq %d, receipt %q; want entry 5", last.Seq, last.Receipt())
	}

	var got []core.LedgerEntry
	if err := b.SpendEntries(ctx, func(e core.LedgerEntry) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	var steps []string
	prev := ""
	for i, e := range got {
		steps = append(steps, e.Spend+":"+string(e.State))
		if e.Seq != uint64(i+1) || e.Prev != prev || e.Hash != e.Sum() {
			t.Errorf("entry %d = %+v; want seq %d linked to %q, its hash its sum", i, e, i+1, prev)
		}
		prev = e.Hash
	}
	if fmt.Sprint(steps) != "[c1/1:planned c1/2:planned c1/1:asked c1/1:calling c1/1:completed]" {
		t.Errorf("chain = %v", steps)
	}
	if rec, _ := last.Record(); len(got) == 5 && got[4].Record != string(rec) {
		t.Errorf("last entry's record = %s, want the call as written %s", got[4].Record, rec)
	}
	all, err := b.SpendsSince(ctx, epoch)
	if err != nil || len(all) != 2 || all[0].Hash != last.Hash || all[1].Seq != 2 {
		t.Errorf("SpendsSince = %+v, %v; want the calls with their last entries", all, err)
	}
	again, err := b.PlanSpends(ctx, "c1", nil)
	if err != nil || len(again) != 2 || again[0].Hash != last.Hash {
		t.Errorf("PlanSpends(c1, nil) = %+v, %v; want the calls with their last entries", again, err)
	}
	verifyChain(t, b, 5)
}
