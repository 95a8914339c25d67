package terminal

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/neobot/neobot/core"
)

// heldRunner runs "wait" turns until they are cancelled, telling the test
// when one starts and with what cause it ended; other turns echo.
type heldRunner struct {
	started chan struct{}
	mu      sync.Mutex
	causes  []error
}

func (r *heldRunner) Run(ctx context.Context, t core.Turn) error {
	if t.Inbound.Text != "wait" {
		return t.Reporter.Say(ctx, "echo: "+t.Inbound.Text)
	}
	r.started <- struct{}{}
	<-ctx.Done()
	r.mu.Lock()
	r.causes = append(r.causes, context.Cause(ctx))
	r.mu.Unlock()
	return ctx.Err()
}

// safeBuffer is a strings.Builder safe for the REPL and the test at once.
type safeBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type session struct {
	in        *io.PipeWriter
	out, errw *safeBuffer
	interrupt chan struct{}
	runner    *heldRunner
	done      chan error
}

func startSession(t *testing.T) *session {
	t.Helper()
	pr, pw := io.Pipe()
	s := &session{in: pw, out: &safeBuffer{}, errw: &safeBuffer{}, interrupt: make(chan struct{}),
		runner: &heldRunner{started: make(chan struct{}, 1)}, done: make(chan error, 1)}
	th := core.Thread{Platform: "terminal", Workspace: "local", Channel: "local", ID: "work"}
	go func() {
		s.done <- Run(t.Context(), Options{In: pr, Out: s.out, Err: s.errw, Thread: th, Runner: s.runner, Interrupt: s.interrupt})
	}()
	t.Cleanup(func() { pw.Close() })
	return s
}

func (s *session) say(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// TestStopLineStopsTheTurn: typing stop while a turn runs stops it, as in
// Slack, and the conversation goes on.
func TestStopLineStopsTheTurn(t *testing.T) {
	s := startSession(t)
	s.say(t, "wait")
	<-s.runner.started
	s.say(t, "stop")
	s.say(t, "hello")
	s.in.Close()
	if err := <-s.done; err != nil {
		t.Fatalf("Run = %v, want a clean end", err)
	}
	if len(s.runner.causes) != 1 || !errors.Is(s.runner.causes[0], core.ErrStopped) {
		t.Errorf("turn ended with %v, want core.ErrStopped", s.runner.causes)
	}
	if !strings.Contains(s.errw.String(), "stopped") || s.out.String() != "echo: hello\n" {
		t.Errorf("Err = %q, Out = %q; want the stop noted and the next message answered", s.errw.String(), s.out.String())
	}
}

// TestInterrupt: Ctrl-C mid-turn stops the turn and the conversation goes
// on; Ctrl-C while idle leaves quietly (no error).
func TestInterrupt(t *testing.T) {
	s := startSession(t)
	s.say(t, "wait")
	<-s.runner.started
	s.interrupt <- struct{}{}
	s.say(t, "hello")
	s.in.Close()
	if err := <-s.done; err != nil {
		t.Fatalf("Run = %v, want a clean end", err)
	}
	if len(s.runner.causes) != 1 || !errors.Is(s.runner.causes[0], core.ErrStopped) || s.out.String() != "echo: hello\n" {
		t.Errorf("turn ended with %v, Out %q; want core.ErrStopped and the next message answered", s.runner.causes, s.out.String())
	}

	idle := startSession(t)
	idle.interrupt <- struct{}{}
	if err := <-idle.done; err != nil {
		t.Errorf("Run after Ctrl-C while idle = %v, want nil", err)
	}
}

// TestSecondInterruptLeaves: a second Ctrl-C while a turn stops leaves once
// it has stopped.
func TestSecondInterruptLeaves(t *testing.T) {
	s := startSession(t)
	s.say(t, "wait")
	<-s.runner.started
	s.interrupt <- struct{}{}
	s.interrupt <- struct{}{}
	if err := <-s.done; err != nil {
		t.Fatalf("Run = %v, want a clean end", err)
	}
}

// TestBanner: the conversation opens by naming its thread and how to leave.
func TestBanner(t *testing.T) {
	s := startSession(t)
	s.in.Close()
	<-s.done
	if b := s.errw.String(); !strings.Contains(b, `"work"`) || !strings.Contains(b, "exit") || !strings.Contains(b, "Ctrl-C") {
		t.Errorf("banner = %q, want the thread and how to leave", b)
	}
}
