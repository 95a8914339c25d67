package compact

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neobot/neobot/core/llm"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (run with -update)", name, err)
	}
	if got != string(want) {
		t.Errorf("%s mismatch (run with -update):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestArtifacts(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"evm address and tx hash", "sent from 0xAbC0000000000000000000000000000000000001 in 0x" + strings.Repeat("ab12", 16) + ".",
			[]string{"0xAbC0000000000000000000000000000000000001", "0x" + strings.Repeat("ab12", 16)}},
		{"bare hash", "hash " + strings.Repeat("9f", 32), []string{strings.Repeat("9f", 32)}},
		{"uuid", "intent 3f2504e0-4f89-11d3-9a0c-0305e82c3301 pending", []string{"3f2504e0-4f89-11d3-9a0c-0305e82c3301"}},
		{"base58 key", "wallet 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU ok", []string{"7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"}},
		{"long numbers", "block 19283746, amount 1500000.25, ts 1712345678.000100, small 12345", []string{"19283746", "1500000.25", "1712345678.000100"}},
		{"slack and discord ids", "<@U012AB3CDE> in C0123456789, guild 1122334455667788990", []string{"U012AB3CDE", "C0123456789", "1122334455667788990"}},
		{"url with trailing dot", "see https://etherscan.io/tx/0xabc123def4567890. now", []string{"https://etherscan.io/tx/0xabc123def4567890"}},
		{"ordinary prose", "The Quick brown fox jumps over the DEADBEEF lazy dog in Internationalization.", nil},
		{"duplicates once", "19283746 and 19283746", []string{"19283746"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Artifacts(tc.text); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("Artifacts(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

func TestValidateSummary(t *testing.T) {
	history := "[tool fs__write_file] deployed in tx 0x" + strings.Repeat("5f2c", 16) + " to 0x1111111111111111111111111111111111111111 (block 19283746)\n" +
		"[user] track intent 3f2504e0-4f89-11d3-9a0c-0305e82c3301 at https://daemon.example/intents/3f2504e0-4f89-11d3-9a0c-0305e82c3301\n"
	summary := "GOAL: deploy.\nARTIFACTS: contract 0x1111111111111111111111111111111111111111, block 19283746, intent 3f2504e0-4f89-11d3-9a0c-0305e82c3301.\nNEXT: report."
	got, dropped := ValidateSummary(summary, history)
	want := []string{"0x" + strings.Repeat("5f2c", 16), "https://daemon.example/intents/3f2504e0-4f89-11d3-9a0c-0305e82c3301"}
	if fmt.Sprint(dropped) != fmt.Sprint(want) {
		t.Errorf("ValidateSummary dropped = %q, want %q", dropped, want)
	}
	golden(t, "validated.golden", got)
	if again, d := ValidateSummary(got, history); len(d) != 0 || again != got {
		t.Errorf("ValidateSummary(validated) dropped %q, want nothing more", d)
	}
	if same, d := ValidateSummary(summary, "no artifacts here"); same != summary || d != nil {
		t.Errorf("ValidateSummary(clean) = %q, %q; want the summary unchanged", same, d)
	}
}

func TestBudgetCheck(t *testing.T) {
	b := NewBudget(1000)
	for _, tc := range []struct {
		used int
		want Pressure
	}{{0, PressureNone}, {799, PressureNone}, {800, PressureSoft}, {919, PressureSoft}, {920, PressureHard}, {5000, PressureHard}} {
		if got := b.Check(tc.used); got != tc.want {
			t.Errorf("Check(%d) = %v, want %v", tc.used, got, tc.want)
		}
	}
}

func TestSplit(t *testing.T) {
	u, a, tl := llm.UserMessage("u"), llm.AssistantMessage("a"), llm.ToolResult("c", "t", "r")
	ac := llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c"}}}
	msgs := []llm.Message{u, a, u, ac, tl, tl, a}
	ones := []int{1, 1, 1, 1, 1, 1, 1}
	tests := []struct {
		name       string
		keep       int
		preferUser bool
		want       int
	}{
		{"keep one", 1, false, 6},
		{"never before a tool result", 2, false, 3},
		{"prefer user boundary", 1, true, 2},
		{"fallback when no user qualifies", 6, true, 1},
		{"nothing to compact", 7, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Split(msgs, ones, tc.keep, tc.preferUser); got != tc.want {
				t.Errorf("Split(keep %d, preferUser %v) = %d, want %d", tc.keep, tc.preferUser, got, tc.want)
			}
		})
	}
	if got := SafeTail(msgs); got != 2 {
		t.Errorf("SafeTail = %d, want 2", got)
	}
}

type fakeModel struct {
	reply  string
	err    error
	calls  int
	finish string // default stop
}

func (f *fakeModel) Chat(ctx context.Context, req llm.ChatRequest) (*llm.ChatResult, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	finish := f.finish
	if finish == "" {
		finish = llm.FinishStop
	}
	return &llm.ChatResult{Message: llm.AssistantMessage(f.reply), FinishReason: finish}, nil
}

// TestSummaryCutOffRefused: a summary the model stopped writing at its
// length limit is incomplete: the main model writes it instead.
func TestSummaryCutOffRefused(t *testing.T) {
	cheap := &fakeModel{reply: "GOAL: pay bob.\nDECISIONS: the amount is", finish: llm.FinishLength}
	main := &fakeModel{reply: "GOAL: pay bob.\nNEXT: confirm."}
	res, err := New(Options{Cheap: cheap, Main: main}).Summarize(context.Background(), "", []llm.Message{llm.UserMessage("pay bob")})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Text, "the amount is") || !strings.Contains(res.Text, "NEXT: confirm.") || main.calls != 1 {
		t.Errorf("summary = %q (main called %d times), want the main model's, not the cut-off one", res.Text, main.calls)
	}
}

// TestRestoredIdentifiersCarryForward: an identifier the previous summary
// had to restore, and that the compacted messages no longer mention, stays
// in the next summary.
func TestRestoredIdentifiersCarryForward(t *testing.T) {
	addr := "0x" + strings.Repeat("c0ffee", 6) + "beef"
	prior := "GOAL: audit.\n\n" + ArtifactsHeader + "\n- " + addr
	m := &fakeModel{reply: "GOAL: audit.\nNEXT: more."}
	res, err := New(Options{Main: m}).Summarize(context.Background(), prior, []llm.Message{llm.UserMessage("go on")})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, addr) {
		t.Errorf("next summary lost %s, kept only by the previous one:\n%s", addr, res.Text)
	}
}

func TestSummarize(t *testing.T) {
	tx := "0x" + strings.Repeat("ab", 32)
	msgs := []llm.Message{
		llm.UserMessage("pay bob"),
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Function: llm.FunctionCall{Name: "core_execute", Arguments: `{"intent":"pay bob 5 USDC"}`}}}},
		llm.ToolResult("c1", "core_execute", "paid in "+tx),
	}
	prior := "GOAL: old.\n\n" + LedgerHeader + "\n- fs__read_file {} -> done\n\n" + ArtifactsHeader + "\n- 19283746"
	t.Run("cheap fails, main writes", func(t *testing.T) {
		cheap, main := &fakeModel{err: errors.New("down")}, &fakeModel{reply: "GOAL: pay bob.\nNEXT: confirm."}
		res, err := New(Options{Cheap: cheap, Main: main}).Summarize(context.Background(), prior, msgs)
		if err != nil {
			t.Fatalf("Summarize = %v", err)
		}
		if cheap.calls != 1 || main.calls != 1 {
			t.Errorf("calls cheap %d main %d, want 1 and 1", cheap.calls, main.calls)
		}
		for _, want := range []string{"- fs__read_file {} -> done", `- core_execute {"intent":"pay bob 5 USDC"} -> done`, "- 19283746", "- " + tx} {
			if !strings.Contains(res.Text, want) {
				t.Errorf("summary lacks %q:\n%s", want, res.Text)
			}
		}
	})
	t.Run("all fail", func(t *testing.T) {
		c := New(Options{Cheap: &fakeModel{err: errors.New("down")}, Main: &fakeModel{reply: "  "}})
		if _, err := c.Summarize(context.Background(), prior, msgs); err == nil {
			t.Fatal("Summarize with failing models = nil error")
		}
		fb := c.Fallback(prior, msgs)
		if !strings.Contains(fb.Text, "GOAL: old.") || !strings.Contains(fb.Text, tx) || !strings.Contains(fb.Text, "core_execute") {
			t.Errorf("Fallback lost the prior summary, the ledger or the tx hash:\n%s", fb.Text)
		}
	})
}

