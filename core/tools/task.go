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

// taskFollow is one call's part in the task it may become.
type taskFollow struct {
	s    *Surface
	log  core.TaskLog
	key  string
	tool string
	// resumed is set when an earlier attempt's task is followed.
	resumed bool

	mu     sync.Mutex
	task   string
	paused bool
}

// followTasks prepares ctx for call to become a task, or to follow the one
// an earlier attempt became. Without a task log it changes nothing (nil).
func (s *Surface) followTasks(ctx context.Context, call core.ToolCall) (context.Context, *taskFollow) {
	tl, ok := s.calls.(core.TaskLog)
	if !ok || call.Turn() == nil {
		return ctx, nil
	}
	f := &taskFollow{s: s, log: tl, key: call.Key(), tool: call.Name()}
	task, err := tl.CallTask(ctx, f.key)
	if err != nil {
		// The call goes on as any other: the calls log still keeps a
		// changing call from being made twice.
		s.gate.log.Warn().Err(err).Str("tool", call.Name()).Msg("tools: could not look up the task of a call")
	}
	f.task, f.resumed = task, task != ""
	return mcp.WithTaskHooks(ctx, mcp.TaskHooks{Resume: task, Created: f.created, Progress: f.progress}), f
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

// pause stops the call's timeout, once.
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

// end records that a call the calls log did not begin on its own (one
// that changes nothing, or one whose task an earlier attempt started)
// returned, once its task is known; tk's own end covers the rest.
func (f *taskFollow) end(ctx context.Context, tk *ticket, err error) {
	if f == nil || tk != nil || err != nil {
		return
	}
	f.mu.Lock()
	task := f.task
	f.mu.Unlock()
	if task == "" {
		return
	}
	if err := f.s.calls.EndCall(context.WithoutCancel(ctx), f.key); err != nil {
		f.s.gate.log.Warn().Err(err).Str("tool", f.tool).Msg("tools: the end of a task's call was not recorded")
	}
}
