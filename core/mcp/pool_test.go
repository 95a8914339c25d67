package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/core/coretest"
)

// placeStdio is goStdio with a place placeholder: one process per
// workspace, each told its workspace in its environment and its
// arguments, and given a directory under root.
func placeStdio(alias, root string) ServerSpec {
	s := goStdio(alias)
	s.Env = append(slices.Clone(s.Env), placeVar+"={workspace}")
	s.Args = []string{"--root=" + filepath.Join(root, "{workspace}")}
	s.CreateDirs = []string{filepath.Join(root, "{workspace}", "files")}
	s.Tools = append(slices.Clone(testToolNames), "place")
	return s
}

// processFeed collects OnProcess events.
type processFeed chan ProcessEvent

func (f processFeed) on(ev ProcessEvent) { f <- ev }

// wait returns the next event of kind, failing on any other kind of event
// not listed in skip.
func (f processFeed) wait(t *testing.T, kind ProcessEventKind) ProcessEvent {
	t.Helper()
	timeout := time.NewTimer(30 * time.Second) // a failsafe: the event comes or the test is broken
	defer timeout.Stop()
	select {
	case ev := <-f:
		if ev.Kind != kind {
			t.Fatalf("process event = %+v, want %s", ev, kind)
		}
		return ev
	case <-timeout.C:
		t.Fatalf("no process %s event", kind)
	}
	return ProcessEvent{}
}

// none fails t if an event is waiting.
func (f processFeed) none(t *testing.T) {
	t.Helper()
	select {
	case ev := <-f:
		t.Fatalf("unexpected process event %+v", ev)
	default:
	}
}

type poolWorld struct {
	m     *Manager
	feed  processFeed
	clock *coretest.Clock
	root  string
}

func newPoolWorld(t *testing.T, edit func(*ServerSpec)) *poolWorld {
	t.Helper()
	w := &poolWorld{feed: make(processFeed, 64), clock: coretest.NewClock(time.Unix(1e9, 0)), root: t.TempDir()}
	spec := placeStdio("ws", w.root)
	if edit != nil {
		edit(&spec)
	}
	w.m = start(t, Options{Manifest: manifest(spec), LookupEnv: testEnv(nil).lookup, OnProcess: w.feed.on, Clock: w.clock})
	if st := w.m.Status()[0]; st.State != StateUp {
		t.Fatalf("Status() = %s %q, want up", st.State, st.Problem)
	}
	return w
}

func (w *poolWorld) call(t *testing.T, place Place, tool string) string {
	t.Helper()
	res, err := w.m.CallIn(context.Background(), place, "ws", tool, nil)
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("CallIn(%+v, %s) = %+v, %v; want a result", place, tool, res, err)
	}
	return res.Content[0].Text
}

func slackPlace(team, user string) Place {
	return Place{Platform: "slack", Workspace: team, User: user}
}

// TestPoolStartsOnFirstUse: a server with {workspace} learns its tools at
// boot from a process it then stops, and starts one process per workspace
// on the first call there, with the placeholders replaced.
func TestPoolStartsOnFirstUse(t *testing.T) {
	w := newPoolWorld(t, nil)
	st := w.m.Status()[0]
	if st.Processes != 0 || len(st.Tools) != len(testToolNames)+1 {
		t.Fatalf("Status() after boot = %d processes, %d tools; want 0 processes, %d tools", st.Processes, len(st.Tools), len(testToolNames)+1)
	}
	if ents, _ := os.ReadDir(w.root); len(ents) != 0 {
		t.Errorf("root after boot holds %v, want the template's directory removed", ents)
	}
	w.feed.none(t)

	got := w.call(t, slackPlace("T1", "UALICE"), "place")
	if want := "slack.T1 --root=" + filepath.Join(w.root, "slack.T1"); got != want {
		t.Errorf("place() in T1 = %q, want %q", got, want)
	}
	first := w.feed.wait(t, ProcessStarted)
	if first.Place != "slack.T1" || first.PID == 0 {
		t.Errorf("started event = %+v, want place slack.T1 with a pid", first)
	}
	if _, err := os.Stat(filepath.Join(w.root, "slack.T1", "files")); err != nil {
		t.Errorf("create_dirs for T1: %v", err)
	}
	// Another user of the same workspace shares its process.
	pid := w.call(t, slackPlace("T1", "UBOB"), "pid")
	if !strings.HasPrefix(pid, strconv.Itoa(first.PID)+" ") {
		t.Errorf("pid() for Bob in T1 = %q, want the process %d", pid, first.PID)
	}
	w.feed.none(t)

	if got := w.call(t, slackPlace("T2", "UALICE"), "place"); !strings.HasPrefix(got, "slack.T2 ") {
		t.Errorf("place() in T2 = %q, want slack.T2's process", got)
	}
	second := w.feed.wait(t, ProcessStarted)
	if second.PID == first.PID || second.Place != "slack.T2" {
		t.Errorf("started event for T2 = %+v, want its own process", second)
	}
	if n := w.m.Status()[0].Processes; n != 2 {
		t.Errorf("Status().Processes = %d, want 2", n)
	}

	if _, err := w.m.Call(context.Background(), "ws", "echo", map[string]any{"text": "x"}); !errors.Is(err, ErrNoPlace) || !errors.Is(err, ErrServerDown) {
		t.Errorf("Call() outside a place error = %v, want ErrServerDown and ErrNoPlace", err)
	}

	if err := w.m.Close(); err != nil {
		t.Fatalf("Close() error = %v", err)
	}
	for range 2 {
		if ev := w.feed.wait(t, ProcessStopped); ev.Reason != StopClosed {
			t.Errorf("stopped event = %+v, want reason closed", ev)
		}
	}
	for _, pid := range []int{first.PID, second.PID} {
		if live := liveGroup(t, pid); len(live) > 0 {
			t.Errorf("process group %d still has %v after Close", pid, live)
		}
	}
}

