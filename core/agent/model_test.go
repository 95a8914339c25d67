package agent

import (
	"testing"
	"time"

	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
	"github.com/neobot/neobot/core/skill"
)

// TestPlaceModel: a place whose stored settings choose another main model
// has its turns call that model, from the next turn after the change and
// back when the change is undone; other places keep the configured one.
func TestPlaceModel(t *testing.T) {
	set, err := skill.Compile(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(o *Options) { o.Skills = set })
	small, err := llm.New(llm.Config{Provider: "openai-compatible", BaseURL: h.srv.BaseURL(), Model: "small-model", Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h.agent.opts.Models = map[string]Model{"small-model": small}
	h.srv.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Text("Done.") })
	place := testThread.Platform + ":" + testThread.Workspace + "/" + testThread.Channel
	models := func() []string {
		var out []string
		for _, r := range h.srv.Requests() {
			out = append(out, r.Model)
		}
		return out
	}
	turn := func(event string) string {
		t.Helper()
		if err := h.run(t, inbound(event, "hello")); err != nil {
			t.Fatal(err)
		}
		all := models()
		return all[len(all)-1]
	}
	if got := turn("E1"); got != "test-model" {
		t.Errorf("before any stored setting the turn called %q, want test-model", got)
	}
	if err := set.Govern(map[string]skill.Placed{place: {Model: "small-model"}, "slack:T99": {Model: "small-model"}}); err != nil {
		t.Fatal(err)
	}
	if got := turn("E2"); got != "small-model" {
		t.Errorf("after the place chose small-model the turn called %q", got)
	}
	if err := set.Govern(nil); err != nil {
		t.Fatal(err)
	}
	if got := turn("E3"); got != "test-model" {
		t.Errorf("after the setting was undone the turn called %q, want test-model", got)
	}
}
