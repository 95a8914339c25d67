package agent

import (
	"testing"

	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// TestReasoningOnTheWire: through the agent, a tool-call turn's reasoning
// goes back to the model only where the provider needs it echoed; an
// answer's reasoning never does.
func TestReasoningOnTheWire(t *testing.T) {
	for _, echo := range []bool{false, true} {
		t.Run(map[bool]string{false: "provider without echo", true: "provider that needs echo"}[echo], func(t *testing.T) {
			h := newHarness(t, nil)
			c, err := llm.New(llm.Config{Provider: "openai-compatible", BaseURL: h.srv.BaseURL(), Model: "test-model", EchoReasoning: &echo})
			if err != nil {
				t.Fatal(err)
			}
			h.agent.opts.Model = c
			think := llmtest.Calls(call("c1", "fs__read_file", `{}`))
			think.Message.Reasoning = "I should read the file first."
			answer := llmtest.Text("It says hello.")
			answer.Message.Reasoning = "The file says hello."
			h.srv.Enqueue(think, answer, llmtest.Text("You're welcome."))
			if err := h.run(t, inbound("E1", "read it")); err != nil {
				t.Fatal(err)
			}
			if err := h.run(t, inbound("E2", "thanks")); err != nil {
				t.Fatal(err)
			}
			reqs := h.srv.Requests()
			var body struct {
				Messages []struct {
					Role             string `json:"role"`
					Content          string `json:"content"`
					ReasoningContent string `json:"reasoning_content"`
				} `json:"messages"`
			}
			if err := reqs[len(reqs)-1].Decode(&body); err != nil {
				t.Fatal(err)
			}
			var toolTurn, answerTurn string
			for _, m := range body.Messages {
				if m.Role != "assistant" {
					continue
				}
				if m.Content == "It says hello." {
					answerTurn = m.ReasoningContent
				} else {
					toolTurn = m.ReasoningContent
				}
			}
			if want := map[bool]string{true: "I should read the file first."}[echo]; toolTurn != want {
				t.Errorf("tool-call turn sent reasoning %q, want %q", toolTurn, want)
			}
			if answerTurn != "" {
				t.Errorf("answer turn sent reasoning %q, want none", answerTurn)
			}
		})
	}
}
