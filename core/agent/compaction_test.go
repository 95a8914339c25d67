package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/compact"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
	"github.com/neobot/neobot/core/skill"
)

const txHash = "0x5f2c3e9a7b1d4c8e6f0a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7a8"

// seedHistory stores two answered turns; the first holds a tx hash in a
// tool result.
func seedHistory(h *harness) {
	u1, u2 := llm.UserMessage("deploy the contract"), llm.UserMessage("status?")
	a1 := llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call("d1", "fs__write_file", `{"path":"deploy.json"}`)}}
	r1 := llm.ToolResult("d1", "fs__write_file", "deployed in tx "+txHash+" at block 19283746 "+strings.Repeat("log line ", 200))
	f1, f2 := llm.AssistantMessage("Deployed."), llm.AssistantMessage("All good.")
	h.tr.seed(testThread,
		record{Msg: &u1, EventID: "E1"}, record{Msg: &a1}, record{Msg: &r1}, record{Msg: &f1, EventID: "E1", Final: true},
		record{Msg: &u2, EventID: "E2"}, record{Msg: &f2, EventID: "E2", Final: true},
	)
}

// windowFor returns the context window at which the next turn on in,
// before any model call, fills frac of it by the offline estimate.
func windowFor(t *testing.T, h *harness, in llm.Message, frac float64) int {
	t.Helper()
	st, err := h.agent.load(context.Background(), testThread)
	if err != nil {
		t.Fatal(err)
	}
	st.items = append(st.items, h.agent.newItem(0, record{Msg: &in}))
	tr := &turn{a: h.agent, st: st, toolsTokens: compact.ToolsTokens(h.agent.opts.Counter, h.tools.schemas)}
	return int(float64(tr.used()) / frac)
}

// rebuild replaces the harness's agent with one tuned further.
func (h *harness) rebuild(t *testing.T, tune func(*Options)) {
	t.Helper()
	opts := h.agent.opts
	tune(&opts)
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	h.agent = a
}

const cheapSummary = `GOAL: deploy the contract and confirm its status.
DECISIONS: wrote deploy.json.
ARTIFACTS: block 19283746.
OPEN: none.
LAST_RESULTS: deployment succeeded.
NEXT: answer the new question.`

func isSummarize(r llmtest.Request) bool {
	return len(r.Messages) > 0 && strings.HasPrefix(r.Messages[0].Content, "You compact")
}

func TestCompactionSoft(t *testing.T) {
	h := newHarness(t, nil)
	seedHistory(h)
	big := "please review this plan: " + strings.Repeat("step and detail ", 400)
	cheap := llmtest.New(t)
	cheap.Enqueue(llmtest.Text(cheapSummary))
	w := windowFor(t, h, llm.UserMessage(big), 0.85)
	h.rebuild(t, func(o *Options) { o.ContextWindow = w; o.Cheap = newClient(t, cheap) })
	h.srv.Enqueue(llmtest.Text("Reviewed."))

	if err := h.run(t, inbound("E3", big)); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if len(h.tr.compacts) != 1 {
		t.Fatalf("compactions = %d, want 1", len(h.tr.compacts))
	}
	sum := h.tr.compacts[0]
	if sum.UpTo != 6 {
		t.Errorf("summary covers up to entry %d, want 6 (the cut before the new user message)", sum.UpTo)
	}
	if !strings.Contains(sum.Text, compact.ArtifactsHeader+"\n- "+txHash) {
		t.Errorf("summary lost the tx hash:\n%s", sum.Text)
	}
	golden(t, "summary_soft.golden", sum.Text)
	if got := len(h.tr.archive[testThread.Key()]); got != 6 {
		t.Errorf("archived entries = %d, want 6", got)
	}
	main := h.srv.Requests()
	if len(main) != 1 || !strings.Contains(main[0].Messages[0].Content, "## Conversation summary\nGOAL: deploy") {
		t.Fatalf("main request does not carry the summary")
	}
	if m := main[0].Messages[1]; m.Role != llm.RoleUser || m.Content != big {
		t.Errorf("first live message = %s %.20q, want the new user message", m.Role, m.Content)
	}
	if got := cheap.Requests(); len(got) != 1 || !strings.Contains(got[0].Messages[1].Content, txHash) {
		t.Errorf("cheap model requests = %d, want 1 holding the history", len(got))
	}
}

