package agent

import (
	"context"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/delegate"
	"github.com/neobot/neobot/core/delegate/delegatetest"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// TestGeneratedCallIDsUniqueInATurn: a provider that omits tool call IDs,
// or numbers them afresh at each step, still gets each core_execute of a
// turn its own idempotency key, so a second spend in the same turn is a new
// spend at the daemon, not a replay of the first; the same holds whether
// the answer is streamed or not.
func TestGeneratedCallIDsUniqueInATurn(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
		id     string // the ID the provider gives each call
	}{
		{"whole answers", false, ""},
		{"streamed answers", true, ""},
		{"a provider numbering calls at each step", false, "call_0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			d := delegatetest.New(t)
			d.Script(delegatetest.Intent{Answer: "sent 5 PAX to bob"}, delegatetest.Intent{Answer: "sent 7 PAX to carol"})
			dc, err := delegate.New(delegate.Options{BaseURL: d.URL(), PollInterval: time.Millisecond, Timeout: 10 * time.Second})
			if err != nil {
				t.Fatalf("delegate.New: %v", err)
			}
			h := newHarness(t, nil)
			h.tools.fn = func(ctx context.Context, name string, args map[string]any) (string, bool, error) {
				if name != "core_execute" {
					return "ok:" + name, false, nil
				}
				out, err := dc.Run(ctx, args["intent"].(string))
				if err != nil {
					return err.Error(), true, nil
				}
				return out, false, nil
			}
			var rep core.Reporter = h.rec
			if tt.stream {
				srec := coretest.NewStreamRecorder()
				rep = srec
				// The client streams once its first answer showed the model's kind.
				h.srv.Enqueue(llmtest.Text("Warmed up.").Streamed(4, 0))
				if err := h.agent.Run(ctx, turnFor(inbound("E0", "hello"), srec)); err != nil {
					t.Fatal(err)
				}
			}
			replies := []llmtest.Reply{
				llmtest.Calls(call(tt.id, "core_execute", `{"intent":"send 5 PAX to bob"}`)),
				llmtest.Calls(call(tt.id, "core_execute", `{"intent":"send 7 PAX to carol"}`)),
				llmtest.Text("Sent both."),
			}
			for _, r := range replies {
				if tt.stream {
					r = r.Streamed(8, 0)
				}
				h.srv.Enqueue(r)
			}
			if err := h.agent.Run(ctx, turnFor(inbound("E1", "pay bob 5 PAX, then carol 7"), rep)); err != nil {
				t.Fatal(err)
			}
			got := d.Intents()
			if len(got) != 2 {
				t.Fatalf("daemon intents = %+v, want two spends", got)
			}
			if got[0].Key == "" || got[0].Key == got[1].Key {
				t.Errorf("idempotency keys = %q, %q; want two distinct keys", got[0].Key, got[1].Key)
			}
			if got[1].Prose != "send 7 PAX to carol" {
				t.Errorf("second intent = %q, want the second spend", got[1].Prose)
			}
		})
	}
}