// TestSummaryBounded: with MaxTokens a summary keeps the newest tool
// calls and the most recent and most referenced identifiers, says the
// rest is archived, and fits.
func TestSummaryBounded(t *testing.T) {
	var msgs []llm.Message
	addr := func(i int) string { return fmt.Sprintf("0x%040x", i) }
	for i := range 200 {
		id := fmt.Sprintf("c%d", i)
		msgs = append(msgs,
			llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: id, Function: llm.FunctionCall{Name: "fs__read_file", Arguments: fmt.Sprintf(`{"part":%d}`, i)}}}},
			llm.ToolResult(id, "fs__read_file", "owner "+addr(i)+" and, again, the treasury "+addr(7777)))
	}
	const limit = 2000
	c := New(Options{Main: &fakeModel{reply: "GOAL: read the parts.\nNEXT: more."}, MaxTokens: limit})
	res, err := c.Summarize(context.Background(), "", msgs)
	if err != nil {
		t.Fatalf("Summarize = %v", err)
	}
	if got := Heuristic(res.Text); got > limit {
		t.Errorf("summary is %d tokens, want at most %d:\n%s", got, limit, res.Text)
	}
	for _, want := range []string{
		"GOAL: read the parts.",
		`- fs__read_file {"part":199} -> done`, // the newest call
		"- " + addr(199),                       // the most recent identifier
		"- " + addr(7777),                      // the most referenced one
		ArchiveNote,
	} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("bounded summary lacks %q:\n%s", want, res.Text)
		}
	}
	for _, gone := range []string{`{"part":0}`, "- " + addr(0)} {
		if strings.Contains(res.Text, gone) {
			t.Errorf("bounded summary keeps the oldest %q, which should have made way", gone)
		}
	}
	// The next summary carries the kept lines forward, and never two notes.
	again, err := c.Summarize(context.Background(), res.Text, msgs[len(msgs)-2:])
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(again.Text, ArchiveNote); n > 2 || Heuristic(again.Text) > limit {
		t.Errorf("second summary has %d archive notes and %d tokens:\n%s", n, Heuristic(again.Text), again.Text)
	}
}

