package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

func TestPlainAnswer(t *testing.T) {
	h := newHarness(t, nil)
	h.srv.Enqueue(llmtest.Text("Hello, Ada."))
	if err := h.run(t, inbound("E1", "hi")); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	if got := h.rec.Says(); len(got) != 1 || got[0] != "Hello, Ada." {
		t.Errorf("Says = %q, want [Hello, Ada.]", got)
	}
	if got := h.rec.Statuses(); len(got) == 0 || got[0] != "Thinking…" {
		t.Errorf("Statuses = %q, want Thinking… first", got)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 1 || reqs[0].Messages[0].Role != llm.RoleSystem || reqs[0].Messages[1].Content != "hi" || len(reqs[0].Tools) != 3 {
		t.Fatalf("requests = %+v, want one with system, user hi and 3 tools", reqs)
	}
	recs := h.tr.records(testThread)
	if len(recs) != 2 || recs[0].EventID != "E1" || recs[0].Msg.Role != llm.RoleUser || !recs[1].Final || recs[1].EventID != "E1" {
		t.Errorf("transcript = %+v, want user E1 then final E1", recs)
	}
	h.agent.Close() // the write-back runs after the turn
	if len(h.mem.written) != 1 || len(h.mem.written[0]) != 2 {
		t.Errorf("WriteBack = %v, want one turn of 2 messages", h.mem.written)
	}
}

func TestMultiStepToolUse(t *testing.T) {
	h := newHarness(t, nil)
	h.tools.fn = func(ctx context.Context, name string, args map[string]any) (string, bool, error) {
		return fmt.Sprintf("%s(%v) done", name, args["path"]), false, nil
	}
	var persistedBefore []int
	step := 0
	h.srv.Handle(func(r llmtest.Request) llmtest.Reply {
		persistedBefore = append(persistedBefore, len(h.tr.records(testThread)))
		step++
		switch step {
		case 1:
			return llmtest.Calls(call("c1", "fs__read_file", `{"path":"a.txt"}`))
		case 2:
			return llmtest.Calls(call("c2", "fs__write_file", `{"path":"b.txt"}`))
		}
		return llmtest.Text("Copied a.txt to b.txt.")
	})
	if err := h.run(t, inbound("E1", "copy a to b")); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if got := h.rec.Says(); len(got) != 1 || got[0] != "Copied a.txt to b.txt." {
		t.Errorf("Says = %q", got)
	}
	// user; then +assistant +tool before call 2; +assistant +tool before call 3.
	if want := []int{1, 3, 5}; fmt.Sprint(persistedBefore) != fmt.Sprint(want) {
		t.Errorf("entries persisted before each model call = %v, want %v", persistedBefore, want)
	}
	calls := h.tools.recorded()
	if len(calls) != 2 || calls[0].CallID != "c1" || calls[1].CallID != "c2" || !calls[0].HasTurn {
		t.Errorf("dispatches = %+v, want c1 then c2 with the turn and call ID in ctx", calls)
	}
	last := h.srv.Requests()[2]
	tm := toolMessages(last)
	if len(tm) != 2 || tm[0].Content != "fs__read_file(a.txt) done" || tm[1].ToolCallID != "c2" {
		t.Errorf("tool messages sent = %+v", tm)
	}
	if st := h.rec.Statuses(); !strings.Contains(strings.Join(st, "|"), "Using fs__read_file…") {
		t.Errorf("Statuses = %q, want a Using fs__read_file… line", st)
	}
}

func TestParallelCalls(t *testing.T) {
	h := newHarness(t, nil)
	const n = 3
	var started atomic.Int32
	all := make(chan struct{})
	h.tools.fn = func(ctx context.Context, name string, args map[string]any) (string, bool, error) {
		if started.Add(1) == n {
			close(all)
		}
		// Every call waits for all the others: only concurrent dispatch
		// gets past this.
		select {
		case <-all:
		case <-ctx.Done():
			return "", false, ctx.Err()
		}
		return "read " + args["path"].(string), false, nil
	}
	h.srv.Enqueue(llmtest.Calls(
		call("p1", "fs__read_file", `{"path":"1"}`),
		call("p2", "fs__read_file", `{"path":"2"}`),
		call("p3", "fs__read_file", `{"path":"3"}`),
	), llmtest.Text("done"))
	if err := h.run(t, inbound("E1", "read three")); err != nil {
		t.Fatalf("Run = %v", err)
	}
	tm := toolMessages(h.srv.Requests()[1])
	var got []string
	for _, m := range tm {
		got = append(got, m.ToolCallID+"="+m.Content)
	}
	if want := "[p1=read 1 p2=read 2 p3=read 3]"; fmt.Sprint(got) != want {
		t.Errorf("tool messages = %v, want %s (one per call, in order)", got, want)
	}
}

func TestRetryThenSuccess(t *testing.T) {
	h := newHarness(t, nil)
	var fails atomic.Int32
	h.tools.fn = func(ctx context.Context, name string, args map[string]any) (string, bool, error) {
		if fails.Add(1) <= 2 {
			return "", false, errors.New("connection reset")
		}
		return "contents", false, nil
	}
	h.srv.Enqueue(
		llmtest.Error(http.StatusServiceUnavailable, "overloaded", "try later"),
		llmtest.RateLimited(7*time.Second, "slow down"),
		llmtest.Calls(call("c1", "fs__read_file", `{"path":"x"}`)),
		llmtest.Text("It says contents."),
	)
	if err := h.run(t, inbound("E1", "read x")); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if got := h.rec.Says(); len(got) != 1 || got[0] != "It says contents." {
		t.Errorf("Says = %q", got)
	}
	if got := len(h.tools.recorded()); got != 3 {
		t.Errorf("dispatches = %d, want 3 (two failures, one success)", got)
	}
	// 503 -> jittered 500ms*0.75; 429 -> Retry-After 7s; tool retries 1 and 2.
	want := []time.Duration{375 * time.Millisecond, 7 * time.Second, 375 * time.Millisecond, 750 * time.Millisecond}
	if got := h.sl.all(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("backoff waits = %v, want %v", got, want)
	}
	if tm := toolMessages(h.srv.Requests()[3]); len(tm) != 1 || tm[0].Content != "contents" {
		t.Errorf("tool result sent = %+v, want contents", tm)
	}
}

func TestRetriesExhaustedThenAdapt(t *testing.T) {
	h := newHarness(t, nil)
	h.tools.fn = func(ctx context.Context, name string, args map[string]any) (string, bool, error) {
		if name == "fs__read_file" {
			return "", false, errors.New("server exited")
		}
		return "written", false, nil
	}
	h.srv.Enqueue(
		llmtest.Calls(call("c1", "fs__read_file", `{"path":"x"}`)),
		llmtest.Calls(call("c2", "fs__write_file", `{"path":"x"}`)),
		llmtest.Text("I wrote x instead."),
	)
	if err := h.run(t, inbound("E1", "do x")); err != nil {
		t.Fatalf("Run = %v", err)
	}
	reads := 0
	for _, c := range h.tools.recorded() {
		if c.Name == "fs__read_file" {
			reads++
		}
	}
	if reads != 1+DefaultMaxRetriesPerTool {
		t.Errorf("read attempts = %d, want %d", reads, 1+DefaultMaxRetriesPerTool)
	}
	tm := toolMessages(h.srv.Requests()[1])
	if len(tm) != 1 || !strings.HasPrefix(tm[0].Content, "error: fs__read_file could not be reached after 4 attempt(s)") {
		t.Errorf("signal to the model = %+v, want the error after 4 attempts", tm)
	}
	if got := h.rec.Says(); len(got) != 1 || got[0] != "I wrote x instead." {
		t.Errorf("Says = %q", got)
	}
}

func TestCoreExecuteNeverRetried(t *testing.T) {
	h := newHarness(t, nil)
	h.tools.fn = func(ctx context.Context, name string, args map[string]any) (string, bool, error) {
		return "", false, errors.New("timeout")
	}
	h.srv.Enqueue(llmtest.Calls(call("c1", "core_execute", `{"intent":"send 5 USDC"}`)), llmtest.Text("It failed; nothing was sent."))
	if err := h.run(t, inbound("E1", "send")); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if got := len(h.tools.recorded()); got != 1 {
		t.Errorf("core_execute dispatches = %d, want 1", got)
	}
}

func TestAdaptExhaustedHonestPartial(t *testing.T) {
	h := newHarness(t, nil)
	h.tools.fn = func(ctx context.Context, name string, args map[string]any) (string, bool, error) {
		return "no such file " + args["path"].(string), true, nil
	}
	h.srv.Enqueue(
		llmtest.Calls(call("c1", "fs__read_file", `{"path":"a"}`)),
		llmtest.Calls(call("c2", "fs__read_file", `{"path":"b"}`)),
		llmtest.Calls(call("c3", "fs__read_file", `{"path":"c"}`)),
	)
	if err := h.run(t, inbound("E1", "find it")); err != nil {
		t.Fatalf("Run = %v", err)
	}
	says := h.rec.Says()
	if len(says) != 1 || !strings.Contains(says[0], "I couldn't finish this: fs__read_file kept failing (3 times)") {
		t.Fatalf("Says = %q, want an honest partial", says)
	}
	if tm := toolMessages(h.srv.Requests()[2]); !strings.Contains(tm[1].Content, "core_execute") {
		t.Errorf("second failure signal = %q, want the escalation hint", tm[1].Content)
	}
	recs := h.tr.records(testThread)
	if last := recs[len(recs)-1]; !last.Final || !last.Partial {
		t.Errorf("last entry = %+v, want a final partial", last)
	}
}

func TestStall(t *testing.T) {
	for _, tc := range []struct {
		name     string
		changing bool
		want     string
	}{
		{"same results stall", false, "I couldn't finish this: I was repeating the same steps (fs__read_file) without making progress."},
		{"changed result is progress", true, "The file changed 3 times."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			var n atomic.Int32
			h.tools.fn = func(ctx context.Context, name string, args map[string]any) (string, bool, error) {
				if tc.changing {
					return fmt.Sprintf("version %d", n.Add(1)), false, nil
				}
				return "same", false, nil
			}
			for i := range 3 {
				h.srv.Enqueue(llmtest.Calls(call(fmt.Sprintf("c%d", i), "fs__read_file", `{"path":"log", "tail": 5}`)))
			}
			h.srv.Enqueue(llmtest.Text("The file changed 3 times."))
			if err := h.run(t, inbound("E1", "watch")); err != nil {
				t.Fatalf("Run = %v", err)
			}
			says := h.rec.Says()
			if len(says) != 1 || !strings.HasPrefix(says[0], tc.want) {
				t.Errorf("Says = %q, want prefix %q", says, tc.want)
			}
		})
	}
}

