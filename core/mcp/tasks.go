package mcp

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/neobot/neobot/core"
)

// Long-running tools: the tasks extension (io.modelcontextprotocol/tasks,
// SEP-2663, an extension of the 2026-07-28 revision). neobot declares it,
// and a server may then answer a tools/call with a task instead of a
// result: {"resultType": "task", "taskId": ..., "status": "working"}. The
// call is not held open: the task is polled with tasks/get (at the
// server's pollIntervalMs) until it is completed (its result inlined),
// failed (a protocol error inlined) or cancelled. The caller of
// [Manager.CallIn] sees only the final result, as for any call; what it
// learns on the way comes through [TaskHooks] in the call's context.
//
// mcp-go (v1.2.1) knows the first, experimental shape of tasks (a task
// the client asks for, tasks/result); it parses a SEP-2663 task as a
// result without content and fails. So the connection's transport is
// wrapped: a tools/call answered with a task is polled there, and the
// client above receives the task's final result as the call's response.

// TasksExtension is the tasks extension's identifier, declared under the
// client's capabilities.extensions.
const TasksExtension = "io.modelcontextprotocol/tasks"

// Task statuses, as the extension names them.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// TaskStatus is what a task last said of itself.
type TaskStatus struct {
	// ID is the server's task ID.
	ID string
	// Status is one of the Task* statuses.
	Status string
	// Message is the server's own words on where the task is ("" when it
	// gave none).
	Message string
}

// TaskHooks is what the caller of a tool learns of a task the call
// became, and how it picks up a task an earlier run started.
type TaskHooks struct {
	// Resume, when set, is the ID of the task an earlier attempt of this
	// call became: the tool is not called again, the task is polled.
	Resume string
	// Created is called once the server answered the call with a task,
	// before the task is polled: the caller records its ID durably, so a
	// restart picks the task up instead of calling the tool again. After
	// an error the task is not followed: the call's result says its
	// outcome is unknown.
	Created func(ctx context.Context, id string) error
	// Progress, when set, is told each status the task reports while it
	// runs, the first one included. It must not block for long.
	Progress func(ctx context.Context, st TaskStatus)
	// Input, when set, answers the questions a task waiting for input
	// asks (elicitation/create); the answers go back with tasks/update.
	// Without it such a task is polled until it gives up.
	Input ElicitFunc
}

type taskHooksKey struct{}

// WithTaskHooks returns a context whose tool call reports, or resumes, a
// task through h.
func WithTaskHooks(ctx context.Context, h TaskHooks) context.Context {
	return context.WithValue(ctx, taskHooksKey{}, &h)
}

func taskHooksFrom(ctx context.Context) *TaskHooks {
	h, _ := ctx.Value(taskHooksKey{}).(*TaskHooks)
	return h
}

// ErrTaskUnknown reports a task the server no longer knows (its TTL
// passed, or the server lost it): what became of it cannot be told.
var ErrTaskUnknown = errors.New("the server no longer knows the task")

// Poll interval bounds: a server's pollIntervalMs is kept within them.
const (
	defaultTaskPoll = time.Second
	minTaskPoll     = 20 * time.Millisecond
	maxTaskPoll     = 30 * time.Second
	// maxTaskPollFailures is how many tasks/get in a row may fail before
	// the call ends, its outcome unknown.
	maxTaskPollFailures = 5
)

// tasksTransport wraps a connection's transport so that tools/call
// answered with a task is polled to its end. It is made for the concrete
// transports neobot uses, embedding each, so every other interface of
// theirs (server requests, the protocol version header) still shows to
// mcp-go's client. Any other transport is wrapped too, with its plain
// interface only: a call resumed after a restart must poll its task and
// never reach the tool again, whatever carries it (a spend would move
// money twice).
func tasksTransport(tr transport.Interface) transport.Interface {
	switch t := tr.(type) {
	case *stdioTap:
		return &stdioTasks{t}
	case *httpTap:
		return &httpTasks{t}
	case *transport.InProcessTransport:
		return &inProcessTasks{t}
	}
	return plainTasks{tr}
}

type plainTasks struct{ transport.Interface }

func (t plainTasks) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	return sendTasks(ctx, t.Interface, req)
}

type stdioTasks struct{ *stdioTap }

func (t *stdioTasks) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	return sendTasks(ctx, t.stdioTap, req)
}

type httpTasks struct{ *httpTap }

func (t *httpTasks) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	return sendTasks(ctx, t.httpTap, req)
}

type inProcessTasks struct{ *transport.InProcessTransport }

func (t *inProcessTasks) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	return sendTasks(ctx, t.InProcessTransport, req)
}