func BenchmarkValidateSummary1MB(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, "[tool rpc__get_tx] tx 0x%064x in block %d from https://explorer.example/tx/%d status ok; the quick brown fox jumps over the lazy dog %d times\n", i, 19000000+i, i, i%7)
	}
	history := sb.String()
	summary := "GOAL: audit.\nARTIFACTS: 0x" + strings.Repeat("0", 64) + "\nNEXT: done."
	b.SetBytes(int64(len(history)))
	b.ReportAllocs()
	for b.Loop() {
		ValidateSummary(summary, history)
	}
}

func TestGoal(t *testing.T) {
	long := strings.Repeat("migrate every vault ", 30)
	for _, tc := range []struct {
		name, summary, want string
	}{
		{"schema", "GOAL: ship the v2 vault.\nDECISIONS: audit first.\nNEXT: deploy.", "ship the v2 vault."},
		{"continued lines", "GOAL: ship the v2 vault\n  and retire v1.\nDECISIONS: none.", "ship the v2 vault and retire v1."},
		{"header on its own line", "GOAL:\n- ship the v2 vault\n\nOPEN: who signs?", "ship the v2 vault"},
		{"markdown headers", "**GOAL:** ship it\n**DECISIONS:** none", "ship it"},
		{"markdown heading", "## Goal\nship it\n## Decisions\nnone", "ship it"},
		{"not first", "(Earlier messages were set aside.)\nGOAL: keep going\nNEXT: x", "keep going"},
		{"ends at the ledger", "GOAL: pay bob\n" + LedgerHeader + "\n- core_execute {} -> done", "pay bob"},
		{"no goal", "DECISIONS: none.\nNEXT: answer.", ""},
		{"says none", "GOAL: none.\nNEXT: wait.", ""},
		{"empty", "", ""},
		{"word inside text is not a header", "GOAL: find the goal: the OPEN one\nNEXT: x", "find the goal: the OPEN one"},
		{"capped", "GOAL: " + long + "\nNEXT: x", strings.TrimSpace(long[:strings.LastIndexByte(long[:goalCap], ' ')]) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Goal(tc.summary); got != tc.want {
				t.Errorf("Goal(%.40q) = %q, want %q", tc.summary, got, tc.want)
			}
		})
	}
}
