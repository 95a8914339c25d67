package compact

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/neobot/neobot/core/llm"
)

// bytesCounter counts one token per byte, so the limits below are exact.
func bytesCounter(s string) int { return len(s) }

func TestFit(t *testing.T) {
	c := New(Options{Counter: bytesCounter})
	tests := []struct {
		name, text string
		limit      int
		want       string
	}{
		{"under", "abc", 4, "abc"},
		{"at the limit", "abcd", 4, "abcd"},
		{"cut on a late line break", "first line\nsecond line", 14, "first line\n…"},
		{"cut mid line when the break is early", "ab\ncdefghijklmnop", 12, "ab\ncdefghijk\n…"},
		{"never inside a rune", "ééééé", 5, "éé\n…"},
		{"trailing space trimmed", "one two   three", 8, "one two\n…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.fit(tt.text, tt.limit); got != tt.want {
				t.Errorf("fit(%q, %d) = %q, want %q", tt.text, tt.limit, got, tt.want)
			}
		})
	}
}

func TestNewest(t *testing.T) {
	c := New(Options{Counter: bytesCounter})
	lines := []string{"- aaaa", "- bbbb", "- cccc"}
	note := len(ArchiveNote)
	tests := []struct {
		name  string
		limit int
		want  []string
	}{
		{"all fit exactly", note + 3*7, lines},
		{"one short drops the oldest", note + 3*7 - 1, []string{ArchiveNote, "- bbbb", "- cccc"}},
		{"room for one", note + 7, []string{ArchiveNote, "- cccc"}},
		{"room for none", note + 6, []string{ArchiveNote}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.newest(lines, tt.limit); !slices.Equal(got, tt.want) {
				t.Errorf("newest(limit %d) = %q, want %q", tt.limit, got, tt.want)
			}
		})
	}
}

func TestRank(t *testing.T) {
	c := New(Options{Counter: bytesCounter})
	// Each costs len+2 = 8.
	all := []artifact{
		{tok: "aaaaaa", refs: 5, last: 1},
		{tok: "bbbbbb", refs: 1, last: 4},
		{tok: "cccccc", refs: 3, last: 2},
		{tok: "dddddd", refs: 1, last: 3},
	}
	toks := func(as []artifact) []string {
		var out []string
		for _, a := range as {
			out = append(out, a.tok)
		}
		return out
	}
	tests := []struct {
		name  string
		limit int
		want  []string
	}{
		{"all fit exactly", 32, []string{"aaaaaa", "bbbbbb", "cccccc", "dddddd"}},
		{"recent half, then most referenced", 31, []string{"bbbbbb", "aaaaaa", "cccccc"}},
		{"one recent, two referenced", 24, []string{"bbbbbb", "aaaaaa", "cccccc"}},
		{"one of each", 16, []string{"bbbbbb", "aaaaaa"}},
		{"only the most referenced", 15, []string{"aaaaaa"}},
		{"nothing", 7, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := toks(c.rank(all, tt.limit)); !slices.Equal(got, tt.want) {
				t.Errorf("rank(limit %d) = %q, want %q", tt.limit, got, tt.want)
			}
		})
	}
	if got := toks(c.rank(all, 40)); !slices.Equal(got, toks(all)) {
		t.Errorf("rank with room for all = %q, want them in their first order", got)
	}
}

func TestMissingCountsReferences(t *testing.T) {
	got := missing("kept 222222", "111111 222222 333333 111111 222222 111111 https://x.test/444444 444444")
	want := []artifact{{tok: "111111", refs: 3, last: 6}, {tok: "333333", refs: 1, last: 3}, {tok: "https://x.test/444444", refs: 1, last: 7}, {tok: "444444", refs: 1, last: 8}}
	if !slices.Equal(got, want) {
		t.Errorf("missing = %+v, want %+v", got, want)
	}
	if got := missing("see https://x.test/444444 now", "444444"); got != nil {
		t.Errorf("a token inside a kept URL is missing: %+v", got)
	}
}

func TestClipAndRender(t *testing.T) {
	for _, tt := range []struct {
		s     string
		limit int
		want  string
	}{
		{"abcdef", 0, "abcdef"},
		{"abcdef", 6, "abcdef"},
		{"abcdef", 5, "abcde …[1 bytes cut]"},
		{"aé", 2, "a …[2 bytes cut]"},
	} {
		if got := clip(tt.s, tt.limit); got != tt.want {
			t.Errorf("clip(%q, %d) = %q, want %q", tt.s, tt.limit, got, tt.want)
		}
	}
	msgs := []llm.Message{
		{},
		llm.UserMessage("hello there"),
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c", Function: llm.FunctionCall{Name: "fs__read", Arguments: `{"path":"/a/b/c"}`}}}},
		llm.ToolResult("c", "fs__read", "contents"),
		llm.ToolResult("d", "", "anonymous"),
	}
	want := "[user] hello th …[3 bytes cut]\n[assistant] \n  -> fs__read {\"path\": …[9 bytes cut]\n[tool fs__read] contents\n[tool] anonymou …[1 bytes cut]\n"
	if got := Render(msgs, 8); got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
}