// TestPoolIdleStop: a place's process stops once it has been idle for the
// idle timeout, counted from its last call; the next call starts a new one.
func TestPoolIdleStop(t *testing.T) {
	const idle = 5 * time.Minute
	w := newPoolWorld(t, func(s *ServerSpec) { s.IdleTimeout = Duration(idle) })
	ctx := waitCtx(t)
	alice := slackPlace("T1", "UALICE")
	w.call(t, alice, "echo")
	started := w.feed.wait(t, ProcessStarted)
	if err := w.clock.WaitPending(ctx, 1); err != nil {
		t.Fatalf("the reaper never armed its timer: %v", err)
	}

	w.clock.Advance(idle - time.Minute)
	w.call(t, alice, "echo") // idle time starts again
	w.clock.Advance(2 * time.Minute)
	// The first deadline has passed: the reaper wakes, finds the process
	// used since, and waits for the new deadline.
	if err := w.clock.WaitPending(ctx, 1); err != nil {
		t.Fatal(err)
	}
	w.feed.none(t)
	if n := w.m.Status()[0].Processes; n != 1 {
		t.Fatalf("Status().Processes = %d before the idle timeout, want 1", n)
	}

	w.clock.Advance(idle)
	stopped := w.feed.wait(t, ProcessStopped)
	if stopped.Reason != StopIdle || stopped.PID != started.PID {
		t.Errorf("stopped event = %+v, want process %d stopped idle", stopped, started.PID)
	}
	if live := liveGroup(t, started.PID); len(live) > 0 {
		t.Errorf("process group %d still has %v after the idle stop", started.PID, live)
	}
	if n := w.m.Status()[0].Processes; n != 0 {
		t.Errorf("Status().Processes = %d after the idle stop, want 0", n)
	}
	w.call(t, alice, "echo")
	if again := w.feed.wait(t, ProcessStarted); again.PID == started.PID {
		t.Errorf("a call after the idle stop used pid %d again, want a new process", again.PID)
	}
}