func TestLengthTruncation(t *testing.T) {
	t.Run("retried", func(t *testing.T) {
		h := newHarness(t, nil)
		cut := llmtest.Calls(call("c1", "fs__write_file", `{"path":"x","content":"hal`))
		cut.Message.Content = "Here is the beginn"
		cut.FinishReason = llm.FinishLength
		h.srv.Enqueue(cut, llmtest.Text("Short answer."))
		if err := h.run(t, inbound("E1", "write x")); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if got := h.tools.recorded(); len(got) != 0 {
			t.Errorf("dispatches = %+v, want none from a truncated reply", got)
		}
		if got := h.rec.Says(); len(got) != 1 || got[0] != "Short answer." {
			t.Errorf("Says = %q, want only the complete answer", got)
		}
		second := h.srv.Requests()[1].Messages
		if last := second[len(second)-1]; !strings.Contains(last.Content, "cut off") {
			t.Errorf("retry's last message = %q, want the cut-off hint", last.Content)
		}
		for _, m := range second {
			if strings.Contains(m.Content, "Here is the beginn") {
				t.Errorf("truncated text was sent back to the model")
			}
		}
	})
	t.Run("exhausted", func(t *testing.T) {
		h := newHarness(t, nil)
		for range DefaultMaxAdaptAttempts + 1 {
			r := llmtest.Text("partial tex")
			r.FinishReason = llm.FinishLength
			h.srv.Enqueue(r)
		}
		if err := h.run(t, inbound("E1", "essay")); err != nil {
			t.Fatalf("Run = %v", err)
		}
		says := h.rec.Says()
		if len(says) != 1 || strings.Contains(says[0], "partial tex") || !strings.Contains(says[0], "cut off") {
			t.Errorf("Says = %q, want an honest partial without the raw text", says)
		}
	})
}

