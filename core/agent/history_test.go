package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/compact"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

func TestHistorySearch(t *testing.T) {
	tr := newTranscript()
	other := testThread
	other.ID = "1712345678.999999"
	r1 := llm.ToolResult("c1", "fs__read_file", "owner 0xAbC0000000000000000000000000000000000001 of vault-7")
	r2 := llm.ToolResult("c2", "fs__read_file", "order ord-20261124-88817733 shipped "+strings.Repeat("filler ", 300)+"to Lisbon")
	a3 := llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call("c3", "fs__write_file", `{"path":"notes/vault-7.md"}`)}}
	tr.seed(testThread, record{Msg: &r1}, record{Msg: &r2}, record{Msg: &a3})
	secret := llm.ToolResult("c9", "fs__read_file", "other thread's 0xAbC0000000000000000000000000000000000001")
	tr.seed(other, record{Msg: &secret})
	for _, th := range []core.Thread{testThread, other} {
		if err := tr.Compact(context.Background(), th, core.Summary{Text: "GOAL: x", UpTo: 99}); err != nil {
			t.Fatal(err)
		}
	}
	h := NewHistory(tr)
	ctx := core.WithTurn(context.Background(), &core.Turn{Inbound: inbound("E9", "what was it?")})

	tests := []struct {
		query string
		want  []string // each must appear, in this order
		not   []string
	}{
		{"0xabc0000000000000000000000000000000000001", []string{"[tool fs__read_file] owner 0xAbC0000000000000000000000000000000000001 of vault-7"}, []string{"other thread"}},
		{"vault-7", []string{"fs__write_file", "owner 0xAbC"}, nil},                                 // newest first, tool calls searched
		{"ord-20261124-88817733 lisbon", []string{"order ord-20261124-88817733 shipped", "…"}, nil}, // every word, excerpted
		{"nowhere", nil, []string{"["}},
	}
	for _, tt := range tests {
		got, err := h.Search(ctx, tt.query)
		if err != nil {
			t.Fatalf("Search(%q) = %v", tt.query, err)
		}
		at := 0
		for _, w := range tt.want {
			i := strings.Index(got[at:], w)
			if i < 0 {
				t.Errorf("Search(%q) = %q, want %q (in order)", tt.query, got, w)
				break
			}
			at += i
		}
		for _, n := range tt.not {
			if strings.Contains(got, n) {
				t.Errorf("Search(%q) = %q, must not contain %q", tt.query, got, n)
			}
		}
	}
	if _, err := h.Search(ctx, "  "); !errors.Is(err, ErrNoQuery) {
		t.Errorf("Search(blank) = %v, want ErrNoQuery", err)
	}
	if _, err := h.Search(context.Background(), "vault"); err == nil {
		t.Errorf("Search outside a turn = nil error, want one")
	}
}