// TestPoolBound: with max_processes live, a new place stops the process
// idle the longest before its own starts; a call finding every slot busy
// waits for one.
func TestPoolBound(t *testing.T) {
	w := newPoolWorld(t, func(s *ServerSpec) { s.MaxProcesses = 2 })
	ctx := waitCtx(t)
	pids := map[string]int{}
	for _, team := range []string{"T1", "T2"} {
		w.call(t, slackPlace(team, "U1"), "echo")
		ev := w.feed.wait(t, ProcessStarted)
		pids[ev.Place] = ev.PID
		w.clock.Advance(time.Second) // T1 is idle the longest
	}
	w.call(t, slackPlace("T1", "U1"), "echo") // now T2 is
	w.clock.Advance(time.Second)
	w.feed.none(t)

	w.call(t, slackPlace("T3", "U1"), "echo")
	if ev := w.feed.wait(t, ProcessStopped); ev.Reason != StopEvicted || ev.Place != "slack.T2" {
		t.Errorf("first event = %+v, want slack.T2 evicted", ev)
	}
	if ev := w.feed.wait(t, ProcessStarted); ev.Place != "slack.T3" {
		t.Errorf("second event = %+v, want slack.T3 started", ev)
	}
	if live := liveGroup(t, pids["slack.T2"]); len(live) > 0 {
		t.Errorf("evicted process group still has %v", live)
	}
	if n := w.m.Status()[0].Processes; n != 2 {
		t.Errorf("Status().Processes = %d, want the bound 2", n)
	}

	// Hold both slots, as two long calls would; a third place waits.
	p := w.m.byAlias["ws"].pool
	var held []*proc
	for _, team := range []string{"T1", "T3"} {
		pr, err := p.acquire(ctx, slackPlace(team, "U1"))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, pr)
	}
	short, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := w.m.CallIn(short, slackPlace("T4", "U1"), "ws", "echo", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("CallIn() with every slot busy and ctx done error = %v, want context.Canceled", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := w.m.CallIn(ctx, slackPlace("T4", "U1"), "ws", "echo", map[string]any{"text": "x"})
		done <- err
	}()
	w.clock.Advance(time.Second)
	p.release(held[1]) // T3 goes idle: T4 takes its slot
	if err := <-done; err != nil {
		t.Fatalf("CallIn(T4) error = %v", err)
	}
	if ev := w.feed.wait(t, ProcessStopped); ev.Place != "slack.T3" || ev.Reason != StopEvicted {
		t.Errorf("event = %+v, want slack.T3 evicted", ev)
	}
	w.feed.wait(t, ProcessStarted)
	p.release(held[0])
}

// TestPoolBijectionPerProcess: each place's process is checked against
// the manifest's tools; one that differs is refused, the others serve.
func TestPoolBijectionPerProcess(t *testing.T) {
	w := newPoolWorld(t, nil)
	_, err := w.m.CallIn(context.Background(), slackPlace("Tdrift", "U1"), "ws", "echo", nil)
	var drift *DriftError
	if !errors.Is(err, ErrServerDown) || !errors.As(err, &drift) || !slices.Equal(drift.Unexpected, []string{"zap"}) {
		t.Fatalf("CallIn() in a drifting place error = %v, want ErrServerDown with zap unexpected", err)
	}
	if ev := w.feed.wait(t, ProcessFailed); ev.Place != "slack.Tdrift" || !strings.Contains(ev.Reason, "zap") {
		t.Errorf("event = %+v, want slack.Tdrift failed for zap", ev)
	}
	if n := w.m.Status()[0].Processes; n != 0 {
		t.Errorf("Status().Processes = %d after a refused process, want 0", n)
	}
	w.call(t, slackPlace("T1", "U1"), "echo")
	w.feed.wait(t, ProcessStarted)
}

// TestPoolBootDrift: the process started at boot is checked too: a server
// whose tools differ is rejected as a static one is.
func TestPoolBootDrift(t *testing.T) {
	spec := placeStdio("ws", t.TempDir())
	spec.Tools = testToolNames // without "place"
	m := start(t, Options{Manifest: manifest(spec), LookupEnv: testEnv(nil).lookup})
	if st := m.Status()[0]; st.State != StateRejected || !strings.Contains(st.Problem, "place") {
		t.Errorf("Status() = %s %q, want rejected for the unexpected tool place", st.State, st.Problem)
	}
}

// TestPoolSanitisedValues: a crafted workspace or user ID becomes one
// harmless path element: the directories stay under the root.
func TestPoolSanitisedValues(t *testing.T) {
	w := newPoolWorld(t, func(s *ServerSpec) {
		s.Env[len(s.Env)-1] = placeVar + "={user}"
		s.CreateDirs = []string{filepath.Join(filepath.Dir(s.CreateDirs[0]), "{user}")}
	})
	for _, place := range []Place{
		{Platform: "slack", Workspace: "..", User: ".."},
		{Platform: "web", Workspace: "web", User: "../../../etc", Personal: true},
		{Platform: "slack", Workspace: "T1/../../x", User: "-rf"},
	} {
		got := w.call(t, place, "place")
		value := strings.Fields(got)[0]
		if strings.ContainsAny(value, "/\\") || strings.HasPrefix(value, ".") || strings.HasPrefix(value, "-") {
			t.Errorf("{user} for %+v = %q, want one safe path element", place, value)
		}
		w.feed.wait(t, ProcessStarted)
	}
	ents, _ := os.ReadDir(w.root)
	if len(ents) != 3 {
		t.Errorf("root holds %d entries, want 3 (one per user)", len(ents))
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(w.root), "x")); err == nil {
		t.Errorf("a directory was created outside the root")
	}
}

