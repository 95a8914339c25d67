package agent

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// TestStreamedAnswer: with a Reporter that streams, the final answer shows
// while it is written and is closed with the stored text; a step that says
// a few words and then calls tools takes its words back; reasoning never
// shows.
func TestStreamedAnswer(t *testing.T) {
	h := newHarness(t, nil)
	rec := coretest.NewStreamRecorder()
	// The client streams once its first answer showed the model's kind.
	h.srv.Enqueue(llmtest.Text("Warmed up.").Streamed(4, 0))
	if err := h.agent.Run(t.Context(), turnFor(inbound("E0", "hello"), rec)); err != nil {
		t.Fatal(err)
	}
	preamble := llm.Message{Role: llm.RoleAssistant, Content: "Let me look that up in the files for you first.",
		ToolCalls: []llm.ToolCall{call("c1", "fs__read_file", `{"path":"a.md"}`)}}
	answer := "The file says the deploy key rotates every 90 days, on the first Monday."
	h.srv.Enqueue(llmtest.Reply{Message: preamble}.Streamed(5, 0), llmtest.Thinking("secret plan", answer).Streamed(5, 0))
	h.tools.fn = okTool("rotation: 90d")
	if err := h.agent.Run(t.Context(), turnFor(inbound("E1", "how often does the key rotate?"), rec)); err != nil {
		t.Fatal(err)
	}
	streams := rec.Streams()
	if len(streams) != 2 {
		t.Fatalf("streams = %+v, want the tool step's (taken back) and the answer's", streams)
	}
	if !streams[0].Aborted || streams[0].Closed {
		t.Errorf("the tool-calling step's words were not taken back: %+v", streams[0])
	}
	last := streams[1]
	if !last.Closed || last.Final != answer || len(last.Writes) < 3 || strings.Join(last.Writes, "") != answer {
		t.Errorf("answer stream = %+v, want %q written in pieces and closed with it", last, answer)
	}
	for _, s := range streams {
		if strings.Contains(strings.Join(s.Writes, ""), "secret") {
			t.Errorf("reasoning was streamed: %q", s.Writes)
		}
	}
	if says := rec.Says(); len(says) != 2 || says[1] != answer {
		t.Errorf("answers = %q, want the warm-up and the streamed answer, once each", says)
	}
	if recs := h.tr.records(testThread); !recs[len(recs)-1].Final || recs[len(recs)-1].Msg.Content != answer {
		t.Errorf("the stored answer = %+v, want the final text", recs[len(recs)-1])
	}
}

func turnFor(in core.Inbound, rep core.Reporter) core.Turn {
	return core.Turn{Inbound: in, Reporter: rep}
}

func okTool(result string) func(context.Context, string, map[string]any) (string, bool, error) {
	return func(context.Context, string, map[string]any) (string, bool, error) { return result, false, nil }
}

// storedCheck is a Reporter that checks, when the answer is said, that it
// is already stored: a crash right after saying it must not answer twice.
type storedCheck struct {
	*coretest.Recorder
	tr     *memTranscript
	stored []bool
}

func (r *storedCheck) Say(ctx context.Context, text string) error {
	recs := r.tr.records(testThread)
	last := recs[len(recs)-1]
	r.stored = append(r.stored, last.Final && last.Msg != nil && last.Msg.Content == text)
	return r.Recorder.Say(ctx, text)
}

func TestAnswerStoredBeforeSaid(t *testing.T) {
	h := newHarness(t, nil)
	rep := &storedCheck{Recorder: coretest.NewRecorder(), tr: h.tr}
	h.srv.Enqueue(llmtest.Text("Stored first."))
	if err := h.agent.Run(t.Context(), turnFor(inbound("E1", "hi"), rep)); err != nil {
		t.Fatal(err)
	}
	if len(rep.stored) != 1 || !rep.stored[0] {
		t.Errorf("when the answer was said, stored = %v; want the final answer already in the transcript", rep.stored)
	}
}

// TestSupersededTurnIsNotResumed: a turn whose message was followed by a
// newer one (its own turn started after a crash) is over: resuming it
// answers nothing and calls no model.
func TestSupersededTurnIsNotResumed(t *testing.T) {
	h := newHarness(t, nil)
	u1, u2, a2 := llm.UserMessage("first question"), llm.UserMessage("second question"), llm.AssistantMessage("second answer")
	h.tr.seed(testThread, record{Msg: &u1, EventID: "E1"}, record{Msg: &u2, EventID: "E2"}, record{Msg: &a2, EventID: "E2", Final: true})
	err := h.agent.Run(t.Context(), turnFor(inbound("E1", "first question"), h.rec))
	if !errors.Is(err, core.ErrAnswered) {
		t.Errorf("Run(superseded E1) = %v, want core.ErrAnswered", err)
	}
	if n := len(h.srv.Requests()); n != 0 || len(h.rec.Says()) != 0 {
		t.Errorf("a superseded turn called the model %d times and said %q", n, h.rec.Says())
	}
}