func TestCompactionHard(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.ContextWindow = 100_000 })
	seedHistory(h)
	cheap := llmtest.New(t)
	cheap.Enqueue(llmtest.Text(cheapSummary))
	h.rebuild(t, func(o *Options) { o.Cheap = newClient(t, cheap) })
	first := llmtest.Calls(call("c1", "fs__read_file", `{"path":"status"}`))
	first.Usage = llm.Usage{PromptTokens: 95_000, CompletionTokens: 20, TotalTokens: 95_020}
	h.srv.Enqueue(first, llmtest.Text("Still deployed."))

	if err := h.run(t, inbound("E3", "check again")); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if len(h.tr.compacts) != 1 {
		t.Fatalf("compactions = %d, want 1 forced by the provider's usage", len(h.tr.compacts))
	}
	reqs := h.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("main requests = %d, want 2", len(reqs))
	}
	if strings.Contains(reqs[0].Messages[0].Content, "## Conversation summary") {
		t.Errorf("first call already compacted; want compaction only after usage crossed 92%%")
	}
	second := reqs[1].Messages
	if !strings.Contains(second[0].Content, txHash) {
		t.Errorf("second call's system block lacks the preserved tx hash")
	}
	if got, want := pinnedGoal(second[0].Content), "deploy the contract and confirm its status."; got != want {
		t.Errorf("second call pins active goal %q, want %q from the new summary", got, want)
	}
	if got := pinnedGoal(reqs[0].Messages[0].Content); got != "" {
		t.Errorf("first call pins active goal %q before any summary, want none", got)
	}
	// The cut is clean: the live window opens on the turn's user message
	// and keeps the tool call with its result.
	if second[1].Role != llm.RoleUser || second[2].Role != llm.RoleAssistant || second[3].Role != llm.RoleTool || second[3].ToolCallID != "c1" {
		t.Errorf("live window after hard compaction = %v %v %v", second[1].Role, second[2].Role, second[3].Role)
	}
}

func TestSafeTailWhenSummarizerFails(t *testing.T) {
	h := newHarness(t, nil)
	seedHistory(h)
	big := strings.Repeat("more words here ", 400)
	cheap := llmtest.New(t)
	cheap.Handle(func(llmtest.Request) llmtest.Reply {
		return llmtest.Error(http.StatusInternalServerError, "server_error", "down")
	})
	w := windowFor(t, h, llm.UserMessage(big), 0.95)
	h.rebuild(t, func(o *Options) { o.ContextWindow = w; o.Cheap = newClient(t, cheap) })
	h.srv.Handle(func(r llmtest.Request) llmtest.Reply {
		if isSummarize(r) {
			return llmtest.Error(http.StatusInternalServerError, "server_error", "down")
		}
		return llmtest.Text("Answered from the tail.")
	})
	if err := h.run(t, inbound("E3", big)); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if len(h.tr.compacts) != 1 {
		t.Fatalf("compactions = %d, want 1", len(h.tr.compacts))
	}
	sum := h.tr.compacts[0]
	if sum.UpTo != 6 || !strings.Contains(sum.Text, "without a summary") || !strings.Contains(sum.Text, txHash) {
		t.Errorf("fallback summary (up to %d):\n%s\nwant up to 6, the note and the tx hash", sum.UpTo, sum.Text)
	}
	if got := h.rec.Says(); len(got) != 1 || got[0] != "Answered from the tail." {
		t.Errorf("Says = %q", got)
	}
}

func TestCheapModelFallback(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cheap bool // a cheap model is configured, and fails
	}{{"unset", false}, {"failing", true}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			seedHistory(h)
			big := strings.Repeat("more words here ", 400)
			w := windowFor(t, h, llm.UserMessage(big), 0.85)
			var cheap *llmtest.Server
			h.rebuild(t, func(o *Options) {
				o.ContextWindow = w
				if tc.cheap {
					cheap = llmtest.New(t)
					cheap.Enqueue(llmtest.Dropped())
					o.Cheap = newClient(t, cheap)
				}
			})
			h.srv.Handle(func(r llmtest.Request) llmtest.Reply {
				if isSummarize(r) {
					return llmtest.Text(cheapSummary)
				}
				return llmtest.Text("ok")
			})
			if err := h.run(t, inbound("E3", big)); err != nil {
				t.Fatalf("Run = %v", err)
			}
			summarized := 0
			for _, r := range h.srv.Requests() {
				if isSummarize(r) {
					summarized++
				}
			}
			if summarized != 1 || len(h.tr.compacts) != 1 || !strings.HasPrefix(h.tr.compacts[0].Text, "GOAL:") {
				t.Errorf("main model summarized %d times, compactions %d; want the main model's summary stored", summarized, len(h.tr.compacts))
			}
			if tc.cheap && len(cheap.Requests()) != 1 {
				t.Errorf("cheap model asked %d times, want 1", len(cheap.Requests()))
			}
		})
	}
}