func TestLedgerLines(t *testing.T) {
	call := func(id, name, args string) llm.ToolCall {
		return llm.ToolCall{ID: id, Function: llm.FunctionCall{Name: name, Arguments: args}}
	}
	msgs := []llm.Message{
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call("1", "a", "{}"), call("2", "b", strings.Repeat("x", 301)), call("3", "c", "{}")}},
		llm.ToolResult("1", "a", "ok"),
		llm.ToolResult("2", "b", "error: no"),
		llm.ToolResult("3", "c", "fine, error: none"),
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call("4", "d", "{}")}},
	}
	want := []string{"- a {} -> done", "- b " + strings.Repeat("x", 300) + " …[1 bytes cut] -> failed", "- c {} -> done", "- d {} -> no result"}
	if got := ledgerLines(msgs); !slices.Equal(got, want) {
		t.Errorf("ledgerLines = %q, want %q", got, want)
	}
}

func TestSections(t *testing.T) {
	text := "GOAL: g.\n\n" + LedgerHeader + "\n- one\n\n- two\nNEXT: n.\n- three\n"
	if got, want := sectionLines(text, LedgerHeader), []string{"- one", "- two"}; !slices.Equal(got, want) {
		t.Errorf("sectionLines = %q, want %q", got, want)
	}
	if got := sectionLines(text, ArtifactsHeader); got != nil {
		t.Errorf("sectionLines of an absent section = %q", got)
	}
	if got, want := stripSection(text, LedgerHeader), "GOAL: g.\n\nNEXT: n.\n- three"; got != want {
		t.Errorf("stripSection = %q, want %q", got, want)
	}
	if got, want := stripSection("GOAL: g.\n"+LedgerHeader+"\n- one\n", LedgerHeader), "GOAL: g."; got != want {
		t.Errorf("stripSection at the end = %q, want %q", got, want)
	}
	if got := stripSection(text, ArtifactsHeader); got != text {
		t.Errorf("stripSection of an absent section changed the text to %q", got)
	}
}

// TestFinishBounded pins how MaxTokens is shared, to the byte.
func TestFinishBounded(t *testing.T) {
	msgs := []llm.Message{
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "1", Function: llm.FunctionCall{Name: "fs__read", Arguments: "{}"}}}},
		llm.ToolResult("1", "fs__read", "block 111111 and 222222"),
	}
	prose := strings.Repeat("word ", 20)
	c := New(Options{Counter: bytesCounter, MaxTokens: 1000})
	got := c.finish(prose, "", msgs).Text
	want := prose + "\n\n" + LedgerHeader + "\n- fs__read {} -> done\n\n" + ArtifactsHeader + "\n- 111111\n- 222222\n"
	if got != want {
		t.Errorf("finish under the limit =\n%q\nwant\n%q", got, want)
	}

	// 45% of 200 for the prose, 20% for the ledger (too little for even
	// its note), and no room left for identifiers.
	c = New(Options{Counter: bytesCounter, MaxTokens: 200})
	got = c.finish(prose, "", msgs).Text
	want = strings.Repeat("word ", 17) + "word\n…\n\n" + LedgerHeader + "\n" + ArchiveNote + "\n\n" + ArtifactsHeader + "\n" + ArchiveNote + "\n"
	if got != want {
		t.Errorf("finish over the limit =\n%q\nwant\n%q", got, want)
	}

	// Room for exactly one identifier of two (each costs 8): the most
	// recent is kept; one more token and both are.
	ledger := "\n\n" + LedgerHeader + "\n" + ArchiveNote // 20% of the bound is too little for the line
	bound := len(ledger) + len(ArtifactsHeader+ArchiveNote) + 8 + 15
	for extra, want := range [][]string{{"222222"}, {"111111", "222222"}} {
		c = New(Options{Counter: bytesCounter, MaxTokens: bound + extra})
		if res := c.finish("", "", msgs); !slices.Equal(res.Dropped, want) {
			t.Errorf("MaxTokens %d restored %q, want %q:\n%s", bound+extra, res.Dropped, want, res.Text)
		}
	}
}

