package execute

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/mcp/tasktest"
	"github.com/neobot/neobot/core/skill"
	"github.com/neobot/neobot/core/tools"
)

// newTaskWorld is newWorld over a wallet whose transfer answers with a
// task (tasktest), with ledger as the spend ledger.
func newTaskWorld(t *testing.T, ledger core.SpendLedger) (*world, *tasktest.Server) {
	t.Helper()
	srv := tasktest.New(t, "transfer")
	w := &world{t: t, model: &planner{}, posted: make(chan core.Gate, 8), rec: coretest.NewRecorder()}
	w.gates = core.NewGates(core.GatesOptions{Store: coretest.NewGateStore()})
	m := &mcp.Manifest{DID: "did:key:z6MkNeo", Servers: []mcp.ServerSpec{{
		Alias: "wallet", Transport: mcp.TransportHTTP, URL: srv.URL, Version: "1.0.0", Tools: []string{"transfer"}, SideEffects: "spend",
	}}}
	specs, err := skill.Parse([]byte(`{"payments": {"spend": true, "places": ["slack:T1/CPAY"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if w.skills, err = skill.Compile(specs, m); err != nil {
		t.Fatal(err)
	}
	w.surface, err = tools.Spawn(context.Background(), tools.Options{
		Manifest: m, Skills: w.skills,
		Execute: tools.FromContext(func(ctx context.Context, intent string) (string, error) { return w.exec.Run(ctx, intent) }),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.surface.Close() })
	if w.exec, err = New(Options{Model: w.model, Tools: w.surface, Ledger: ledger, Skills: w.skills}); err != nil {
		t.Fatal(err)
	}
	return w, srv
}

// TestSpendTaskResumed: a spend found "calling" with the task its call
// became (neobot was killed while following it) is not reported unknown:
// the task is read at its server, never called again, and its outcome
// recorded: the task's result when it completed, unknown (saying why)
// when the server no longer knows it.
func TestSpendTaskResumed(t *testing.T) {
	tests := []struct {
		name   string
		end    func(srv *tasktest.Server, id string)
		state  core.SpendState
		result string
	}{
		{"completed", func(srv *tasktest.Server, id string) { srv.Complete(id, "sent, tx 0xbeef") }, core.SpendCompleted, "sent, tx 0xbeef"},
		{"forgotten", func(srv *tasktest.Server, id string) { srv.Forget(id) }, core.SpendUnknown, "no longer knows task"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ledger := coretest.NewSpends()
			w, srv := newTaskWorld(t, ledger)
			ctx := w.turn("CPAY", "E1")
			tr, _ := core.TurnFrom(ctx)
			id := IntentID(tr.Inbound, "call_1")
			task := srv.Begin()
			tt.end(srv, task)
			args, _ := json.Marshal(map[string]any{"to": "alice"})
			plan := []core.Spend{{ID: id + "/1", IntentID: id, Thread: tr.Inbound.Thread, Requester: "UALICE", Server: "wallet", Name: "transfer",
				Function: "wallet__transfer", Args: args, Day: time.Now().UTC().Format(time.DateOnly), State: core.SpendCalling, Task: task}}
			if _, err := ledger.PlanSpends(context.Background(), id, plan); err != nil {
				t.Fatal(err)
			}
			r := <-w.execute(ctx, "send 5 USDC to alice")
			if !strings.Contains(r.content, tt.result) || !strings.Contains(r.content, string(tt.state)) {
				t.Errorf("core_execute = %+v, want %s with %q", r, tt.state, tt.result)
			}
			spends, _ := ledger.SpendsSince(context.Background(), time.Time{})
			if len(spends) != 1 || spends[0].State != tt.state {
				t.Errorf("ledger = %+v, want the call %s", spends, tt.state)
			}
			if n := srv.Calls(); n != 0 {
				t.Errorf("the tool was called %d times; a resumed spend reads its task and never calls again", n)
			}
		})
	}
}

// lossyLedger is a spend ledger that cannot record a call's task.
type lossyLedger struct{ *coretest.Spends }

func (l lossyLedger) UpdateSpend(ctx context.Context, id string, fn func(s *core.Spend, day []core.Spend) error) (core.Spend, error) {
	return l.Spends.UpdateSpend(ctx, id, func(s *core.Spend, day []core.Spend) error {
		if err := fn(s, day); err != nil {
			return err
		}
		if s.Task != "" {
			return errors.New("disk full")
		}
		return nil
	})
}

// TestSpendTaskNotRecorded: an approved spend whose call became a task
// that the ledger could not record is not followed (a resumed turn could
// not find it) and is recorded unknown, saying why; the tool was called
// once.
func TestSpendTaskNotRecorded(t *testing.T) {
	ledger := lossyLedger{coretest.NewSpends()}
	w, srv := newTaskWorld(t, ledger)
	w.model.replies = []llm.Message{transferCall(`{"to": "alice"}`)}
	done := w.execute(w.turn("CPAY", "E1"), "send 5 USDC to alice")
	g, r, ok := w.gate(done)
	if !ok {
		t.Fatalf("no approval asked; core_execute = %+v", r)
	}
	if _, err := w.gates.Decide(context.Background(), g.Token, "UBOB", nil, Approve); err != nil {
		t.Fatal(err)
	}
	r = <-done
	if !strings.Contains(r.content, "unknown") || !strings.Contains(r.content, "could not record it (disk full)") {
		t.Errorf("core_execute = %+v, want unknown, saying the task could not be recorded", r)
	}
	spends, _ := ledger.SpendsSince(context.Background(), time.Time{})
	if len(spends) != 1 || spends[0].State != core.SpendUnknown || spends[0].Task != "" {
		t.Errorf("ledger = %+v, want the call unknown, with no task", spends)
	}
	if n := srv.Calls(); n != 1 {
		t.Errorf("the tool was called %d times, want once", n)
	}
}

// TestSpendTaskStoppedGoesOn: a turn stopped while its approved spend's
// task runs leaves the task to finish (no tasks/cancel: it may already
// be moving money), records how it ended, and tells the thread, since
// the model whose turn ended will not.
func TestSpendTaskStoppedGoesOn(t *testing.T) {
	ledger := coretest.NewSpends()
	w, srv := newTaskWorld(t, ledger)
	w.model.replies = []llm.Message{transferCall(`{"to": "alice"}`)}
	ctx, stop := context.WithCancelCause(w.turn("CPAY", "E1"))
	defer stop(nil)
	done := w.execute(ctx, "send 5 USDC to alice")
	g, r, ok := w.gate(done)
	if !ok {
		t.Fatalf("no approval asked; core_execute = %+v", r)
	}
	if _, err := w.gates.Decide(context.Background(), g.Token, "UBOB", nil, Approve); err != nil {
		t.Fatal(err)
	}
	task := <-srv.Created()
	for polled := range srv.Polled() {
		if polled == task {
			break
		}
	}
	stop(core.ErrStopped)
	srv.Complete(task, "sent, tx 0xcafe")
	<-done
	spends, _ := ledger.SpendsSince(context.Background(), time.Time{})
	if len(spends) != 1 || spends[0].State != core.SpendCompleted {
		t.Errorf("ledger = %+v, want the call completed", spends)
	}
	n := w.rec.Notices()
	if len(n) == 0 || !strings.Contains(n[len(n)-1], "was already being made when this turn was stopped") || !strings.Contains(n[len(n)-1], "completed") ||
		!strings.Contains(n[len(n)-1], "sent, tx 0xcafe") {
		t.Errorf("notices = %q, want the thread told the spend went on and completed", n)
	}
	select {
	case id := <-srv.Cancels():
		t.Errorf("the stop cancelled task %s of an approved spend", id)
	default:
	}
	if c := srv.Calls(); c != 1 {
		t.Errorf("the tool was called %d times, want once", c)
	}
}
