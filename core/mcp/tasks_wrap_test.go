package mcp

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// methodsSeen is a transport of a kind tasksTransport does not know: it
// records each request's method and answers a task as completed.
type methodsSeen struct {
	mu      sync.Mutex
	methods []string
}

func (m *methodsSeen) Start(context.Context) error { return nil }
func (m *methodsSeen) SendNotification(context.Context, mcp.JSONRPCNotification) error {
	return nil
}
func (m *methodsSeen) SetNotificationHandler(func(mcp.JSONRPCNotification)) {}
func (m *methodsSeen) Close() error                                         { return nil }
func (m *methodsSeen) GetSessionId() string                                 { return "" }

func (m *methodsSeen) SendRequest(_ context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	m.mu.Lock()
	m.methods = append(m.methods, req.Method)
	m.mu.Unlock()
	result, _ := json.Marshal(map[string]any{"taskId": "t1", "status": TaskCompleted,
		"result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}}})
	return &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: req.ID, Result: result}, nil
}

// TestResumeOnAnyTransport checks that a call resumed with its task's ID
// polls the task and never sends tools/call again, on a transport
// tasksTransport has no case for: a spend resumed after a crash must not
// move money twice because of how its server is reached.
func TestResumeOnAnyTransport(t *testing.T) {
	seen := &methodsSeen{}
	tr := tasksTransport(seen)
	ctx := WithTaskHooks(t.Context(), TaskHooks{Resume: "t1"})
	req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(int64(1)), Method: string(mcp.MethodToolsCall),
		Params: map[string]any{"name": "pay"}}
	resp, err := tr.SendRequest(ctx, req)
	if err != nil || resp == nil || resp.Error != nil {
		t.Fatalf("resumed call = %+v, %v; want the task's result", resp, err)
	}
	for _, m := range seen.methods {
		if m == string(mcp.MethodToolsCall) {
			t.Fatalf("the resumed call sent %v: the tool was called again", seen.methods)
		}
	}
	if len(seen.methods) == 0 {
		t.Fatal("the resumed call asked nothing: its task was not polled")
	}
}