// TestSummarizeEdges: no model, a cancelled context, model sections
// replaced by the compactor's own, and the excerpt cap.
func TestSummarizeEdges(t *testing.T) {
	ctx := context.Background()
	if _, err := New(Options{}).Summarize(ctx, "", nil); err == nil {
		t.Error("Summarize with no model = nil error")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	main := &fakeModel{reply: "GOAL: x"}
	if _, err := New(Options{Cheap: &fakeModel{err: errors.New("down")}, Main: main}).Summarize(cancelled, "", nil); !errors.Is(err, context.Canceled) || main.calls != 0 {
		t.Errorf("Summarize on a cancelled context = %v (main called %d times), want context.Canceled at once", err, main.calls)
	}
	m := &fakeModel{reply: "  GOAL: x.\n\n" + LedgerHeader + "\n- invented -> done\n\n" + ArtifactsHeader + "\n- 999999\nNEXT: y.  "}
	res, err := New(Options{Main: m}).Summarize(ctx, "", []llm.Message{llm.UserMessage("hi")})
	if err != nil {
		t.Fatal(err)
	}
	if want := "GOAL: x.\n\nNEXT: y.\n"; res.Text != want {
		t.Errorf("summary = %q, want the model's sections only, trimmed: %q", res.Text, want)
	}
	var prompt string
	rec := modelFunc(func(req llm.ChatRequest) string { prompt = req.Messages[1].Content; return "GOAL: x." })
	if _, err := New(Options{Main: rec, ExcerptCap: 5}).Summarize(ctx, "PRIOR", []llm.Message{llm.UserMessage("abcdefgh")}); err != nil {
		t.Fatal(err)
	}
	if want := "Previous summary:\nPRIOR\n\nHistory to compact:\n[user] abcde …[3 bytes cut]\n"; prompt != want {
		t.Errorf("prompt = %q, want %q", prompt, want)
	}
	if _, err := New(Options{Main: rec}).Summarize(ctx, " ", []llm.Message{llm.UserMessage(strings.Repeat("a", 5000))}); err != nil {
		t.Fatal(err)
	}
	if want := "History to compact:\n[user] " + strings.Repeat("a", 4096) + " …[904 bytes cut]\n"; prompt != want {
		t.Errorf("default excerpt cap: prompt is %d bytes, want %d", len(prompt), len(want))
	}
}

type modelFunc func(llm.ChatRequest) string

func (f modelFunc) Chat(_ context.Context, req llm.ChatRequest) (*llm.ChatResult, error) {
	return &llm.ChatResult{Message: llm.AssistantMessage(f(req)), FinishReason: llm.FinishStop}, nil
}

func TestFallbackNote(t *testing.T) {
	c := New(Options{})
	note := "(Earlier messages were set aside without a summary; the identifiers below are from them.)"
	if got := c.Fallback("", nil).Text; got != note+"\n" {
		t.Errorf("Fallback with nothing = %q", got)
	}
	if got, want := c.Fallback("GOAL: g.\n\n"+ArtifactsHeader+"\n- 123456\n", nil).Text, "GOAL: g.\n\n"+note+"\n\n"+ArtifactsHeader+"\n- 123456\n"; got != want {
		t.Errorf("Fallback = %q, want %q", got, want)
	}
}

func TestBudgetEdges(t *testing.T) {
	custom := Budget{Window: 100, SoftPct: 0.5, HardPct: 0.6}
	for _, tc := range []struct {
		b    Budget
		used int
		want Pressure
	}{
		{custom, 49, PressureNone}, {custom, 50, PressureSoft}, {custom, 59, PressureSoft}, {custom, 60, PressureHard},
		{Budget{Window: 100}, 79, PressureNone}, {Budget{Window: 100}, 80, PressureSoft}, {Budget{Window: 100}, 92, PressureHard},
		{Budget{}, 1 << 30, PressureNone},
	} {
		if got := tc.b.Check(tc.used); got != tc.want {
			t.Errorf("%+v.Check(%d) = %v, want %v", tc.b, tc.used, got, tc.want)
		}
	}
	for _, tc := range []struct {
		p    Pressure
		want string
	}{{PressureNone, "none"}, {PressureSoft, "soft"}, {PressureHard, "hard"}} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("String = %q, want %q", got, tc.want)
		}
	}
	if got, want := NewBudget(1000).Stat(250), "~250 of 1000 tokens (25%)"; got != want {
		t.Errorf("Stat = %q, want %q", got, want)
	}
	if got, want := (Budget{}).Stat(7), "~7 tokens used"; got != want {
		t.Errorf("Stat without a window = %q, want %q", got, want)
	}
}

