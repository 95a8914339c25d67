package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/compact"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
	"github.com/rs/zerolog"
)

// mixedResult is tool result n: a header, an identifier, and a body whose
// size cycles from a line to past the result cap.
func mixedResult(n int) string {
	sizes := []int{200, 1 << 10, 3 << 10, 7 << 10, 12 << 10, 400, 20 << 10, 2 << 10}
	var b strings.Builder
	fmt.Fprintf(&b, "AUDIT BATCH %d\nrequest req-%06d-%04x settled\n", n, n, n*7919)
	for i := 0; b.Len() < sizes[n%len(sizes)]; i++ {
		fmt.Fprintf(&b, "row %d of batch %d: checksum 0x%08x ok\n", i, n, n*100_003+i)
	}
	return b.String()
}

// TestEveryTurnFinishes: 50 turns of 20 tool results of mixed sizes in a
// 16k window. However full a turn's own results make the window, each
// turn finishes with its answer, never the honest partial, and no request
// is over the window.
func TestEveryTurnFinishes(t *testing.T) {
	const window, turns, perTurn = 16_000, 50, 20
	logs := &lockedWriter{w: &strings.Builder{}}
	h := newHarness(t, nil)
	cheap := llmtest.New(t)
	cheap.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Text(cheapSummary) })
	var (
		mu      sync.Mutex
		steps   = map[string]int{}
		n       int
		reasons = map[string]int{}
	)
	h.rebuild(t, func(o *Options) {
		o.ContextWindow = window
		o.Cheap = newClient(t, cheap)
		o.StepBudget = perTurn + 2
		o.Logger = zerolog.New(logs)
		o.Observe = func(ev Event) {
			if ev.Kind == EventCompaction {
				mu.Lock()
				reasons[ev.Detail]++
				mu.Unlock()
			}
		}
	})
	h.srv.Handle(func(r llmtest.Request) llmtest.Reply {
		var user string
		for _, m := range r.Messages {
			if m.Role == llm.RoleUser {
				user = m.Content
			}
		}
		mu.Lock()
		defer mu.Unlock()
		// The provider counts tokens as the agent estimates them, so
		// "within the window" means the same to both.
		usage := llm.Usage{PromptTokens: compact.Estimate(h.agent.opts.Counter, r.Messages, r.Tools), CompletionTokens: 20}
		done := steps[user]
		if done >= perTurn {
			reply := llmtest.Text("Audited this batch.")
			reply.Usage = usage
			return reply
		}
		// One to four calls at a time: a step's results arrive together.
		k := min(1+(done+len(steps))%4, perTurn-done)
		var calls []llm.ToolCall
		for range k {
			steps[user]++
			calls = append(calls, call(fmt.Sprintf("c%d_%d", len(steps), steps[user]), "fs__read_file", `{"path":"batch"}`))
		}
		reply := llmtest.Calls(calls...)
		reply.Usage = usage
		return reply
	})
	h.tools.fn = func(ctx context.Context, _ string, _ map[string]any) (string, bool, error) {
		// The result's size follows its call, not the order calls run in.
		var turn, step int
		if _, err := fmt.Sscanf(core.ToolCallFrom(ctx), "c%d_%d", &turn, &step); err != nil {
			return "", false, err
		}
		mu.Lock()
		n++
		mu.Unlock()
		return mixedResult((turn-1)*perTurn + step), false, nil
	}
	for i := range turns {
		if err := h.run(t, inbound(fmt.Sprintf("E%d", i+1), fmt.Sprintf("audit batch group %d", i+1))); err != nil {
			t.Fatalf("turn %d: Run = %v", i+1, err)
		}
	}
	says := h.rec.Says()
	if len(says) != turns {
		t.Fatalf("said %d answers, want %d", len(says), turns)
	}
	for i, s := range says {
		if s != "Audited this batch." {
			first, _, _ := strings.Cut(s, "\n")
			t.Errorf("turn %d said %q, want its answer", i+1, first)
		}
	}
	// The turns' own results had to be set aside: compacting alone
	// could not make room.
	if reasons[ReasonSetAside] == 0 || reasons[ReasonNoRoom] > 0 {
		t.Errorf("compactions by reason = %v, want some %s and no %s", reasons, ReasonSetAside, ReasonNoRoom)
	}
	// Each stub names a reference that opens the result it replaced.
	entries, _ := h.tr.Archived(context.Background(), testThread)
	hist := NewHistory(h.tr)
	ctx := core.WithTurn(context.Background(), &core.Turn{Inbound: inbound("E999", "what was it?")})
	opened := 0
	for _, e := range entries {
		var r record
		if err := json.Unmarshal(e.Data, &r); err != nil || !r.Stub || opened >= 20 {
			continue
		}
		q := r.Msg.Content[strings.Index(r.Msg.Content, `"`)+1:]
		q = q[:strings.Index(q, `"`)]
		got, err := hist.Search(ctx, coretest.ToolCall(ctx, "history_search", nil), q)
		if err != nil || !strings.Contains(got, "[tool fs__read_file · "+q+"]") || !strings.Contains(got, "AUDIT BATCH") {
			t.Errorf("history_search(%s), from the stub %q = %.200q, %v; want the result it replaced", q, r.Msg.Content, got, err)
		}
		opened++
	}
	if opened == 0 {
		t.Errorf("no stub reached the archive")
	}
	if n != turns*perTurn {
		t.Errorf("tool results = %d, want %d", n, turns*perTurn)
	}
	for name, srv := range map[string]*llmtest.Server{"model": h.srv, "summarizer": cheap} {
		for i, r := range srv.Requests() {
			if got := compact.Estimate(h.agent.opts.Counter, r.Messages, r.Tools); got > window {
				t.Errorf("%s request %d = ~%d tokens, over the %d-token window; its last message: %.100q", name, i, got, window, r.Messages[len(r.Messages)-1].Content)
				for _, m := range r.Messages {
					t.Logf("  %s %d: %.60q", m.Role, compact.MessageTokens(h.agent.opts.Counter, m), m.Content)
				}
			}
		}
	}
	if t.Failed() {
		t.Logf("log:\n%s", logs)
	}
}

