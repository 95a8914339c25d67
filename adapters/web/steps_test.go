package web

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/neobot/neobot/core"
)

// TestStepEvents: a step is a step event on the conversation's stream,
// as openapi.json's Step schema says, for every state.
func TestStepEvents(t *testing.T) {
	a, _ := newAdapter(t)
	th := core.Thread{Platform: Platform, Workspace: "web", Channel: "alice", ID: "conv1"}
	s, ok := a.Reporter(th).(core.Stepper)
	if !ok {
		t.Fatal("the web reporter does not show steps")
	}
	ctx := context.Background()
	for _, st := range []core.Step{
		{ID: "c1", Plan: "rotate the key", Title: "Read file (fs)", State: core.StepRunning},
		{ID: "c1", Plan: "rotate the key", Title: "Read file (fs)", State: core.StepFailed, Output: "no such file"},
	} {
		if err := s.Step(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	evs, _, _ := a.feed.since("conv1", "")
	var got []stepData
	for _, e := range evs {
		if e.Type != EventStep {
			continue
		}
		var d stepData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
	}
	want := []stepData{{ID: "c1", Plan: "rotate the key", Title: "Read file (fs)", State: "in_progress"},
		{ID: "c1", Plan: "rotate the key", Title: "Read file (fs)", State: "error", Output: "no such file"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("step events = %+v, want %+v", got, want)
	}
}