func TestTokenEstimates(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int
	}{{"", 0}, {"a", 1}, {"abc", 1}, {"abcd", 2}, {"abcdef", 2}, {"abcdefg", 3}} {
		if got := Heuristic(tc.s); got != tc.want {
			t.Errorf("Heuristic(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
	m := llm.Message{Role: llm.RoleAssistant, Content: "abcdef", ToolCalls: []llm.ToolCall{{Function: llm.FunctionCall{Name: "ab", Arguments: "abcd"}}}}
	// 4 + 6 for the content, 4 + 2 + 4 for the call.
	if got := MessageTokens(bytesCounter, m); got != 20 {
		t.Errorf("MessageTokens = %d, want 20", got)
	}
	if got := MessageTokens(nil, m); got != 4+2+4+1+2 {
		t.Errorf("MessageTokens with the default counter = %d, want %d", got, 4+2+4+1+2)
	}
	tools := []llm.Tool{{Function: llm.FunctionDef{Name: "ab", Description: "abc", Parameters: map[string]any{"k": 1}}}}
	// 4 + 2 + 3 + len("map[k:1]").
	if got := ToolsTokens(bytesCounter, tools); got != 17 {
		t.Errorf("ToolsTokens = %d, want 17", got)
	}
	if got := Estimate(bytesCounter, []llm.Message{m, m}, tools); got != 57 {
		t.Errorf("Estimate = %d, want 57", got)
	}
	if got, want := Estimate(nil, []llm.Message{m}, tools), MessageTokens(Heuristic, m)+ToolsTokens(Heuristic, tools); got != want {
		t.Errorf("Estimate with the default counter = %d, want %d", got, want)
	}
	if got, want := ToolsTokens(nil, tools), 4+1+1+3; got != want {
		t.Errorf("ToolsTokens with the default counter = %d, want %d", got, want)
	}
	count, err := NewTokenizer()
	if err != nil {
		t.Fatal(err)
	}
	if got := count("hello world"); got != 2 {
		t.Errorf("tokenizer counts %d tokens in %q, want 2", got, "hello world")
	}
}

func TestGoalEdges(t *testing.T) {
	exact := strings.Repeat("a", goalCap)
	for _, tc := range []struct {
		name, summary, want string
	}{
		{"aside in parentheses", "GOAL (for now): ship\nNEXT: x", "ship"},
		{"hashed with colon", "### GOAL:\nship it\n", "ship it"},
		{"unknown section", "GOALS: ship\n", ""},
		{"no colon, not hashed", "GOAL ship\n", ""},
		{"header after blank lines", "GOAL:\n\n\nship it\n\nmore", "ship it"},
		{"exactly the cap", "GOAL: " + exact, exact},
		{"one word too long", "GOAL: " + exact + "b", exact + "…"},
		{"multibyte at the cut", "GOAL: " + strings.Repeat("a", goalCap-1) + "é", strings.Repeat("a", goalCap-1) + "…"},
		{"trailing punctuation at the cut", "GOAL: " + strings.Repeat("a", goalCap-3) + ", b c", strings.Repeat("a", goalCap-3) + "…"},
		{"says unknown", "GOAL: Unknown.", ""},
		{"says n/a", "GOAL: n/a", ""},
		{"says not stated", "GOAL: not stated", ""},
		{"says dash", "GOAL: -", ""},
		{"says (none)", "GOAL: (none)", ""},
		{"says unclear", "GOAL: unclear", ""},
		{"digits are not a header", "123: GOAL: x", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Goal(tc.summary); got != tc.want {
				t.Errorf("Goal(%.50q) = %q, want %q", tc.summary, got, tc.want)
			}
		})
	}
}

func TestSplitShortCounts(t *testing.T) {
	msgs := []llm.Message{llm.UserMessage("a"), llm.UserMessage("b"), llm.UserMessage("c")}
	// Messages past the counts weigh nothing: only msgs[1] counts.
	if got := Split(msgs, []int{5, 5}, 5, false); got != 1 {
		t.Errorf("Split with counts for two of three = %d, want 1", got)
	}
	if got := SafeTail([]llm.Message{llm.AssistantMessage("x")}); got != 0 {
		t.Errorf("SafeTail with no user message = %d, want 0", got)
	}
	if got := fmt.Sprint(SafeTail([]llm.Message{llm.UserMessage("x"), llm.AssistantMessage("y")})); got != "0" {
		t.Errorf("SafeTail = %s, want 0", got)
	}
}