func TestSystemBlock(t *testing.T) {
	for _, tc := range []struct {
		name       string
		memoryGoal string
		summary    string
		golden     string // "" asserts only wantGoal
		wantGoal   string // the Active goal line's text; "" for no line
	}{
		// Memory's goal wins over the summary's.
		{"memory goal", "ship the v2 vault", compactSummary().Text, "system.golden", "ship the v2 vault"},
		// Memory knows no goal: the thread's summary supplies it.
		{"summary goal", "", compactSummary().Text, "system_summary_goal.golden", "ship the v2 vault."},
		{"no goal anywhere", "", "DECISIONS: audit first.\nNEXT: deploy.", "", ""},
		{"no summary", "", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(o *Options) { o.Constraints = []string{"Reply in English."} })
			h.mem.recall.Profile = "Ada, protocol engineer; prefers short answers."
			h.mem.recall.Goal = tc.memoryGoal
			h.mem.recall.Memories = []string{"The vault lives at 0x1111111111111111111111111111111111111111."}
			h.mem.recall.Patterns = []string{"To check a deploy: read deploy.json, then query the tx."}
			h.mem.recall.Turns = []string{"2026-10-30 ada: is the audit done? neo: yes, report in #audits."}
			if tc.summary != "" {
				h.tr.Compact(context.Background(), testThread, core.Summary{Text: tc.summary, At: fixedNow})
			}
			system, tools, err := h.agent.Prompt(context.Background(), inbound("E9", "how is the vault?"))
			if err != nil {
				t.Fatalf("Prompt = %v", err)
			}
			if len(tools) != 3 {
				t.Errorf("Prompt tools = %d, want 3", len(tools))
			}
			if got := pinnedGoal(system); got != tc.wantGoal {
				t.Errorf("Prompt pins active goal %q, want %q", got, tc.wantGoal)
			}
			if tc.golden != "" {
				golden(t, tc.golden, system)
			}
		})
	}
}

// pinnedGoal returns the Active goal line of a system block's pinned
// section, or "".
func pinnedGoal(system string) string {
	pinned, _, _ := strings.Cut(system, "\n## Conversation summary")
	pinned, _, _ = strings.Cut(pinned, "\n## Recalled turns")
	for line := range strings.Lines(pinned) {
		if g, ok := strings.CutPrefix(line, "Active goal: "); ok {
			return strings.TrimSuffix(g, "\n")
		}
	}
	return ""
}

// overfull wires h for turns whose every tool call fills the window: a
// 100k window, tool results of ~25k tokens (more than a hard compaction
// keeps), and a cheap summarizer. It returns the summarizer.
func overfull(t *testing.T, h *harness, tune func(*Options)) *llmtest.Server {
	t.Helper()
	cheap := llmtest.New(t)
	cheap.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Text(cheapSummary) })
	h.rebuild(t, func(o *Options) {
		o.ContextWindow = 100_000
		o.Cheap = newClient(t, cheap)
		if tune != nil {
			tune(o)
		}
	})
	h.tools.fn = func(ctx context.Context, name string, args map[string]any) (string, bool, error) {
		return fmt.Sprintf("part %v:\n%s", args["n"], strings.Repeat("line of output\n", 5000)), false, nil
	}
	return cheap
}

// overfullCall is step n's tool call, with the provider reporting a
// window over the hard threshold (95% of 100k).
func overfullCall(n int) llmtest.Reply {
	r := llmtest.Calls(call(fmt.Sprintf("c%d", n), "fs__read_file", fmt.Sprintf(`{"n":%d}`, n)))
	r.Usage = llm.Usage{PromptTokens: 95_000, CompletionTokens: 20, TotalTokens: 95_020}
	return r
}

