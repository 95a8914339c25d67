package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStdioCall(t *testing.T) {
	m := start(t, Options{Manifest: manifest(goStdio("go")), LookupEnv: testEnv(nil).lookup})
	if st := m.Status()[0]; st.State != StateUp || st.PID == 0 {
		t.Fatalf("Status() = %+v, want up with a pid", st)
	}
	res, err := m.Call(context.Background(), "go", "echo", map[string]any{"text": "over stdio"})
	if err != nil || res.Content[0].Text != "over stdio" {
		t.Fatalf("Call(echo) = %+v, %v; want the text back", res, err)
	}
}

// TestStdioKill kills a stdio server: its tools answer "temporarily
// unavailable" while it restarts, it comes back, and after Close no
// process of either incarnation (nor the grandchild it spawned) is left.
func TestStdioKill(t *testing.T) {
	env := testEnv(map[string]string{"TEST_GRANDCHILD": "1"})
	t.Cleanup(env.release)
	feed := make(statusFeed, 64)
	m, err := Start(context.Background(), Options{
		Manifest: manifest(goStdio("go")), LookupEnv: env.lookup, OnStatus: feed.on,
		RestartBackoff: time.Millisecond, StopGrace: 500 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("Start() error = %v", err)
	}
	first := feed.wait(t, "go", StateUp)
	res, err := m.Call(context.Background(), "go", "pid", nil)
	if err != nil {
		t.Fatalf("Call(pid) error = %v", err)
	}
	var pid, grandchild int
	if _, err := fmt.Sscan(res.Content[0].Text, &pid, &grandchild); err != nil || pid != first.PID || grandchild == 0 {
		t.Fatalf("Call(pid) = %q, want %d and a grandchild pid", res.Content[0].Text, first.PID)
	}

	env.hold() // the restart waits in LookupEnv until released
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill %d: %v", pid, err)
	}
	feed.wait(t, "go", StateRestarting)
	if _, err := m.Call(context.Background(), "go", "echo", map[string]any{"text": "x"}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Call() while restarting error = %v, want ErrUnavailable", err)
	}
	if len(m.Tools()) != len(testToolNames) {
		t.Errorf("Tools() while restarting has %d tools, want %d still listed", len(m.Tools()), len(testToolNames))
	}
	env.release()
	second := feed.wait(t, "go", StateUp)
	if second.PID == 0 || second.PID == pid || second.Restarts != 1 {
		t.Errorf("after restart Status = pid %d restarts %d, want a new pid and 1 restart", second.PID, second.Restarts)
	}
	res, err = m.Call(context.Background(), "go", "echo", map[string]any{"text": "back"})
	if err != nil || res.Content[0].Text != "back" {
		t.Errorf("Call() after restart = %+v, %v; want the text back", res, err)
	}
	res, _ = m.Call(context.Background(), "go", "pid", nil)
	var pid2 int
	_, _ = fmt.Sscan(res.Content[0].Text, &pid2)

	if err := m.Close(); err != nil {
		t.Errorf("Close() error = %v", err)
	}
	// The grandchildren stayed in their parent's group, so an empty group
	// means they are gone too.
	for _, g := range []int{pid, pid2} {
		if live := liveGroup(t, g); len(live) > 0 {
			t.Errorf("process group %d still has live processes %v after Close", g, live)
		}
	}
}

// TestStdioStartTimeout: a server that never answers the handshake fails
// with a warning saying so, and does not hold up the others.
func TestStdioStartTimeout(t *testing.T) {
	hang := goStdio("hang")
	hang.StartTimeout = Duration(300 * time.Millisecond)
	hang.Env = []string{modeVar + "=$env:HANG"}
	m := start(t, Options{
		Manifest:  manifest(hang, goStdio("go")),
		LookupEnv: testEnv(map[string]string{"HANG": "hang"}).lookup,
	})
	st := m.Status()
	if st[0].State != StateFailed || !strings.Contains(st[0].Problem, "no answer within 300ms") {
		t.Errorf("Status()[0] = %s %q, want failed after 300ms", st[0].State, st[0].Problem)
	}
	if st[1].State != StateUp {
		t.Errorf("Status()[1].State = %s, want up", st[1].State)
	}
}

func TestStdioBadCommand(t *testing.T) {
	bad := goStdio("bad")
	bad.Command = "/nonexistent/mcp-server"
	m := start(t, Options{Manifest: manifest(bad), LookupEnv: testEnv(nil).lookup})
	if st := m.Status()[0]; st.State != StateFailed || !strings.Contains(st.Problem, "/nonexistent/mcp-server") {
		t.Errorf("Status() = %s %q, want failed naming the command", st.State, st.Problem)
	}
}
