package agent

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/compact"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
	"github.com/rs/zerolog"
)

// sixKB is result n of a long read: a header and 6 KB of lines.
func sixKB(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "FILE %d\n", n)
	for i := 0; b.Len() < 6<<10; i++ {
		fmt.Fprintf(&b, "file %d line %d: 0x%08x ok\n", n, i, n*100_000+i)
	}
	return b.String()
}

// readNext scripts a model that reads files 1..total one at a time, then
// answers with how many it read.
func readNext(total int) func(llmtest.Request) llmtest.Reply {
	return func(r llmtest.Request) llmtest.Reply {
		if isSummarize(r) {
			return llmtest.Text(cheapSummary)
		}
		read := 0
		if last := r.Messages[len(r.Messages)-1]; last.Role == llm.RoleTool {
			fmt.Sscanf(last.Content, "FILE %d", &read)
		}
		if read >= total {
			return llmtest.Text(fmt.Sprintf("Read all %d files.", read))
		}
		n := read + 1
		return llmtest.Calls(call(fmt.Sprintf("r%d", n), "fs__read_file", fmt.Sprintf(`{"n":%d}`, n)))
	}
}

// TestLongTurnCompactsUntilDone: one turn that reads 24 results of 6 KB in
// a 16k window compacts as often as it needs and finishes, every request
// within the window.
func TestLongTurnCompactsUntilDone(t *testing.T) {
	const window, total = 16_000, 24
	h := newHarness(t, func(o *Options) { o.ContextWindow = window })
	cheap := llmtest.New(t)
	cheap.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Text(cheapSummary) })
	h.rebuild(t, func(o *Options) { o.Cheap = newClient(t, cheap); o.StepBudget = 40 })
	h.tools.fn = func(ctx context.Context, name string, args map[string]any) (string, bool, error) {
		return sixKB(int(args["n"].(float64))), false, nil
	}
	h.srv.Handle(readNext(total))

	if err := h.run(t, inbound("E1", "read every file, one at a time")); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if got, want := h.rec.Says(), []string{fmt.Sprintf("Read all %d files.", total)}; len(got) != 1 || got[0] != want[0] {
		t.Fatalf("Says = %q, want %q", got, want)
	}
	calls := h.tools.recorded()
	if len(calls) != total {
		t.Fatalf("reads = %d, want %d", len(calls), total)
	}
	for i, c := range calls {
		if c.Args["n"] != float64(i+1) {
			t.Errorf("read %d = file %v, want file %d", i, c.Args["n"], i+1)
		}
	}
	if len(h.tr.compacts) <= 3 {
		t.Errorf("compactions = %d, want more than 3 (the old cap) for this turn", len(h.tr.compacts))
	}
	for i, r := range append(h.srv.Requests(), cheap.Requests()...) {
		if n := compact.Estimate(h.agent.opts.Counter, r.Messages, r.Tools); n > window {
			t.Errorf("request %d = ~%d tokens, over the %d-token window", i, n, window)
		}
	}
	recs := h.tr.records(testThread)
	if last := recs[len(recs)-1]; !last.Final || last.Partial {
		t.Errorf("last entry = final %v partial %v, want a final answer", last.Final, last.Partial)
	}
}

