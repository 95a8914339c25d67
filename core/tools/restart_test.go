package tools

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/mcp"
)

// TestDispatchWhileRestarting kills the stdio server behind a tool: the
// call fails as retryable, saying it is temporarily unavailable, the tool
// stays advertised, and works again once the server is back.
func TestDispatchWhileRestarting(t *testing.T) {
	var mu sync.Mutex
	gate := make(chan struct{})
	close(gate)
	lookup := func(string) (string, bool) {
		mu.Lock()
		g := gate
		mu.Unlock()
		<-g
		return "1", true
	}
	statuses := make(chan mcp.Status, 64)
	wait := func(want mcp.State) mcp.Status {
		t.Helper()
		timeout := time.NewTimer(30 * time.Second)
		defer timeout.Stop()
		for {
			select {
			case st := <-statuses:
				if st.State == want {
					return st
				}
			case <-timeout.C:
				t.Fatalf("server never reached %s", want)
			}
		}
	}
	m := &mcp.Manifest{DID: "did:key:z6MkNeo", Servers: []mcp.ServerSpec{{
		Alias: "chain", Transport: mcp.TransportStdio, Command: os.Args[0], Version: "0.3.0",
		Env: []string{"NEOBOT_TOOLSTEST_SERVE=$env:SERVE"}, Tools: chainToolNames,
		SideEffects: "read", ToolSideEffects: map[string]string{"simulate_swap": "write"},
	}}}
	calls := coretest.NewSpends()
	s := spawn(t, Options{Manifest: m, LookupEnv: lookup, OnStatus: func(st mcp.Status) { statuses <- st }, RestartBackoff: time.Millisecond, Calls: calls})
	up := wait(mcp.StateUp)

	mu.Lock()
	gate = make(chan struct{}) // hold the restart in LookupEnv
	held := gate
	mu.Unlock()
	t.Cleanup(func() {
		select {
		case <-held:
		default:
			close(held)
		}
	})
	if err := syscall.Kill(up.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	wait(mcp.StateRestarting)
	_, _, err := dispatch(context.Background(), s, "chain__get_balance", map[string]any{"address": "0x1"})
	if re, ok := errors.AsType[*RetryableError](err); !ok || !strings.Contains(re.InBand(), "is restarting, and the call never reached it") {
		t.Errorf("Dispatch() while restarting = %v; want a RetryableError saying it never reached the restarting server", err)
	}
	// A call that changes something never reached the server either: it
	// is not left in the calls log, so the ladder's retry under the same
	// call ID is made, not taken for a call cut off by neobot stopping.
	th := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1.1"}
	tr := &core.Turn{Inbound: core.Inbound{Thread: th, User: "UALICE", EventID: "E1"}, Reporter: coretest.NewRecorder()}
	swap := core.WithToolCall(core.WithTurn(context.Background(), tr), "call_0")
	for range 2 { // the first attempt and the ladder's retry
		_, _, err = dispatch(swap, s, "chain__simulate_swap", nil)
		if re, ok := errors.AsType[*RetryableError](err); !ok || !strings.Contains(re.InBand(), "simulate_swap was not run: its server \"chain\" is restarting, and the call never reached it") {
			t.Errorf("Dispatch(a write) while restarting = %v; want a RetryableError saying it was not run", err)
		}
	}
	if c := calls.Calling(); len(c) != 0 {
		t.Errorf("calls left calling after calls that were never sent: %q", c)
	}
	if n := tr.Reporter.(*coretest.Recorder).Notices(); len(n) != 0 {
		t.Errorf("notices = %q, want none: neobot did not stop", n)
	}
	if !strings.Contains(strings.Join(names(s), ","), "chain__get_balance") {
		t.Errorf("Schemas() while restarting = %v, want chain__get_balance still advertised", names(s))
	}
	close(held)
	wait(mcp.StateUp)
	got, isErr, err := dispatch(context.Background(), s, "chain__get_balance", map[string]any{"address": "0x1"})
	if err != nil || isErr || got != "balance of 0x1: 12 PAX" {
		t.Errorf("Dispatch() after restart = %q, %v, %v; want the balance", got, isErr, err)
	}
	if got, isErr, err := dispatch(swap, s, "chain__simulate_swap", nil); err != nil || isErr || got != "would get 3 PAX" {
		t.Errorf("Dispatch(a write) retried after restart = %q, %v, %v; want it run", got, isErr, err)
	}
}
