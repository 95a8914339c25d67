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
		Env: []string{"NEOBOT_TOOLSTEST_SERVE=$env:SERVE"}, Tools: chainToolNames, SideEffects: "external",
	}}}
	s := spawn(t, Options{Manifest: m, LookupEnv: lookup, OnStatus: func(st mcp.Status) { statuses <- st }, RestartBackoff: time.Millisecond})
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
	_, _, err := s.Dispatch(context.Background(), "chain__get_balance", map[string]any{"address": "0x1"})
	if re, ok := errors.AsType[*RetryableError](err); !ok || !strings.Contains(re.InBand(), "temporarily unavailable") {
		t.Errorf("Dispatch() while restarting = %v; want a RetryableError saying 'temporarily unavailable'", err)
	}
	if !strings.Contains(strings.Join(names(s), ","), "chain__get_balance") {
		t.Errorf("Schemas() while restarting = %v, want chain__get_balance still advertised", names(s))
	}
	close(held)
	wait(mcp.StateUp)
	got, isErr, err := s.Dispatch(context.Background(), "chain__get_balance", map[string]any{"address": "0x1"})
	if err != nil || isErr || got != "balance of 0x1: 12 PAX" {
		t.Errorf("Dispatch() after restart = %q, %v, %v; want the balance", got, isErr, err)
	}
}