// TestResultLargerThanWindowIsCut: a tool result larger than the whole
// window is cut to fit, saying so and how to read the rest, and the turn
// finishes; only a message that cannot be cut (the user's own, larger
// than the window) still ends the turn with the honest partial, never a
// request over the window. The log and the count say which it was.
func TestResultLargerThanWindowIsCut(t *testing.T) {
	const window = 16_000
	huge := "FILE 1\n" + strings.Repeat("0123456789abcdef\n", 3200) // ~18k tokens
	for _, tc := range []struct {
		name       string
		earlier    bool   // a short earlier turn precedes this one
		ask        string // the user's message
		wantSay    string // prefix of the one thing said
		wantReason string // counted and logged
	}{
		{"after an earlier turn", true, "read the huge file", "Read it.", ReasonCut},
		{"fresh thread", false, "read the huge file", "Read it.", ReasonCut},
		{"the message itself is too large", false, "read this: " + huge, "I couldn't finish this: the next request would still be larger", ReasonNoRoom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &lockedWriter{w: &strings.Builder{}}
			h := newHarness(t, nil)
			if tc.earlier {
				u, f := llm.UserMessage("hi"), llm.AssistantMessage("Hello.")
				h.tr.seed(testThread, record{Msg: &u, EventID: "E0"}, record{Msg: &f, EventID: "E0", Final: true})
			}
			cheap := llmtest.New(t)
			cheap.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Text(cheapSummary) })
			var mu sync.Mutex
			reasons := map[string]int{}
			h.rebuild(t, func(o *Options) {
				o.ContextWindow = window
				o.Cheap = newClient(t, cheap)
				o.Logger = zerolog.New(logs)
				o.ResultCap = 64 << 10
				o.Observe = func(ev Event) {
					if ev.Kind == EventCompaction {
						mu.Lock()
						reasons[ev.Detail]++
						mu.Unlock()
					}
				}
			})
			h.tools.fn = func(ctx context.Context, name string, args map[string]any) (string, bool, error) {
				return huge, false, nil
			}
			h.srv.Handle(func(r llmtest.Request) llmtest.Reply {
				if len(toolMessages(r)) > 0 {
					return llmtest.Text("Read it.")
				}
				return llmtest.Calls(call("r1", "fs__read_file", `{"n":1}`))
			})
			if err := h.run(t, inbound("E1", tc.ask)); err != nil {
				t.Fatalf("Run = %v", err)
			}
			says := h.rec.Says()
			if len(says) != 1 || !strings.HasPrefix(says[0], tc.wantSay) {
				t.Fatalf("Says = %.200q, want one starting %q", says, tc.wantSay)
			}
			for i, r := range h.srv.Requests() {
				if n := compact.Estimate(h.agent.opts.Counter, r.Messages, r.Tools); n > window {
					t.Errorf("request %d = ~%d tokens, over the %d-token window", i, n, window)
				}
				if tm := toolMessages(r); len(tm) > 0 && !strings.Contains(tm[0].Content, `[cut to fit the model's window: showing the first`) {
					t.Errorf("request %d shows the result without saying it was cut: ...%s", i, tm[0].Content[max(0, len(tm[0].Content)-200):])
				}
			}
			// The cut names the reference that pages through the whole
			// result.
			if reqs := h.srv.Requests(); tc.wantReason == ReasonCut {
				tm := toolMessages(reqs[len(reqs)-1])
				_, rest, _ := strings.Cut(tm[0].Content, `history_search "`)
				q, _, _ := strings.Cut(rest, `"`)
				ctx := core.WithTurn(context.Background(), &core.Turn{Inbound: inbound("E2", "and the rest?")})
				got, err := NewHistory(h.tr).Search(ctx, coretest.ToolCall(ctx, "history_search", nil), q)
				if err != nil || !strings.HasPrefix(got, "[tool fs__read_file · "+q+"] page 1 of 4:\nFILE 1\n") {
					t.Errorf("history_search(%q) = %.100q, %v; want the first page of the whole result", q, got, err)
				}
			}
			if reasons[tc.wantReason] != 1 {
				t.Errorf("compactions by reason = %v, want one %s", reasons, tc.wantReason)
			}
			if log := logs.String(); !strings.Contains(log, `"reason":"`+tc.wantReason+`"`) && tc.wantReason != ReasonNoRoom ||
				tc.wantReason == ReasonNoRoom && !strings.Contains(log, `"message":"agent: honest partial"`) {
				t.Errorf("log = %s\nwant the reason %s", log, tc.wantReason)
			}
		})
	}
}

// TestPartialQuotesOnlyTheRunningTurn: the honest partial's "Where I got
// to" never quotes an earlier turn's answer, and failures one after
// another do not pile copies of each other up.
func TestPartialQuotesOnlyTheRunningTurn(t *testing.T) {
	h := newHarness(t, nil)
	seedHistory(h) // earlier answers: "Deployed.", "All good."
	h.srv.Handle(func(llmtest.Request) llmtest.Reply {
		return llmtest.Error(http.StatusBadRequest, "invalid_request_error", "bad request")
	})
	for _, ev := range []string{"E3", "E4"} {
		if err := h.run(t, inbound(ev, "and now?")); err != nil {
			t.Fatalf("Run %s = %v", ev, err)
		}
	}
	says := h.rec.Says()
	if len(says) != 2 {
		t.Fatalf("Says = %q, want two honest partials", says)
	}
	for i, s := range says {
		if !strings.HasPrefix(s, "I couldn't finish this") {
			t.Errorf("Say %d = %q, want an honest partial", i, s)
		}
		if strings.Contains(s, "Where I got to") || strings.Contains(s, "All good.") || strings.Count(s, "I couldn't finish this") > 1 {
			t.Errorf("Say %d = %q; it quotes another turn's answer", i, s)
		}
	}

	// A turn that said something of its own before failing quotes that.
	var n atomic.Int32
	h.srv.Handle(func(llmtest.Request) llmtest.Reply {
		if n.Add(1) == 1 {
			r := llmtest.Calls(call("c1", "fs__read_file", `{"path":"a"}`))
			r.Message.Content = "Reading a first."
			return r
		}
		return llmtest.Error(http.StatusBadRequest, "invalid_request_error", "bad request")
	})
	if err := h.run(t, inbound("E5", "read a")); err != nil {
		t.Fatalf("Run E5 = %v", err)
	}
	says = h.rec.Says()
	if last := says[len(says)-1]; !strings.Contains(last, "Where I got to: Reading a first.") {
		t.Errorf("Say = %q, want the turn's own progress quoted", last)
	}
}

// lockedWriter lets the agent's goroutines log into one buffer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// String returns what was logged so far.
func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprint(l.w)
}