func TestCompactionsPerTurnCapped(t *testing.T) {
	const maxCompactions = 2
	for _, tc := range []struct {
		name     string
		steps    int    // tool-calling steps before the model answers (0: never)
		budget   int    // StepBudget
		wantSay  string // prefix of the one thing said
		wantPart bool
	}{
		// Every step leaves the window over the hard threshold: once the
		// cap is reached the turn's oldest results are set aside instead,
		// and the turn goes on to its answer or its step budget.
		{"would have answered after the cap", 5, 0, "Done.", false},
		{"step budget not reached", 0, 5, "I couldn't finish this: I used my budget of 5 steps", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			cheap := overfull(t, h, func(o *Options) {
				o.MaxCompactionsPerTurn = maxCompactions
				o.StepBudget = tc.budget
			})
			var step atomic.Int32
			h.srv.Handle(func(llmtest.Request) llmtest.Reply {
				n := int(step.Add(1))
				if tc.steps > 0 && n > tc.steps {
					return llmtest.Text("Done.")
				}
				return overfullCall(n)
			})
			if err := h.run(t, inbound("E1", "read every part")); err != nil {
				t.Fatalf("Run = %v", err)
			}
			// Every step leaves the window over the hard threshold; only
			// the cap stops a compaction after each of them.
			if got := len(cheap.Requests()); got != maxCompactions {
				t.Errorf("summarizer calls = %d, want %d (MaxCompactionsPerTurn)", got, maxCompactions)
			}
			if got := len(h.tr.compacts); got <= maxCompactions {
				t.Errorf("compactions stored = %d, want more than %d: the set-asides archive too", got, maxCompactions)
			}
			says := h.rec.Says()
			if len(says) != 1 || !strings.HasPrefix(says[0], tc.wantSay) {
				t.Fatalf("Says = %q, want one reply starting %q", says, tc.wantSay)
			}
			recs := h.tr.records(testThread)
			if last := recs[len(recs)-1]; !last.Final || last.EventID != "E1" || last.Partial != tc.wantPart {
				t.Errorf("last entry = final %v event %q partial %v, want final E1 partial %v", last.Final, last.EventID, last.Partial, tc.wantPart)
			}
		})
	}
}

func TestResumeAfterTurnMessageCompacted(t *testing.T) {
	h := newHarness(t, nil)
	overfull(t, h, nil)
	big := h.tools.fn
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The process "dies" while running step 2's call, after the hard
	// compaction of step 1 archived the turn's own user message.
	h.tools.fn = func(c context.Context, name string, args map[string]any) (string, bool, error) {
		if args["n"] == 2.0 {
			cancel()
			return "", false, c.Err()
		}
		return big(c, name, args)
	}
	h.srv.Enqueue(overfullCall(1), overfullCall(2))
	if err := h.agent.Run(ctx, core.Turn{Inbound: inbound("E1", "compare the parts"), Reporter: h.rec}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted Run = %v, want context.Canceled", err)
	}
	archived := h.tr.archive[testThread.Key()]
	if len(archived) != 1 || !strings.Contains(string(archived[0].Data), "compare the parts") {
		t.Fatalf("archive = %d entries, want the turn's user message alone", len(archived))
	}
	anchors := 0
	for _, r := range h.tr.records(testThread) {
		if r.Anchor && r.EventID == "E1" && r.Msg == nil {
			anchors++
		}
	}
	if anchors != 1 {
		t.Fatalf("live anchors for E1 = %d, want 1", anchors)
	}

	// Restart: a fresh agent over the same store, the same event redelivered.
	h.rebuild(t, func(*Options) {})
	h.tools.fn = big
	h.srv.Enqueue(llmtest.Text("Both parts match."))
	if err := h.run(t, inbound("E1", "compare the parts")); err != nil {
		t.Fatalf("resumed Run = %v", err)
	}
	if got := h.rec.Says(); len(got) != 1 || got[0] != "Both parts match." {
		t.Errorf("Says = %q, want the one answer of the resumed turn", got)
	}
	calls := h.tools.recorded()
	if len(calls) != 3 || calls[1].CallID != "c2" || calls[2].CallID != "c2" {
		t.Errorf("dispatches = %+v; want c1, c2 interrupted, then c2 resumed under its own ID", calls)
	}
	reqs := h.srv.Requests()
	sent := reqs[len(reqs)-1].Messages
	var users []string
	for _, m := range sent {
		if m.Role == llm.RoleUser {
			users = append(users, m.Content)
		}
		if m.Role == llm.RoleTool && strings.Contains(m.Content, "outcome is unknown") {
			t.Errorf("resumed window closed %s as abandoned; want it dispatched", m.ToolCallID)
		}
	}
	// The turn's message was archived, yet the request still carries it,
	// before the turn's tool calls: no request opens with an assistant turn.
	if len(users) != 1 || users[0] != "compare the parts" || sent[1].Role != llm.RoleUser {
		t.Errorf("resumed window's user messages = %q (second message %s), want the turn's own message right after the system block", users, sent[1].Role)
	}
	recs := h.tr.records(testThread)
	if last := recs[len(recs)-1]; !last.Final || last.EventID != "E1" || last.Partial {
		t.Errorf("last entry = %+v, want the final answer of E1", last)
	}

	// Delivered once more, the turn is found answered.
	if err := h.run(t, inbound("E1", "compare the parts")); !errors.Is(err, core.ErrAnswered) {
		t.Errorf("third Run = %v, want core.ErrAnswered", err)
	}
	if got := len(h.rec.Says()); got != 1 {
		t.Errorf("Says after redelivery = %d, want still 1", got)
	}
}