func TestEscapePart(t *testing.T) {
	tests := []struct{ in, want string }{
		{"T0123ABC", "T0123ABC"},
		{"", "_"},
		{"..", "_2E_2E"},
		{"a/b", "a_2Fb"},
		{"-rf", "_2Drf"},
		{"a-b", "a-b"},
		{"_2F", "_5F2F"},
		{"@me", "_40me"},
		{"é", "_C3_A9"},
		{"a b\x00", "a_20b_00"},
	}
	for _, tt := range tests {
		if got := EscapePart(tt.in); got != tt.want {
			t.Errorf("EscapePart(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	long := EscapePart(strings.Repeat("x", 200))
	if !strings.HasPrefix(long, "_h") || len(long) != 34 || long == EscapePart(strings.Repeat("x", 201)) {
		t.Errorf("EscapePart(200 x) = %q, want a distinct _h hash", long)
	}
	seen := map[string]string{}
	for _, in := range []string{"a.b", "a_2Eb", "a_2eb", "ab", "a/b", "a%2Fb", "A", "a", "_", "", "-", "x-"} {
		got := EscapePart(in)
		if prev, dup := seen[got]; dup {
			t.Errorf("EscapePart(%q) = EscapePart(%q) = %q, want distinct", in, prev, got)
		}
		seen[got] = in
	}
}

func TestPlaceValues(t *testing.T) {
	tests := []struct {
		place          Place
		workspace, usr string
	}{
		{Place{Platform: "slack", Workspace: "T1", User: "U1"}, "slack.T1", "slack.T1.U1"},
		{Place{Platform: "web", Workspace: "web", User: "alice", Personal: true}, "web.web.alice", "web.web.alice"},
		{Place{Platform: "discord", Workspace: "@me", User: "42", Personal: true}, "discord._40me.42", "discord._40me.42"},
		{Place{Platform: "slack", Workspace: "T1.U1", User: ""}, "slack.T1_2EU1", "slack.T1_2EU1._"},
	}
	for _, tt := range tests {
		if got := tt.place.WorkspaceValue(); got != tt.workspace {
			t.Errorf("%+v.WorkspaceValue() = %q, want %q", tt.place, got, tt.workspace)
		}
		if got := tt.place.UserValue(); got != tt.usr {
			t.Errorf("%+v.UserValue() = %q, want %q", tt.place, got, tt.usr)
		}
	}
}

func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a failsafe, not a timing
	t.Cleanup(cancel)
	return ctx
}

// TestPoolConcurrentPlaces: calls from many places at once, more places
// than the bound: every call is answered by its own place's process, and
// no more than max_processes ever run.
func TestPoolConcurrentPlaces(t *testing.T) {
	const bound, places, workers, calls = 3, 7, 6, 15
	w := newPoolWorld(t, func(s *ServerSpec) { s.MaxProcesses = bound })
	var wg sync.WaitGroup
	errs := make(chan error, workers*calls)
	for i := range workers {
		wg.Go(func() {
			for j := range calls {
				team := fmt.Sprintf("T%d", (i*calls+j)%places)
				res, err := w.m.CallIn(context.Background(), slackPlace(team, "U1"), "ws", "place", nil)
				switch {
				case err != nil:
					errs <- err
				case !strings.HasPrefix(res.Content[0].Text, "slack."+team+" "):
					errs <- fmt.Errorf("place() in %s = %q", team, res.Content[0].Text)
				}
			}
		})
	}
	live, peak := 0, 0
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	count := func(ev ProcessEvent) {
		switch ev.Kind {
		case ProcessStarted:
			live++
		case ProcessStopped:
			live--
		}
		peak = max(peak, live)
	}
	for running := true; running; {
		select {
		case ev := <-w.feed:
			count(ev)
		case <-done:
			running = false
		}
	}
	for drained := false; !drained; {
		select {
		case ev := <-w.feed:
			count(ev)
		default:
			drained = true
		}
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if peak > bound || peak == 0 {
		t.Errorf("at most %d processes ran at once, want 1 to %d", peak, bound)
	}
	if n := w.m.Status()[0].Processes; n > bound {
		t.Errorf("Status().Processes = %d, want at most %d", n, bound)
	}
}