// taskWire is a task as the server sends it: a CreateTaskResult, or
// tasks/get's DetailedTask.
type taskWire struct {
	ResultType     string                   `json:"resultType"`
	TaskID         string                   `json:"taskId"`
	Status         string                   `json:"status"`
	StatusMessage  string                   `json:"statusMessage"`
	PollIntervalMs int64                    `json:"pollIntervalMs"`
	Result         json.RawMessage          `json:"result"`
	Error          *mcp.JSONRPCErrorDetails `json:"error"`
	// InputRequests are the questions a task waiting for input asks, by
	// the server's key.
	InputRequests map[string]struct {
		Method string                `json:"method"`
		Params mcp.ElicitationParams `json:"params"`
	} `json:"inputRequests"`
}

func (w taskWire) status() TaskStatus {
	return TaskStatus{ID: w.TaskID, Status: w.Status, Message: w.StatusMessage}
}

// sendTasks sends req through tr; a tools/call answered with a task (or
// one whose task an earlier run started) is answered with the task's
// outcome, under req's ID.
func sendTasks(ctx context.Context, tr transport.Interface, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	if req.Method != string(mcp.MethodToolsCall) {
		return tr.SendRequest(ctx, req)
	}
	h := taskHooksFrom(ctx)
	if h != nil && h.Resume != "" {
		// PollIntervalMs 1: ask the server at once where the task is.
		return pollTask(ctx, tr, req, taskWire{TaskID: h.Resume, Status: TaskWorking, PollIntervalMs: 1}, h)
	}
	resp, err := tr.SendRequest(ctx, req)
	if err != nil || resp == nil || resp.Error != nil {
		return resp, err
	}
	var w taskWire
	if json.Unmarshal(resp.Result, &w) != nil || w.ResultType != "task" {
		return resp, nil
	}
	if w.TaskID == "" {
		return nil, errors.New("the server answered with a task that has no taskId")
	}
	if h != nil && h.Created != nil {
		if err := h.Created(ctx, w.TaskID); err != nil {
			return errorResponse(req.ID, fmt.Sprintf("The tool started task %s, but neobot could not record it (%v), so it does not follow it: its outcome is unknown. Do not call the tool again unless the user asks.", w.TaskID, err)), nil
		}
	}
	return pollTask(ctx, tr, req, w, h)
}

// pollTask polls the task w until it ends and returns its outcome as the
// response to the call with id: a completed task's result, a failed one's
// error, and for a cancelled one an error result saying so. When ctx
// ends because the person stopped the turn, the task is cancelled at the
// server; any other end (a shutdown) leaves it running, for the resumed
// turn to pick up.
func pollTask(ctx context.Context, tr transport.Interface, call transport.JSONRPCRequest, w taskWire, h *TaskHooks) (*transport.JSONRPCResponse, error) {
	id, meta := call.ID, requestMeta(call)
	answered := map[string]bool{}
	failures := 0
	for {
		if h != nil && h.Progress != nil {
			h.Progress(ctx, w.status())
		}
		switch w.Status {
		case TaskCompleted:
			if len(w.Result) == 0 {
				return nil, fmt.Errorf("task %s completed without a result", w.TaskID)
			}
			return &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Result: w.Result}, nil
		case TaskFailed:
			e := w.Error
			if e == nil {
				e = &mcp.JSONRPCErrorDetails{Code: mcp.INTERNAL_ERROR, Message: "the task failed: " + or(w.StatusMessage, "the server gave no reason")}
			}
			return &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Error: e}, nil
		case TaskCancelled:
			text := "The task was cancelled before it finished."
			if w.StatusMessage != "" {
				text += " The server said: " + w.StatusMessage
			}
			return errorResponse(id, text), nil
		}
		if w.Status == TaskInputRequired && h != nil && h.Input != nil {
			if err := answerTask(ctx, tr, w, meta, h.Input, answered); err != nil {
				if ctx.Err() != nil {
					return nil, leaveTask(ctx, tr, w.TaskID, meta)
				}
				return nil, fmt.Errorf("following task %s: %v", w.TaskID, err)
			}
		}
		wait := defaultTaskPoll
		if w.PollIntervalMs > 0 {
			wait = min(max(time.Duration(w.PollIntervalMs)*time.Millisecond, minTaskPoll), maxTaskPoll)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, leaveTask(ctx, tr, w.TaskID, meta)
		case <-timer.C:
		}
		next, err := getTask(ctx, tr, w.TaskID, meta)
		if ctx.Err() != nil {
			return nil, leaveTask(ctx, tr, w.TaskID, meta)
		}
		if err != nil && !errors.Is(err, ErrTaskUnknown) {
			// The server may be restarting: ask again a few times. The
			// call was sent and its task runs, so the error that ends it
			// must never read as a call that never left (%v, not %w): a
			// retry would start the task twice.
			if failures++; failures < maxTaskPollFailures {
				continue
			}
			return nil, fmt.Errorf("following task %s: %v", w.TaskID, err)
		}
		failures = 0
		if err != nil { // ErrTaskUnknown
			text := fmt.Sprintf("The server no longer knows task %s, so what became of it is unknown. Do not call the tool again unless the user asks.", w.TaskID)
			return errorResponse(id, text), nil
		}
		w = next
	}
}