// TestSummaryKeepsOnlyIdentifiersTheModelSaw: a tool result longer than
// ResultCap was shown to the model cut short; the identifiers past the cut
// never reached the model, so compaction does not carry them into the
// summary (the archive still holds the full result).
func TestSummaryKeepsOnlyIdentifiersTheModelSaw(t *testing.T) {
	h := newHarness(t, nil)
	overfull(t, h, func(o *Options) { o.ResultCap = 4 << 10 })
	const seen, unseen = "0x52908400098527886E0F7030069857D2E4169EE7", "0x8617E340B3D01FA5F11F306F4090FD50E238070D"
	h.tools.fn = func(ctx context.Context, name string, args map[string]any) (string, bool, error) {
		return "owner " + seen + "\n" + strings.Repeat("line of output\n", 5000) + "hidden " + unseen, false, nil
	}
	h.srv.Enqueue(overfullCall(1), overfullCall(2), overfullCall(3), llmtest.Text("Done."))
	if err := h.run(t, inbound("E1", "who owns it?")); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if len(h.tr.compacts) == 0 {
		t.Fatal("no compaction happened")
	}
	sum := h.tr.compacts[len(h.tr.compacts)-1].Text
	if !strings.Contains(sum, seen) {
		t.Errorf("summary lost %s, which the model saw:\n%s", seen, sum)
	}
	if strings.Contains(sum, unseen) {
		t.Errorf("summary carries %s, which the model never saw", unseen)
	}
}

// TestSystemBlockNoSpendTool: where core_execute is not offered (no
// daemon and no spend tool), the system block does not describe spends,
// even in a place whose skill may spend.
func TestSystemBlockNoSpendTool(t *testing.T) {
	h := newHarness(t, nil)
	h.tools.schemas = slices.DeleteFunc(slices.Clone(h.tools.schemas), func(t llm.Tool) bool { return t.Function.Name == core.CoreExecute })
	system, _, err := h.agent.Prompt(context.Background(), inbound("E9", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(system, "core_execute") || !strings.Contains(system, "not available in this place") {
		t.Errorf("system block without core_execute:\n%s\nwant no mention of core_execute, and spends said to be unavailable", system)
	}
}

// TestSystemBlockSkill: a place's skill adds its instructions, and where it
// may not spend, Neo is told that instead of how spends work.
func TestSystemBlockSkill(t *testing.T) {
	specs, err := skill.Parse([]byte(`{"support": {"instructions": "Answer as the support desk; link the runbook.",
		"places": ["` + testThread.Platform + `:` + testThread.Workspace + `/` + testThread.Channel + `"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	set, err := skill.Compile(specs, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name            string
		skills          *skill.Set
		want, wantNever []string
	}{
		{"bound skill", set, []string{"## Instructions for this place", "Answer as the support desk; link the runbook.", "not available in this place"},
			[]string{"core_execute tool. It hands"}},
		{"default skill", nil, []string{"core_execute tool. It hands a plain-language request"},
			[]string{"## Instructions for this place", "not available in this place. When asked"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(o *Options) { o.Skills = tc.skills })
			system, _, err := h.agent.Prompt(context.Background(), inbound("E9", "hi"))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(system, w) {
					t.Errorf("system block lacks %q", w)
				}
			}
			for _, w := range tc.wantNever {
				if strings.Contains(system, w) {
					t.Errorf("system block has %q", w)
				}
			}
			if strings.Contains(system, "daemon") {
				t.Error("the system block talks of a daemon; users hear what Neo is told")
			}
		})
	}
}

// TestSystemBlockViewing: what the person has open reaches the pinned
// section of their own turn only.
func TestSystemBlockViewing(t *testing.T) {
	h := newHarness(t, nil)
	in := inbound("E9", "summarize this")
	in.Viewing = "channel #launch"
	system, _, err := h.agent.Prompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	pinned, _, _ := strings.Cut(system, "\nInviolable rules:")
	if !strings.Contains(pinned, "They are looking at: channel #launch") {
		t.Errorf("pinned section:\n%s\nwant the channel the person is looking at", pinned)
	}
	system, _, err = h.agent.Prompt(context.Background(), inbound("E10", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(system, "looking at") {
		t.Errorf("a turn without Viewing says what someone is looking at:\n%s", system)
	}
}