// TestLongConversationBounded runs 1,000 tool steps over 100 turns in a
// 16k-token window with a summarizer that keeps no identifier at all, the
// worst case for the trust contract. Every identifier the model saw must
// stay in the summary or be findable with history_search; no summary may
// take more than a quarter of the window, and no request may exceed it.
func TestLongConversationBounded(t *testing.T) {
	const (
		window       = 16_000
		turns        = 100
		stepsPerTurn = 10
	)
	h := newHarness(t, nil)
	cheap := llmtest.New(t)
	cheap.Handle(func(llmtest.Request) llmtest.Reply {
		return llmtest.Text("GOAL: read every part.\nDECISIONS: none.\nARTIFACTS: see below.\nOPEN: more parts.\nLAST_RESULTS: parts read.\nNEXT: keep reading.")
	})
	h.rebuild(t, func(o *Options) {
		o.ContextWindow = window
		o.Cheap = newClient(t, cheap)
		o.StepBudget = 2 * stepsPerTurn
	})

	var (
		mu    sync.Mutex
		steps = map[string]int{} // the turn's user text -> tool steps so far
		n     int                // tool results so far
		seen  []string           // identifiers the model was shown
	)
	h.srv.Handle(func(r llmtest.Request) llmtest.Reply {
		var user string
		for _, m := range r.Messages {
			if m.Role == llm.RoleUser {
				user = m.Content
			}
		}
		mu.Lock()
		defer mu.Unlock()
		steps[user]++
		if steps[user] > stepsPerTurn {
			return llmtest.Text("Read this batch.")
		}
		return llmtest.Calls(call(fmt.Sprintf("c%d", len(steps)*100+steps[user]), "fs__read_file", `{"path":"part"}`))
	})
	h.tools.fn = func(ctx context.Context, name string, args map[string]any) (string, bool, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		ids := []string{
			fmt.Sprintf("0x%040x", 0xa11ce0000+n),
			fmt.Sprintf("req-%08x-e29b-41d4-a716-%012x", n, 0x446655440000+n),
			fmt.Sprintf("%d", 19_000_000+n*7),
		}
		seen = append(seen, ids...)
		return fmt.Sprintf("part %d: owner %s, request %s, block %s\n%s", n, ids[0], ids[1], ids[2],
			strings.Repeat("an ordinary line of tool output\n", 40)), false, nil
	}

	for i := range turns {
		in := inbound(fmt.Sprintf("E%d", i+1), fmt.Sprintf("read batch %d", i+1))
		if err := h.run(t, in); err != nil {
			t.Fatalf("turn %d: Run = %v", i+1, err)
		}
	}

	if n != turns*stepsPerTurn {
		t.Fatalf("tool steps = %d, want %d", n, turns*stepsPerTurn)
	}
	if len(h.tr.compacts) < 10 {
		t.Fatalf("compactions = %d, want at least 10", len(h.tr.compacts))
	}
	for i, s := range h.tr.compacts {
		if got := compact.Heuristic(s.Text); got > window/4 {
			t.Errorf("summary %d is %d tokens, more than a quarter of the %d window", i, got, window)
		}
	}
	for i, r := range h.srv.Requests() {
		if got := compact.Estimate(compact.Heuristic, r.Messages, r.Tools); got > window {
			t.Errorf("request %d is %d tokens, over the %d window", i, got, window)
		}
	}
	last := h.tr.compacts[len(h.tr.compacts)-1].Text
	if !strings.Contains(last, compact.ArchiveNote) {
		t.Errorf("the last summary does not point at %s, though it could not hold everything:\n%s", compact.HistorySearch, last)
	}
	// The model sees the live tail as it is; the summary holds what it
	// can; history_search reads the archive. Searching costs a decode of
	// the whole archive, so the tool itself is asked about every 20th
	// identifier, oldest first, and the archive's text is checked for all.
	var live, archived strings.Builder
	for _, r := range h.tr.records(testThread) {
		if r.Msg != nil {
			live.WriteString(messageText(*r.Msg) + "\n")
		}
	}
	entries, _ := h.tr.Archived(context.Background(), testThread)
	for _, e := range entries {
		archived.Write(e.Data)
	}
	hist := NewHistory(h.tr)
	ctx := core.WithTurn(context.Background(), &core.Turn{Inbound: inbound("E999", "what was it?")})
	inSummary, inLive, found := 0, 0, 0
	for i, id := range seen {
		switch {
		case strings.Contains(last, id):
			inSummary++
		case strings.Contains(live.String(), id):
			inLive++
		case !strings.Contains(archived.String(), id):
			t.Errorf("identifier %s is in neither the summary, the live history nor the archive", id)
		default:
			found++
			if i%20 != 0 {
				continue
			}
			if got, err := hist.Search(ctx, id); err != nil || !strings.Contains(got, id) {
				t.Errorf("history_search(%s) = %q, %v; want the archived message holding it", id, got, err)
			}
		}
	}
	t.Logf("%d compactions; of %d identifiers, %d in the last summary, %d live, %d in the archive", len(h.tr.compacts), len(seen), inSummary, inLive, found)
	if inSummary == 0 {
		t.Errorf("the last summary keeps none of the identifiers; it should keep the most recent")
	}
}