// answerTask asks the questions the task w waits on that were not
// answered yet, through input, and sends the answers with tasks/update.
// A request neobot cannot answer (sampling, roots) is left unanswered.
func answerTask(ctx context.Context, tr transport.Interface, w taskWire, meta json.RawMessage, input ElicitFunc, answered map[string]bool) error {
	responses := map[string]any{}
	for key, r := range w.InputRequests {
		if answered[key] || r.Method != string(mcp.MethodElicitationCreate) {
			continue
		}
		e := Elicitation{Message: r.Params.Message}
		if r.Params.Mode == mcp.ElicitationModeURL {
			e.URL = r.Params.URL
		} else if raw, err := json.Marshal(r.Params.RequestedSchema); err == nil {
			e.Schema = raw
		}
		res, err := input(ctx, e)
		if err != nil {
			return fmt.Errorf("task %s: answer %s: %w", w.TaskID, key, err)
		}
		responses[key] = answer(res).ElicitationResponse
		answered[key] = true
	}
	if len(responses) == 0 {
		return nil
	}
	req := taskRequest("tasks/update", w.TaskID, meta)
	req.Params.(map[string]any)["inputResponses"] = responses
	resp, err := tr.SendRequest(ctx, req)
	if err != nil {
		return fmt.Errorf("tasks/update %s: %w", w.TaskID, err)
	}
	if resp.Error != nil {
		return fmt.Errorf("tasks/update %s: %s", w.TaskID, resp.Error.Message)
	}
	return nil
}

// leaveTask stops following the task with id as ctx ended, and returns
// ctx's error: the task is cancelled at the server when the person
// stopped the turn, and left running otherwise (a shutdown: the resumed
// turn picks it up).
func leaveTask(ctx context.Context, tr transport.Interface, id string, meta json.RawMessage) error {
	if errors.Is(context.Cause(ctx), core.ErrStopped) {
		cancelTask(ctx, tr, id, meta)
	}
	return ctx.Err()
}

// taskRequest is a tasks/* request for the task with id, with the
// headers 2026-07-28 servers route on, and meta (the _meta of the call
// the task came from: on 2026-07-28 it carries the protocol version and
// the client's capabilities, which the extension's methods need too).
// Its ID is a random string, apart from the numbers mcp-go gives its own
// requests on the same connection.
func taskRequest(method, id string, meta json.RawMessage) transport.JSONRPCRequest {
	params := map[string]any{"taskId": id}
	if len(meta) > 0 {
		params["_meta"] = meta
	}
	return transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId("neobot-task-" + rand.Text()),
		Method: method, Params: params,
		Header: http.Header{"Mcp-Method": {method}, "Mcp-Name": {id}},
	}
}

// requestMeta is the _meta of req's params, nil when it has none.
func requestMeta(req transport.JSONRPCRequest) json.RawMessage {
	raw, err := json.Marshal(req.Params)
	if err != nil {
		return nil
	}
	var p struct {
		Meta json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(raw, &p) != nil || string(p.Meta) == "null" {
		return nil
	}
	return p.Meta
}

// getTask asks the server where the task with id is.
func getTask(ctx context.Context, tr transport.Interface, id string, meta json.RawMessage) (taskWire, error) {
	resp, err := tr.SendRequest(ctx, taskRequest("tasks/get", id, meta))
	if err != nil {
		return taskWire{}, fmt.Errorf("tasks/get %s: %w", id, err)
	}
	if resp.Error != nil {
		if resp.Error.Code == mcp.INVALID_PARAMS {
			return taskWire{}, fmt.Errorf("tasks/get %s: %w (%s)", id, ErrTaskUnknown, resp.Error.Message)
		}
		return taskWire{}, fmt.Errorf("tasks/get %s: %s", id, resp.Error.Message)
	}
	var w taskWire
	if err := json.Unmarshal(resp.Result, &w); err != nil {
		return taskWire{}, fmt.Errorf("tasks/get %s: %w", id, err)
	}
	if w.TaskID == "" {
		w.TaskID = id
	}
	return w, nil
}

// cancelTask asks the server to cancel the task with id; the turn is
// ending, so it is bounded on its own and its failure only logged by the
// server.
func cancelTask(ctx context.Context, tr transport.Interface, id string, meta json.RawMessage) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_, _ = tr.SendRequest(cctx, taskRequest("tasks/cancel", id, meta))
}

// tasksCapability is what neobot declares of the extension.
func tasksCapability() map[string]any {
	return map[string]any{TasksExtension: map[string]any{}}
}

// errorResponse answers the call with id with an in-band error result
// saying text.
func errorResponse(id mcp.RequestId, text string) *transport.JSONRPCResponse {
	raw, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": true})
	return &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Result: raw}
}