// TestModelFailureLadder: a failing model is retried when the failure is
// transient; only the provider saying the request is over the window
// compacts. An outage or a refused key leaves the thread's earlier turns
// as they were.
func TestModelFailureLadder(t *testing.T) {
	for _, tc := range []struct {
		name         string
		reply        llmtest.Reply
		wantCalls    int
		wantCompacts int
	}{
		{"outage", llmtest.Error(http.StatusBadGateway, "upstream", "bad gateway"), 1 + DefaultMaxRetriesPerTool, 0},
		{"bad key", llmtest.Error(http.StatusUnauthorized, "invalid_api_key", "Incorrect API key provided"), 1, 0},
		{"permanent", llmtest.Error(http.StatusBadRequest, "invalid_request_error", "bad"), 1, 0},
		// Compacting asks the model for a summary too: calls are not counted.
		{"over the window", llmtest.Error(http.StatusBadRequest, "context_length_exceeded", "This model's maximum context length is 8192 tokens"), -1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			for i := range 3 {
				u, f := llm.UserMessage(fmt.Sprint("earlier question ", i)), llm.AssistantMessage(fmt.Sprint("earlier answer ", i))
				h.tr.seed(testThread, record{Msg: &u, EventID: fmt.Sprint("old", i)}, record{Msg: &f, EventID: fmt.Sprint("old", i), Final: true})
			}
			h.srv.Handle(func(llmtest.Request) llmtest.Reply { return tc.reply })
			if err := h.run(t, inbound("E1", "hi")); err != nil {
				t.Fatalf("Run = %v", err)
			}
			if got := len(h.srv.Requests()); tc.wantCalls >= 0 && got != tc.wantCalls {
				t.Errorf("model calls = %d, want %d", got, tc.wantCalls)
			}
			h.tr.mu.Lock()
			compacts, archived := len(h.tr.compacts), len(h.tr.archive[testThread.Key()])
			h.tr.mu.Unlock()
			if (compacts == 0) != (tc.wantCompacts == 0) {
				t.Errorf("compactions = %d, want %d", compacts, tc.wantCompacts)
			}
			if tc.wantCompacts == 0 && archived != 0 {
				t.Errorf("%d earlier entries archived by a model failure, want none", archived)
			}
			says := h.rec.Says()
			if len(says) != 1 || !strings.Contains(says[0], "the language model kept failing") {
				t.Errorf("Says = %q, want an honest partial", says)
			}
			if strings.Contains(says[0], "llm:") {
				t.Errorf("Says leaks the raw error: %q", says[0])
			}
		})
	}
}

