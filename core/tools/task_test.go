package tools

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/mcp/tasktest"
	"github.com/neobot/neobot/core/skill"
)

// TestTaskSurvivesRestart: a call its server answers with a task has the
// task recorded with the call before it is followed, shows the task's
// progress on its step, may be stopped (and its task so cancelled) only
// by the turn's person while it runs, and, cut off by neobot stopping, is followed
// again by the resumed turn, which reports the task's result without
// calling the tool a second time.
func TestTaskSurvivesRestart(t *testing.T) {
	srv := tasktest.New(t, "build")
	m := &mcp.Manifest{DID: "did:key:z6MkNeo", Servers: []mcp.ServerSpec{{
		Alias: "ci", Transport: mcp.TransportHTTP, URL: srv.URL, Version: "1.0.0", Tools: []string{"build"}, SideEffects: "write",
	}}}
	calls := coretest.NewSpends()
	th := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1.1"}
	in := core.Inbound{Thread: th, User: "UALICE", EventID: "E1"}

	gates := core.NewGates(core.GatesOptions{Store: coretest.NewGateStore()})
	first := spawn(t, Options{Manifest: m, Calls: calls, Run: "run1", Holds: gates})
	var mu sync.Mutex
	var shown []string
	progress := func(_ context.Context, out string) { mu.Lock(); shown = append(shown, out); mu.Unlock() }
	stop, cancel := context.WithCancel(core.WithStepProgress(context.Background(), progress))
	done := make(chan string, 1)
	go func() {
		tr := &core.Turn{Inbound: in, Reporter: coretest.NewRecorder()}
		got, _, _ := first.Dispatch(stop, tr.Call("call_1", "ci__build", nil))
		done <- got
	}()
	id := <-srv.Created()
	srv.Say(id, "compiling")
	for p := range srv.Polled() {
		mu.Lock()
		n := len(shown)
		mu.Unlock()
		if p == id && n > 1 {
			break
		}
	}
	if task, err := calls.CallTask(context.Background(), in.Thread.Key()+"\x1fE1\x1fcall_1"); err != nil || task != id {
		t.Fatalf("CallTask() = %q, %v; want %q recorded before the task is followed", task, err, id)
	}
	if ok, _ := gates.MayStop(context.Background(), th, "UMALLORY", nil); ok {
		t.Error("while the task runs, someone else may stop Alice's turn (and so cancel her task)")
	}
	if ok, _ := gates.MayStop(context.Background(), th, "UALICE", nil); !ok {
		t.Error("while the task runs, Alice may not stop her own turn")
	}
	cancel() // neobot stops; the task goes on at the server
	<-done
	if ok, _ := gates.MayStop(context.Background(), th, "UMALLORY", nil); !ok {
		t.Error("once the call ended, the turn is still held")
	}
	mu.Lock()
	if !strings.Contains(strings.Join(shown, "\n"), "Task "+id+": working — compiling") {
		t.Errorf("the step showed %q, want the task's status", shown)
	}
	mu.Unlock()

	srv.Complete(id, "build 42 passed")
	second := spawn(t, Options{Manifest: m, Calls: calls, Run: "run2"})
	tr := &core.Turn{Inbound: in, Reporter: coretest.NewRecorder(), Resumed: true}
	got, isErr, err := second.Dispatch(context.Background(), tr.Call("call_1", "ci__build", nil))
	if err != nil || isErr || got != "build 42 passed" {
		t.Errorf("the resumed call = %q, %v, %v; want the task's result", got, isErr, err)
	}
	if n := srv.Calls(); n != 1 {
		t.Errorf("the tool was called %d times, want once: the resumed turn must follow the task", n)
	}
	if c := calls.Calling(); len(c) != 0 {
		t.Errorf("calls left calling: %q, want the task's call ended", c)
	}
}

// TestSpendTaskCutOff: a spend tool whose server answers with a task,
// cut off by a shutdown or stopped by its person, is an error to the
// executor (its outcome unknown), never a result; the tool was called
// once, and its task is not kept in the calls log: the spend ledger
// keeps a spend's task, for a resumed turn to follow (core/execute).
func TestSpendTaskCutOff(t *testing.T) {
	srv := tasktest.New(t, "transfer")
	m := &mcp.Manifest{DID: "did:key:z6MkNeo", Servers: []mcp.ServerSpec{{
		Alias: "bank", Transport: mcp.TransportHTTP, URL: srv.URL, Version: "1.0.0", Tools: []string{"transfer"}, SideEffects: "spend",
	}}}
	specs, err := skill.Parse([]byte(`{"payer": {"side_effects": {"read": "allow"}, "spend": true, "places": ["slack:T1/CPAY"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	set, err := skill.Compile(specs, m)
	if err != nil {
		t.Fatal(err)
	}
	calls := coretest.NewSpends()
	s := spawn(t, Options{Manifest: m, Skills: set, Calls: calls})
	for i, cause := range []error{context.Canceled, core.ErrStopped} {
		ctx, cancel := context.WithCancelCause(in("CPAY", nil))
		done := make(chan error, 1)
		go func() { _, err := s.CallSpend(ctx, "bank__transfer", map[string]any{"to": "bob"}, nil); done <- err }()
		id := <-srv.Created()
		for p := range srv.Polled() {
			if p == id {
				break
			}
		}
		cancel(cause)
		if err := <-done; err == nil {
			t.Errorf("%v: CallSpend() = nil error, want an error: the spend's outcome is unknown", cause)
		}
		if n := srv.Calls(); n != i+1 {
			t.Errorf("%v: the tool was called %d times in all, want %d", cause, n, i+1)
		}
		if c := calls.Calling(); len(c) != 0 {
			t.Errorf("%v: a spend's task was kept for a resumed turn to follow: %q", cause, c)
		}
	}
	select {
	case id := <-srv.Cancels():
		if id != "task-2" {
			t.Errorf("cancelled %s, want task-2 (the stopped one) only", id)
		}
	default:
		t.Error("the stopped spend's task was not cancelled at the server")
	}
}
