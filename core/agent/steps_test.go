package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// stepRecorder is a Reporter that shows steps.
type stepRecorder struct {
	*coretest.Recorder
	mu    sync.Mutex
	steps []core.Step
}

func (s *stepRecorder) Step(_ context.Context, st core.Step) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps = append(s.steps, st)
	return nil
}

// TestStepsShowEachCall: where the reporter shows steps, each tool call is
// one, shown running and then complete or failed with the tool's short
// output; the arguments never, and no status line names the tools.
func TestStepsShowEachCall(t *testing.T) {
	h := newHarness(t, nil)
	h.tools.fn = func(ctx context.Context, name string, args map[string]any) (string, bool, error) {
		if name == "fs__write_file" {
			return "permission denied: notes/b.txt\nmore detail", true, nil
		}
		return fmt.Sprintf("\n  read %d bytes\nsecond line", 42), false, nil
	}
	h.srv.Enqueue(llmtest.Calls(call("c1", "fs__read_file", `{"path":"SECRET-PATH"}`), call("c2", "fs__write_file", `{"path":"b"}`)),
		llmtest.Text("Read a, could not write b."))
	rep := &stepRecorder{Recorder: coretest.NewRecorder()}
	ctx := context.Background()
	if err := h.agent.Run(ctx, core.Turn{Inbound: inbound("E1", "copy a to b\nplease"), Reporter: rep}); err != nil {
		t.Fatalf("Run = %v", err)
	}
	got := map[string][]string{}
	for _, s := range rep.steps {
		got[s.ID] = append(got[s.ID], fmt.Sprintf("%s|%s|%s|%s", s.Plan, s.Title, s.State, s.Output))
		if strings.Contains(s.Output+s.Title, "SECRET") {
			t.Errorf("a step showed an argument: %+v", s)
		}
	}
	want := map[string][]string{
		"c1": {"copy a to b|Read file (fs)|in_progress|", "copy a to b|Read file (fs)|complete|read 42 bytes"},
		"c2": {"copy a to b|Write file (fs)|in_progress|", "copy a to b|Write file (fs)|error|permission denied: notes/b.txt"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("steps = %v\nwant %v", got, want)
	}
	if st := rep.Statuses(); strings.Contains(strings.Join(st, "|"), "Using") {
		t.Errorf("Statuses = %q: a reporter that shows steps needs no Using line", st)
	}
}

func TestStepTitle(t *testing.T) {
	for in, want := range map[string]string{
		"fs__read_file": "Read file (fs)", "history_search": "History search", "core_execute": "Core execute",
		"github__list-issues": "List issues (github)", "x__": "x__",
	} {
		if got := StepTitle(in); got != want {
			t.Errorf("StepTitle(%q) = %q, want %q", in, got, want)
		}
	}
}