func TestInvalidArgumentsAreASignal(t *testing.T) {
	h := newHarness(t, nil)
	h.srv.Enqueue(llmtest.Calls(call("c1", "fs__read_file", `{"path": "x"`)), llmtest.Calls(call("c2", "fs__read_file", `{"path":"x"}`)), llmtest.Text("ok"))
	if err := h.run(t, inbound("E1", "read")); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if got := h.tools.recorded(); len(got) != 1 || got[0].CallID != "c2" {
		t.Errorf("dispatches = %+v, want only the valid c2", got)
	}
	tm := toolMessages(h.srv.Requests()[1])
	if len(tm) != 1 || tm[0].ToolCallID != "c1" || !strings.Contains(tm[0].Content, "not a valid JSON object") {
		t.Errorf("signal = %+v, want a JSON error for c1", tm)
	}
}

func TestStepBudget(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.StepBudget = 2 })
	h.tools.fn = func(ctx context.Context, name string, args map[string]any) (string, bool, error) {
		return fmt.Sprint(args["n"]), false, nil
	}
	h.srv.Enqueue(llmtest.Calls(call("c1", "fs__read_file", `{"n":1}`)), llmtest.Calls(call("c2", "fs__read_file", `{"n":2}`)))
	if err := h.run(t, inbound("E1", "loop")); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if says := h.rec.Says(); len(says) != 1 || !strings.Contains(says[0], "budget of 2 steps") {
		t.Errorf("Says = %q, want a step-budget partial", says)
	}
}

