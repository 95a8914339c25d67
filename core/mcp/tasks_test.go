package mcp_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/mcp"
	"github.com/neobot/neobot/core/mcp/tasktest"
)

// startTasks starts a manager over a task server whose tool is "build".
func startTasks(t *testing.T) (*mcp.Manager, *tasktest.Server) {
	t.Helper()
	srv := tasktest.New(t, "build")
	m, err := mcp.Start(t.Context(), mcp.Options{Manifest: &mcp.Manifest{DID: "did:web:x", Servers: []mcp.ServerSpec{
		{Alias: "ci", Transport: mcp.TransportHTTP, URL: srv.URL, Version: "1.0.0", Tools: []string{"build"}, SideEffects: "write"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	if st := m.Status()[0]; st.State != mcp.StateUp {
		t.Fatalf("task server %s: %s", st.State, st.Problem)
	}
	return m, srv
}

// TestTaskPolled: a call answered with a task is not held open: the
// caller records the task's ID before it is polled, sees its progress,
// and gets its result once the server completes it.
func TestTaskPolled(t *testing.T) {
	m, srv := startTasks(t)
	var mu sync.Mutex
	var created string
	var seen []mcp.TaskStatus
	said := make(chan struct{})
	var once sync.Once
	ctx := mcp.WithTaskHooks(t.Context(), mcp.TaskHooks{
		Created: func(_ context.Context, id string) error { mu.Lock(); created = id; mu.Unlock(); return nil },
		Progress: func(_ context.Context, st mcp.TaskStatus) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, st)
			if st.Message == "compiling" {
				once.Do(func() { close(said) })
			}
		},
	})
	done := make(chan struct{})
	var res mcp.Result
	var err error
	go func() { defer close(done); res, err = m.Call(ctx, "ci", "build", nil) }()
	id := <-srv.Created()
	srv.Say(id, "compiling")
	<-said
	srv.Complete(id, "build 42 passed")
	<-done
	if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].Text != "build 42 passed" {
		t.Fatalf("Call() = %+v, %v; want the task's result", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if created != id || seen[0].Status != mcp.TaskWorking || seen[len(seen)-1].Status != mcp.TaskCompleted {
		t.Errorf("created %q (want %q), statuses %+v: want the ID recorded and working ... completed", created, id, seen)
	}
	if srv.Calls() != 1 {
		t.Errorf("the server got %d calls, want 1", srv.Calls())
	}
}

// TestTaskResumed: a call whose task an earlier run started polls that
// task and never calls the tool again.
func TestTaskResumed(t *testing.T) {
	m, srv := startTasks(t)
	first, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { _, err := m.Call(first, "ci", "build", nil); done <- err }()
	id := <-srv.Created()
	cancel() // neobot went away; the task goes on
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cut-off call returned %v", err)
	}
	select {
	case got := <-srv.Cancels():
		t.Fatalf("a shutdown cancelled task %s; it must be left running", got)
	default:
	}
	srv.Complete(id, "build 42 passed")
	res, err := m.Call(mcp.WithTaskHooks(t.Context(), mcp.TaskHooks{Resume: id}), "ci", "build", nil)
	if err != nil || len(res.Content) != 1 || res.Content[0].Text != "build 42 passed" {
		t.Fatalf("resumed Call() = %+v, %v; want the task's result", res, err)
	}
	if srv.Calls() != 1 {
		t.Errorf("the server got %d calls, want 1: the resumed call started the task again", srv.Calls())
	}
	srv.Forget(id)
	res, err = m.Call(mcp.WithTaskHooks(t.Context(), mcp.TaskHooks{Resume: id}), "ci", "build", nil)
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].Text, "unknown") || srv.Calls() != 1 {
		t.Errorf("resuming a task the server forgot = %+v, %v (%d calls); want its outcome unknown, and no new call", res, err, srv.Calls())
	}
}

// TestTaskStopped: a turn stopped by its person cancels its task at the
// server.
func TestTaskStopped(t *testing.T) {
	m, srv := startTasks(t)
	ctx, stop := context.WithCancelCause(t.Context())
	done := make(chan error, 1)
	go func() { _, err := m.Call(ctx, "ci", "build", nil); done <- err }()
	id := <-srv.Created()
	<-srv.Polled() // neobot has the task (a stop before would find none to cancel)
	stop(core.ErrStopped)
	if got := <-srv.Cancels(); got != id {
		t.Errorf("cancelled %q, want %q", got, id)
	}
	if err := <-done; err == nil {
		t.Error("the stopped call returned no error")
	}
}

// TestTaskRecordFails: when the task's ID cannot be recorded, the task
// is not followed, and the model hears its outcome is unknown.
func TestTaskRecordFails(t *testing.T) {
	m, _ := startTasks(t)
	ctx := mcp.WithTaskHooks(t.Context(), mcp.TaskHooks{Created: func(context.Context, string) error { return errors.New("disk full") }})
	res, err := m.Call(ctx, "ci", "build", nil)
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].Text, "could not record it (disk full)") || !strings.Contains(res.Content[0].Text, "outcome is unknown") {
		t.Fatalf("Call() = %+v, %v; want the outcome unknown, saying why", res, err)
	}
}

// TestTaskInput: a task waiting for input has its question asked through
// the Input hook, the answer goes back with tasks/update, and the task
// goes on to its result.
func TestTaskInput(t *testing.T) {
	m, srv := startTasks(t)
	asked := make(chan mcp.Elicitation, 1)
	ctx := mcp.WithTaskHooks(t.Context(), mcp.TaskHooks{Input: func(_ context.Context, e mcp.Elicitation) (mcp.ElicitResult, error) {
		asked <- e
		return mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"ok": true}}, nil
	}})
	done := make(chan mcp.Result, 1)
	go func() { res, _ := m.Call(ctx, "ci", "build", nil); done <- res }()
	id := <-srv.Created()
	srv.Ask(id, "confirm", "Deploy to production?")
	if e := <-asked; e.Message != "Deploy to production?" || !strings.Contains(string(e.Schema), `"ok"`) {
		t.Errorf("asked %+v, want the task's question and form", e)
	}
	got := <-srv.Answers()
	if a, _ := got["confirm"].(map[string]any); a["action"] != "accept" || a["content"].(map[string]any)["ok"] != true {
		t.Errorf("tasks/update carried %v, want confirm accepted with ok true", got)
	}
	srv.Complete(id, "deployed")
	if res := <-done; len(res.Content) != 1 || res.Content[0].Text != "deployed" {
		t.Errorf("Call() = %+v, want the task's result", res)
	}
	select {
	case e := <-asked:
		t.Errorf("the question was asked again: %+v", e)
	default:
	}
}

// TestTaskServerGone: a server that goes away while its task runs ends
// the call with an error that never reads as a call that was not sent
// (which the calls log would forget, and a retry make again).
func TestTaskServerGone(t *testing.T) {
	m, srv := startTasks(t)
	done := make(chan error, 1)
	go func() { _, err := m.Call(t.Context(), "ci", "build", nil); done <- err }()
	id := <-srv.Created()
	for got := range srv.Polled() {
		if got == id {
			break
		}
	}
	srv.Down()
	err := <-done
	if err == nil || mcp.NotSent(err) {
		t.Fatalf("Call() with its server gone mid-task = %v (not sent: %v); want an error, sent", err, mcp.NotSent(err))
	}
	if srv.Calls() != 1 {
		t.Errorf("the server got %d calls, want 1", srv.Calls())
	}
}
