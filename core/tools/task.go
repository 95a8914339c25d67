package tools

import (
	"context"
	"sync"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/mcp"
)

// A tool whose server answers with a task (the MCP tasks extension,
// core/mcp/tasks.go) runs as long as it needs: the task's ID is kept with
// the call's entry in the calls log before the task is followed, the
// call's timeout stops, and the task's status shows on the call's step.
// A turn resumed after a restart finds the ID and follows the same task:
// the tool is never called again for it. A call found begun without a
// task (neobot stopped before the server's answer was recorded) is
// reported as before: its outcome is unknown.

// Holder keeps a thread's turn from being stopped by anyone but
// requester until release is called ([core.Gates.Hold]).
type Holder interface {
	Hold(t core.Thread, requester string) (release func())
}

// taskFollow is one call's part in the task it may become.
type taskFollow struct {
	s    *Surface
	log  core.TaskLog
	key  string
	tool string
	// resumed is set when an earlier attempt's task is followed.
	resumed bool

	// thread and requester are whose turn may stop the task.
	thread    core.Thread
	requester string

	mu      sync.Mutex
	task    string
	paused  bool
	release func() // the hold on the turn while the task runs
}

// followTasks prepares ctx for call to become a task, or to follow the one
// an earlier attempt became. Without a task log it changes nothing (nil).
func (s *Surface) followTasks(ctx context.Context, call core.ToolCall, b binding) (context.Context, *taskFollow) {
	tl, ok := s.calls.(core.TaskLog)
	if !ok || call.Turn() == nil {
		return ctx, nil
	}
	in := call.Turn().Inbound
	f := &taskFollow{s: s, log: tl, key: call.Key(), tool: call.Name(), thread: in.Thread, requester: in.User}
	task, err := tl.CallTask(ctx, f.key)
	if err != nil {
		// The call goes on as any other: the calls log still keeps a
		// changing call from being made twice.
		s.gate.log.Warn().Err(err).Str("tool", call.Name()).Msg("tools: could not look up the task of a call")
	}
	f.task, f.resumed = task, task != ""
	h := mcp.TaskHooks{Resume: task, Created: f.created, Progress: f.progress}
	if ask := s.elicitFunc(); ask != nil {
		// A task waiting for input asks its questions as a call does.
		h.Input = func(ctx context.Context, e mcp.Elicitation) (mcp.ElicitResult, error) {
			e.Server = b.alias
			return ask(ctx, e)
		}
	}
	return mcp.WithTaskHooks(ctx, h), f
}

// created records the task the call became before it is followed, and
// stops the call's timeout: a task takes as long as it takes.
func (f *taskFollow) created(ctx context.Context, id string) error {
	f.pause(ctx)
	if err := f.log.SetCallTask(context.WithoutCancel(ctx), f.key, f.s.run, id); err != nil {
		return err
	}
	f.mu.Lock()
	f.task = id
	f.mu.Unlock()
	return nil
}

// progress shows the task's status on the call's step.
func (f *taskFollow) progress(ctx context.Context, st mcp.TaskStatus) {
	f.pause(ctx)
	text := "Task " + st.ID + ": " + taskWords(st.Status)
	if st.Message != "" {
		text += " — " + st.Message
	}
	core.StepProgress(ctx, text)
}

// pause stops the call's timeout, once, and from then until the call
// ends only the turn's person may stop the turn (which cancels the task).
func (f *taskFollow) pause(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.paused {
		return
	}
	f.paused = true
	if c := callFrom(ctx); c != nil && c.timer != nil {
		c.timer.pause() // never resumed: the call ends with the task
	}
	if f.s.holds != nil {
		f.release = f.s.holds.Hold(f.thread, f.requester)
	}
}

// taskWords is a task status as the person reads it.
func taskWords(status string) string {
	switch status {
	case mcp.TaskWorking:
		return "working"
	case mcp.TaskInputRequired:
		return "waiting for input"
	case mcp.TaskCompleted:
		return "completed"
	case mcp.TaskFailed:
		return "failed"
	case mcp.TaskCancelled:
		return "cancelled"
	}
	return status
}

// end lets anyone stop the turn again, and records that a call the calls
// log did not begin on its own (one that changes nothing, or one whose
// task an earlier attempt started) returned, once its task is known; tk's
// own end covers the rest.
func (f *taskFollow) end(ctx context.Context, tk *ticket, err error) {
	if f == nil {
		return
	}
	f.mu.Lock()
	task, release := f.task, f.release
	f.mu.Unlock()
	if release != nil {
		release()
	}
	if tk != nil || err != nil || task == "" {
		return
	}
	if err := f.s.calls.EndCall(context.WithoutCancel(ctx), f.key); err != nil {
		f.s.gate.log.Warn().Err(err).Str("tool", f.tool).Msg("tools: the end of a task's call was not recorded")
	}
}