func TestResultCap(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.ResultCap = 100 })
	big := strings.Repeat("x", 1000)
	h.tools.fn = func(context.Context, string, map[string]any) (string, bool, error) { return big, false, nil }
	h.srv.Enqueue(llmtest.Calls(call("c1", "fs__read_file", `{}`)), llmtest.Text("big"))
	if err := h.run(t, inbound("E1", "read")); err != nil {
		t.Fatalf("Run = %v", err)
	}
	tm := toolMessages(h.srv.Requests()[1])
	if want := strings.Repeat("x", 100) + "\n\n[truncated: showing the first 100 of 1000 bytes; the full result is kept in the transcript]"; tm[0].Content != want {
		t.Errorf("capped result = %q", tm[0].Content)
	}
	if recs := h.tr.records(testThread); recs[2].Msg.Content != big {
		t.Errorf("stored result has %d bytes, want the full 1000", len(recs[2].Msg.Content))
	}
}

// TestStoredResultCap: one tool cannot fill the disk: past StoredResultCap
// the transcript keeps the start of a result and says the rest was not
// kept.
func TestStoredResultCap(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.StoredResultCap = 300 })
	h.tools.fn = func(context.Context, string, map[string]any) (string, bool, error) {
		return strings.Repeat("y", 5000), false, nil
	}
	h.srv.Enqueue(llmtest.Calls(call("c1", "fs__read_file", `{}`)), llmtest.Text("done"))
	if err := h.run(t, inbound("E1", "read")); err != nil {
		t.Fatalf("Run = %v", err)
	}
	want := strings.Repeat("y", 300) + "\n\n[truncated: showing the first 300 of 5000 bytes; the rest was not kept]"
	if got := h.tr.records(testThread)[2].Msg.Content; got != want {
		t.Errorf("stored result = %d bytes %q…, want the first 300 and a note", len(got), got[len(got)-80:])
	}
	if tm := toolMessages(h.srv.Requests()[1]); tm[0].Content != want {
		t.Errorf("the model saw %d bytes, want what was kept", len(tm[0].Content))
	}
}

func TestUserMessageCarriesContextAndFiles(t *testing.T) {
	h := newHarness(t, nil)
	h.srv.Enqueue(llmtest.Text("seen"))
	in := inbound("E1", "what do you think?")
	in.Context = "bob: the deploy failed"
	in.Files = []core.File{{Name: "log.txt", Size: 9, Text: "panic: x\n"}, {Name: "big.bin", Size: 1 << 20}}
	if err := h.run(t, in); err != nil {
		t.Fatalf("Run = %v", err)
	}
	got := h.srv.Requests()[0].Messages[1].Content
	want := "Earlier messages in this thread:\nbob: the deploy failed\n\nwhat do you think?\n\nAttached file \"log.txt\":\n```\npanic: x\n```\n\nAttached file \"big.bin\" (1048576 bytes) was not included."
	if got != want {
		t.Errorf("user message = %q, want %q", got, want)
	}
}

func TestRefault(t *testing.T) {
	h := newHarness(t, nil)
	for i := range 6 {
		r := llmtest.Calls(call(fmt.Sprintf("c%d", i), "fs__read_file", fmt.Sprintf(`{"n":%d}`, i)))
		r.Message.Content = fmt.Sprintf("checking part %d", i)
		h.srv.Enqueue(r)
	}
	h.srv.Enqueue(llmtest.Text("done"))
	if err := h.run(t, inbound("E1", "scan all")); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if want := "[scan all checking part 5]"; fmt.Sprint(h.mem.queries) != want {
		t.Errorf("memory faults = %q, want %s", h.mem.queries, want)
	}
}