// TestSetAsideInterrupted: a set-aside that appended its entries but
// stopped before archiving the ones they replace is finished by the next
// load: the originals go to the archive once, and the turn resumes on
// the stubbed copies, the stub's reference naming the archived original.
func TestSetAsideInterrupted(t *testing.T) {
	h := newHarness(t, nil)
	u := llm.UserMessage("read it")
	c := llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call("c1", "fs__read_file", `{}`)}}
	r := llm.ToolResult("c1", "fs__read_file", "AUDIT BATCH 1\n"+strings.Repeat("row\n", 2000))
	h.tr.seed(testThread, record{Msg: &u, EventID: "E1", User: "U0AAA1111"}, record{Msg: &c}, record{Msg: &r})
	stub := llm.ToolResult("c1", "fs__read_file", stubText(r, 3))
	h.tr.seed(testThread, record{Moved: 3},
		record{Msg: &u, EventID: "E1", User: "U0AAA1111", Of: 1}, record{Msg: &c, Of: 2}, record{Msg: &stub, Of: 3, Stub: true})
	h.srv.Enqueue(llmtest.Text("Read it."))
	if err := h.run(t, inbound("E1", "read it")); err != nil {
		t.Fatalf("resumed Run = %v", err)
	}
	if got := h.rec.Says(); len(got) != 1 || got[0] != "Read it." {
		t.Errorf("Says = %q, want the resumed turn's answer", got)
	}
	if n := len(h.tools.recorded()); n != 0 {
		t.Errorf("tool calls = %d, want none: c1 has its (stubbed) result", n)
	}
	archived := h.tr.archive[testThread.Key()]
	if len(archived) != 3 || archived[2].Seq != 3 {
		t.Fatalf("archive = %d entries, want the 3 originals", len(archived))
	}
	sent := h.srv.Requests()[0].Messages
	if tm := toolMessages(llmtest.Request{Messages: sent}); len(tm) != 1 || !strings.Contains(tm[0].Content, `history_search "msg:3"`) {
		t.Errorf("tool messages sent = %+v, want the one stub naming msg:3", tm)
	}
	// An operator's export shows each message once, the result whole.
	_, live, _ := h.tr.LoadTranscript(context.Background(), testThread)
	msgs, err := Messages(append(archived, live...))
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
		if m.Role == llm.RoleTool && m.Content != r.Content {
			t.Errorf("export shows the result as %.80q, want the original", m.Content)
		}
	}
	if got := strings.Join(roles, " "); got != "user assistant tool assistant" {
		t.Errorf("export roles = %s, want user assistant tool assistant", got)
	}
	if q, a, err := TurnText(append(archived, live...), "E1"); q != "read it" || a != "Read it." || err != nil {
		t.Errorf("TurnText = %q, %q, %v", q, a, err)
	}
}

// TestRefusedRequestSetsResultsAside: the model refuses a request as over
// its window though the estimate says it fits, and nothing is left to
// compact: the turn's result is set aside and the turn finishes, instead
// of ending with "the language model kept failing".
func TestRefusedRequestSetsResultsAside(t *testing.T) {
	h := newHarness(t, nil)
	cheap := llmtest.New(t)
	cheap.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Text(cheapSummary) })
	h.rebuild(t, func(o *Options) { o.Cheap = newClient(t, cheap) })
	h.tools.fn = func(context.Context, string, map[string]any) (string, bool, error) {
		return "AUDIT BATCH 1\n" + strings.Repeat("row of the audit\n", 200), false, nil
	}
	h.srv.Handle(func(r llmtest.Request) llmtest.Reply {
		switch tm := toolMessages(r); {
		case len(tm) == 0:
			return llmtest.Calls(call("c1", "fs__read_file", `{}`))
		case strings.HasPrefix(tm[0].Content, "[set aside to make room: fs__read_file returned"):
			return llmtest.Text("Done.")
		}
		return llmtest.Error(http.StatusBadRequest, "context_length_exceeded", "This model's maximum context length is 8192 tokens")
	})
	if err := h.run(t, inbound("E1", "read it")); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if got := h.rec.Says(); len(got) != 1 || got[0] != "Done." {
		t.Errorf("Says = %.200q, want the answer", got)
	}
}
