package execute

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/tools"
	"github.com/neobot/neobot/store"
	"github.com/neobot/neobot/store/postgres"
	"github.com/neobot/neobot/store/postgres/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// oneClick is an approver both runs of a turn wait on, as they wait on
// one gate: each says it is asking, and one click answers them all.
type oneClick struct {
	asking chan struct{}
	click  chan struct{}
}

func (c *oneClick) ask(ctx context.Context, _ core.GateRequest) (core.GateAnswer, error) {
	c.asking <- struct{}{}
	select {
	case <-c.click:
		return core.GateAnswer{Approved: true, Answer: Approve, By: "UBOB"}, nil
	case <-ctx.Done():
		return core.GateAnswer{}, ctx.Err()
	}
}

// holding is the spend side of a surface whose calls wait inside the
// tool until released, each announced on entered: a call stays "calling"
// while the other run decides what to do.
type holding struct {
	Toolbox
	entered chan struct{}
	release chan struct{}
	calls   atomic.Int32
}

func (h *holding) CallSpend(ctx context.Context, function string, args, meta map[string]any) (tools.SpendResult, error) {
	h.calls.Add(1)
	h.entered <- struct{}{}
	<-h.release
	return h.Toolbox.CallSpend(ctx, function, args, meta)
}

// ledgers opens a spend ledger of each kind: in memory, bbolt and
// PostgreSQL (skipped where PostgreSQL is not installed).
func ledgers() map[string]func(t *testing.T) core.SpendLedger {
	return map[string]func(t *testing.T) core.SpendLedger{
		"fake": func(*testing.T) core.SpendLedger { return coretest.NewSpends() },
		"bbolt": func(t *testing.T) core.SpendLedger {
			db, err := store.Open(filepath.Join(t.TempDir(), "neobot.db"), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			return db
		},
		"postgres": func(t *testing.T) core.SpendLedger {
			db, err := postgres.Open(t.Context(), pgtest.Database(t), postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			return db
		},
	}
}

// TestOverlappingRunsCallOnce: two runs of one turn (a claim lost and
// taken over while the first instance still waited on the approval) wait
// on one approval, and one click answers both: exactly one of them makes
// the call, the one that recorded the approval, with the spend ledger in
// memory, in bbolt and in PostgreSQL.
func TestOverlappingRunsCallOnce(t *testing.T) {
	for name, open := range ledgers() {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			w.model.replies = []llm.Message{transferCall(`{"amount": 5, "currency": "USDC", "recipient": "alice"}`)}
			tools := &holding{Toolbox: w.surface, entered: make(chan struct{}, 2), release: make(chan struct{})}
			exec, err := New(Options{Model: w.model, Tools: tools, Ledger: open(t)})
			if err != nil {
				t.Fatal(err)
			}
			click := &oneClick{asking: make(chan struct{}, 2), click: make(chan struct{})}
			th := core.Thread{Platform: "slack", Workspace: "T1", Channel: "CPAY", ID: "100.1"}
			results := make(chan error, 2)
			run := func() {
				tr := &core.Turn{Inbound: core.Inbound{Thread: th, User: "UALICE", EventID: "E1"}, Reporter: w.rec, Approver: click.ask}
				ctx := core.WithToolCall(core.WithTurn(context.Background(), tr), "call_1")
				go func() {
					_, err := exec.Run(ctx, "send 5 USDC to alice")
					results <- err
				}()
			}
			run()
			<-click.asking // the first run planned and waits on the approval
			run()
			<-click.asking // the second found the plan and waits on the same approval
			close(click.click)

			<-tools.entered // whichever recorded the approval is making the call
			pending := 2
			var loser error
			select {
			case loser = <-results: // the other run ended without calling
				pending--
			case <-tools.entered: // the other run is making the call too
			}
			close(tools.release)
			var errs []error
			for range pending {
				errs = append(errs, <-results)
			}
			if n := tools.calls.Load(); n != 1 {
				t.Fatalf("%d calls for one click, want exactly 1", n)
			}
			if loser == nil || !strings.Contains(loser.Error(), "another run of this conversation") {
				t.Errorf("the run that did not record the approval returned %v, want it to say another run makes the call", loser)
			}
			if len(errs) != 1 || errs[0] != nil {
				t.Errorf("the run that recorded the approval returned %v, want the completed call", errs)
			}
			if got := w.sent(); len(got) != 1 {
				t.Errorf("the wallet got %d transfers, want 1", len(got))
			}
		})
	}
}

// TestOverlapAfterApprovalKeepsTheOutcome: a second run of the turn that
// starts while the first is making the approved call cannot tell it from
// a crash: it makes nothing and reports the outcome unknown. The first
// run, which made the call, still records how it ended, so the ledger
// holds the truth: one call, completed.
func TestOverlapAfterApprovalKeepsTheOutcome(t *testing.T) {
	for name, open := range ledgers() {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			w.model.replies = []llm.Message{transferCall(`{"amount": 5, "currency": "USDC", "recipient": "alice"}`)}
			tools := &holding{Toolbox: w.surface, entered: make(chan struct{}, 2), release: make(chan struct{})}
			ledger := open(t)
			exec, err := New(Options{Model: w.model, Tools: tools, Ledger: ledger})
			if err != nil {
				t.Fatal(err)
			}
			approve := func(context.Context, core.GateRequest) (core.GateAnswer, error) {
				return core.GateAnswer{Approved: true, Answer: Approve, By: "UBOB"}, nil
			}
			th := core.Thread{Platform: "slack", Workspace: "T1", Channel: "CPAY", ID: "100.1"}
			run := func() <-chan error {
				tr := &core.Turn{Inbound: core.Inbound{Thread: th, User: "UALICE", EventID: "E1"}, Reporter: w.rec, Approver: approve}
				ctx := core.WithToolCall(core.WithTurn(context.Background(), tr), "call_1")
				done := make(chan error, 1)
				go func() {
					_, err := exec.Run(ctx, "send 5 USDC to alice")
					done <- err
				}()
				return done
			}
			first := run()
			<-tools.entered // approved, recorded calling, inside the tool
			if err := <-run(); err == nil || !strings.Contains(err.Error(), "unknown") {
				t.Errorf("the second run = %v, want the outcome unknown", err)
			}
			close(tools.release)
			if err := <-first; err != nil {
				t.Errorf("the run that made the call = %v, want it completed", err)
			}
			if n := tools.calls.Load(); n != 1 {
				t.Errorf("%d calls, want 1", n)
			}
			spends, err := ledger.SpendsSince(context.Background(), time.Time{})
			if err != nil || len(spends) != 1 || spends[0].State != core.SpendCompleted || !strings.Contains(spends[0].Result, "sent") {
				t.Errorf("ledger = %+v, %v; want the one call completed, with its result", spends, err)
			}
		})
	}
}