func TestResume(t *testing.T) {
	t.Run("dangling calls keep their IDs", func(t *testing.T) {
		h := newHarness(t, nil)
		u := llm.UserMessage("read both")
		as := llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call("k1", "fs__read_file", `{"p":1}`), call("k2", "fs__read_file", `{"p":2}`)}}
		r1 := llm.ToolResult("k1", "fs__read_file", "one")
		h.tr.seed(testThread, record{Msg: &u, EventID: "E1"}, record{Msg: &as}, record{Msg: &r1})
		h.srv.Enqueue(llmtest.Text("one and two"))
		if err := h.run(t, inbound("E1", "read both")); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if got := h.tools.recorded(); len(got) != 1 || got[0].CallID != "k2" {
			t.Errorf("dispatches = %+v, want only k2, under its own ID", got)
		}
		users := 0
		for _, r := range h.tr.records(testThread) {
			if r.Msg != nil && r.Msg.Role == llm.RoleUser {
				users++
			}
		}
		if users != 1 {
			t.Errorf("user entries = %d, want 1 (not appended again)", users)
		}
		if got := h.rec.Says(); len(got) != 1 || got[0] != "one and two" {
			t.Errorf("Says = %q", got)
		}
	})
	t.Run("answered", func(t *testing.T) {
		h := newHarness(t, nil)
		u, f := llm.UserMessage("hi"), llm.AssistantMessage("hello")
		h.tr.seed(testThread, record{Msg: &u, EventID: "E1"}, record{Msg: &f, EventID: "E1", Final: true})
		if err := h.run(t, inbound("E1", "hi")); !errors.Is(err, core.ErrAnswered) {
			t.Fatalf("Run = %v, want core.ErrAnswered", err)
		}
		if len(h.rec.Calls()) != 0 || len(h.srv.Requests()) != 0 {
			t.Errorf("reporter calls %v, model requests %d; want none", h.rec.Calls(), len(h.srv.Requests()))
		}
	})
	t.Run("answered, never said", func(t *testing.T) {
		h := newHarness(t, nil)
		u, f := llm.UserMessage("hi"), llm.AssistantMessage("hello")
		h.tr.seed(testThread, record{Msg: &u, EventID: "E1"}, record{Msg: &f, EventID: "E1", Final: true})
		err := h.agent.Run(t.Context(), core.Turn{Inbound: inbound("E1", "hi"), Reporter: h.rec, Unsaid: true})
		if !errors.Is(err, core.ErrAnswered) {
			t.Fatalf("Run = %v, want core.ErrAnswered", err)
		}
		if got := h.rec.Says(); len(got) != 1 || got[0] != "hello" {
			t.Errorf("Says = %q, want the stored answer once", got)
		}
		if n := len(h.srv.Requests()); n != 0 {
			t.Errorf("model requests = %d, want none: the answer is stored", n)
		}
	})
	t.Run("superseded, never said", func(t *testing.T) {
		// A later message started another turn: E1 never got an answer
		// to say, and its thread has moved on.
		h := newHarness(t, nil)
		u1, u2 := llm.UserMessage("hi"), llm.UserMessage("still there?")
		h.tr.seed(testThread, record{Msg: &u1, EventID: "E1"}, record{Msg: &u2, EventID: "E2"})
		err := h.agent.Run(t.Context(), core.Turn{Inbound: inbound("E1", "hi"), Reporter: h.rec, Unsaid: true})
		if !errors.Is(err, core.ErrAnswered) {
			t.Fatalf("Run = %v, want core.ErrAnswered", err)
		}
		if len(h.rec.Calls()) != 0 || len(h.srv.Requests()) != 0 {
			t.Errorf("reporter calls %v, model requests %d; want none", h.rec.Calls(), len(h.srv.Requests()))
		}
	})
	t.Run("abandoned calls are closed before a new turn", func(t *testing.T) {
		h := newHarness(t, nil)
		u := llm.UserMessage("old")
		as := llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call("k1", "fs__read_file", `{}`)}}
		h.tr.seed(testThread, record{Msg: &u, EventID: "E0"}, record{Msg: &as})
		h.srv.Enqueue(llmtest.Text("fresh"))
		if err := h.run(t, inbound("E1", "new")); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if len(h.tools.recorded()) != 0 {
			t.Errorf("an abandoned turn's call was dispatched by a new turn")
		}
		tm := toolMessages(h.srv.Requests()[0])
		if len(tm) != 1 || tm[0].ToolCallID != "k1" || !strings.Contains(tm[0].Content, "outcome is unknown") {
			t.Errorf("tool messages = %+v, want k1 closed as unknown", tm)
		}
	})
}

func TestNoModel(t *testing.T) {
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Run(context.Background(), core.Turn{Inbound: inbound("E1", "hi")}); !errors.Is(err, ErrNoModel) {
		t.Errorf("Run without a model = %v, want ErrNoModel", err)
	}
}
