package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/compact"
	"github.com/neobot/neobot/core/coretest"
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
		{"0xabc0000000000000000000000000000000000001", []string{"[tool fs__read_file · msg:1] owner 0xAbC0000000000000000000000000000000000001 of vault-7"}, []string{"other thread"}},
		{"vault-7", []string{"owner 0xAbC", "fs__write_file"}, nil},                                 // the whole identifier first, tool calls searched
		{"ord-20261124-88817733 lisbon", []string{"order ord-20261124-88817733 shipped", "…"}, nil}, // every word, excerpted
		{"nowhere", nil, []string{"["}},
	}
	for _, tt := range tests {
		got, err := h.Search(ctx, coretest.ToolCall(ctx, "history_search", nil), tt.query)
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
	if _, err := h.Search(ctx, coretest.ToolCall(ctx, "history_search", nil), "  "); !errors.Is(err, ErrNoQuery) {
		t.Errorf("Search(blank) = %v, want ErrNoQuery", err)
	}
	if _, err := h.Search(context.Background(), coretest.ToolCall(context.Background(), "history_search", nil), "vault"); err == nil {
		t.Errorf("Search outside a turn = nil error, want one")
	}
}

// TestHistorySearchTokens: words and numbers match whole tokens, a
// header phrase ranks its message first, a quoted phrase is required, and
// an excerpt shows the lines around every match.
func TestHistorySearchTokens(t *testing.T) {
	tr := newTranscript()
	var recs []record
	batch := func(n int, body string) {
		m := llm.ToolResult(fmt.Sprintf("c%d", n), "audit__read", fmt.Sprintf("AUDIT BATCH %d\n%s", n, body))
		recs = append(recs, record{Msg: &m})
	}
	long := strings.Repeat("padding row of the audit\n", 90) // past WholeHit
	batch(17, "checksum 9f3a\nline two\nline three\nline four\nline five\nledger entry TX-5521 settled 40 USDC\nline seven\n"+long)
	for n := 18; n < 200; n++ {
		batch(n, fmt.Sprintf("hash 0x%x17%x batch 17 of the 17xx series, checksum 17%d", n*7919, n, n))
	}
	tr.seed(testThread, recs...)
	if err := tr.Compact(context.Background(), testThread, core.Summary{Text: "GOAL: audit", UpTo: 999}); err != nil {
		t.Fatal(err)
	}
	h := NewHistory(tr)
	ctx := core.WithTurn(context.Background(), &core.Turn{Inbound: inbound("E9", "find it")})
	first := func(q string) string {
		got, err := h.Search(ctx, coretest.ToolCall(ctx, "history_search", nil), q)
		if err != nil {
			t.Fatalf("Search(%q) = %v", q, err)
		}
		hit, _, _ := strings.Cut(got, "\n[")
		return hit
	}
	if got := first("AUDIT BATCH 17"); !strings.HasPrefix(got, "[tool audit__read · msg:1] AUDIT BATCH 17\n") {
		t.Errorf("Search(AUDIT BATCH 17) first hit = %q, want batch 17's result", got)
	}
	if got := first(`"batch 170"`); !strings.Contains(got, "AUDIT BATCH 170") {
		t.Errorf(`Search("batch 170") first hit = %q, want batch 170`, got)
	}
	if got, _ := h.Search(ctx, coretest.ToolCall(ctx, "history_search", nil), `"batch 999"`); got != "" {
		t.Errorf(`Search("batch 999") = %q, want nothing: a quoted phrase is required`, got)
	}
	if got := first("tx-5521"); !strings.Contains(got, "ledger entry TX-5521 settled 40 USDC") || !strings.Contains(got, "line five") {
		t.Errorf("Search(tx-5521) first hit = %q, want its line with the line before", got)
	}
	// Both matches of a hit show, the lines between them left out.
	got := first(`"AUDIT BATCH 17" TX-5521`)
	for _, want := range []string{"AUDIT BATCH 17", "checksum 9f3a", "…", "line five", "ledger entry TX-5521", "line seven"} {
		if !strings.Contains(got, want) {
			t.Errorf("excerpt lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "line three") {
		t.Errorf("excerpt shows a line far from every match:\n%s", got)
	}
	// A hit in a long message shows its header however far the match,
	// and the reference that opens it whole.
	got = first("tx-5521")
	if !strings.HasPrefix(got, "[tool audit__read · msg:1] AUDIT BATCH 17\n…\nline five") || !strings.Contains(got, `history_search "msg:1" shows it whole`) {
		t.Errorf("Search(tx-5521) first hit = %q, want the header, the lines around the match and the reference", got)
	}
	// A hit in a short message shows all of it.
	if got := first("AUDIT BATCH 18"); !strings.Contains(got, "AUDIT BATCH 18\nhash 0x") || !strings.HasSuffix(got, fmt.Sprintf("checksum 17%d\n", 18)) {
		t.Errorf("Search(AUDIT BATCH 18) first hit = %q, want the whole short message", got)
	}
}

// TestHistoryOpen: a hit's reference as the query returns that archived
// message whole, or page by page when it is longer than the page, each
// page saying how to read the next; a reference to nothing says so.
func TestHistoryOpen(t *testing.T) {
	tr := newTranscript()
	var long strings.Builder
	long.WriteString("AUDIT BATCH 9\n")
	for i := 0; long.Len() < 5000; i++ {
		fmt.Fprintf(&long, "row %d: entry TX-%d settled\n", i, 9000+i)
	}
	short := llm.ToolResult("c1", "audit__read", "AUDIT BATCH 8\nentry TX-8 settled")
	big := llm.ToolResult("c2", "audit__read", long.String())
	big2 := llm.ToolResult("c3", "audit__read", strings.Replace(long.String(), "BATCH 9", "BATCH 10", 1))
	tr.seed(testThread, record{Msg: &short}, record{Msg: &big}, record{Msg: &big2})
	if err := tr.Compact(context.Background(), testThread, core.Summary{Text: "GOAL: audit", UpTo: 9}); err != nil {
		t.Fatal(err)
	}
	h := NewHistoryPaged(tr, 2<<10)
	ctx := core.WithTurn(context.Background(), &core.Turn{Inbound: inbound("E9", "open it")})
	search := func(q string) string {
		got, err := h.Search(ctx, coretest.ToolCall(ctx, "history_search", nil), q)
		if err != nil {
			t.Fatalf("Search(%q) = %v", q, err)
		}
		return got
	}
	if got, want := search("msg:1"), "[tool audit__read · msg:1] AUDIT BATCH 8\nentry TX-8 settled"; got != want {
		t.Errorf("Search(msg:1) = %q, want %q", got, want)
	}
	var whole strings.Builder
	for page, q := 1, `"msg:2"`; q != ""; page++ {
		got := search(q)
		if len(got) > 2<<10 {
			t.Errorf("page %d is %d bytes, over the 2 KB page", page, len(got))
		}
		head, body, _ := strings.Cut(got, "\n")
		if want := fmt.Sprintf("[tool audit__read · msg:2] page %d of 3:", page); head != want {
			t.Fatalf("page %d opens %q, want %q", page, head, want)
		}
		body, next, more := strings.Cut(body, "\n[page ")
		whole.WriteString(body)
		q = ""
		if more {
			q = fmt.Sprintf("msg:2/%d", page+1)
			if !strings.Contains(next, `history_search "`+q+`" shows the next`) {
				t.Fatalf("page %d ends %q, want the next page's reference", page, next)
			}
		}
	}
	if whole.String() != long.String() {
		t.Errorf("the pages joined differ from the message:\n%s", whole.String())
	}
	// Hits past the page are counted, not shown.
	if got := search("settled"); len(got) > 2<<10 || !strings.HasSuffix(got, "(2 more hits not shown: search more precisely)") {
		t.Errorf("Search(settled) = %d bytes ending %q, want at most 2 KB and the hits left out counted", len(got), got[max(0, len(got)-60):])
	}
	for q, want := range map[string]string{
		"msg:4":   "no archived message msg:4 in this conversation",
		"msg:2/4": "msg:2 has 3 pages; there is no page 4",
	} {
		if got := search(q); got != want {
			t.Errorf("Search(%q) = %q, want %q", q, got, want)
		}
	}
}

// BenchmarkHistorySearch searches 10,000 archived messages (the index is
// built by the first search and grows with the archive).
func BenchmarkHistorySearch(b *testing.B) {
	tr := newTranscript()
	recs := make([]record, 0, 10000)
	for n := range 10000 {
		m := llm.ToolResult(fmt.Sprintf("c%d", n), "audit__read", fmt.Sprintf("AUDIT BATCH %d\nhash 0x%x%x\nentry TX-%d settled %d USDC", n, n*7919, n*104729, n*31, n%97))
		recs = append(recs, record{Msg: &m})
	}
	tr.seed(testThread, recs...)
	if err := tr.Compact(context.Background(), testThread, core.Summary{Text: "GOAL: audit", UpTo: 1 << 20}); err != nil {
		b.Fatal(err)
	}
	h := NewHistory(tr)
	ctx := core.WithTurn(context.Background(), &core.Turn{Inbound: inbound("E9", "find it")})
	queries := []string{"AUDIT BATCH 4242", "TX-131502", "settled 42 USDC", `"batch 77"`}
	if _, err := h.Search(ctx, coretest.ToolCall(ctx, "history_search", nil), queries[0]); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if _, err := h.Search(ctx, coretest.ToolCall(ctx, "history_search", nil), queries[i%len(queries)]); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
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
			if got, err := hist.Search(ctx, coretest.ToolCall(ctx, "history_search", nil), id); err != nil || !strings.Contains(got, id) {
				t.Errorf("history_search(%s) = %q, %v; want the archived message holding it", id, got, err)
			}
		}
	}
	t.Logf("%d compactions; of %d identifiers, %d in the last summary, %d live, %d in the archive", len(h.tr.compacts), len(seen), inSummary, inLive, found)
	if inSummary == 0 {
		t.Errorf("the last summary keeps none of the identifiers; it should keep the most recent")
	}
}

// TestHistorySearchTwoThreads: one History serves two threads at once;
// each turn's searches find its own thread's archive and never the
// other's, however their searches interleave, and a thread archived
// further later is searched to its new end.
func TestHistorySearchTwoThreads(t *testing.T) {
	tr := newTranscript()
	a, b := testThread, testThread
	b.ID = "1712345678.222222"
	ra := llm.ToolResult("c1", "fs__read_file", "invoice INV-AAAA-1 for alpha")
	rb := llm.ToolResult("c2", "fs__read_file", "invoice INV-BBBB-2 for beta")
	tr.seed(a, record{Msg: &ra})
	tr.seed(b, record{Msg: &rb})
	for _, th := range []core.Thread{a, b} {
		if err := tr.Compact(context.Background(), th, core.Summary{Text: "GOAL: x", UpTo: 99}); err != nil {
			t.Fatal(err)
		}
	}
	h := NewHistory(tr)
	turn := func(th core.Thread) context.Context {
		in := inbound("E1", "which invoice?")
		in.Thread = th
		return core.WithTurn(context.Background(), &core.Turn{Inbound: in})
	}
	threads := []struct {
		ctx        context.Context
		own, other string
	}{
		{turn(a), "INV-AAAA-1", "INV-BBBB-2"},
		{turn(b), "INV-BBBB-2", "INV-AAAA-1"},
	}
	var wg sync.WaitGroup
	for i := range 64 {
		th := threads[i%2]
		wg.Go(func() {
			got, err := h.Search(th.ctx, coretest.ToolCall(th.ctx, "history_search", nil), "invoice")
			if err != nil || !strings.Contains(got, th.own) || strings.Contains(got, th.other) {
				t.Errorf("Search(invoice) = %q, %v; want %s and never %s", got, err, th.own, th.other)
			}
		})
	}
	wg.Wait()

	more := llm.ToolResult("c3", "fs__read_file", "invoice INV-AAAA-3 for alpha, later")
	tr.seed(a, record{Msg: &more})
	if err := tr.Compact(context.Background(), a, core.Summary{Text: "GOAL: x", UpTo: 199}); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.Search(threads[0].ctx, coretest.ToolCall(threads[0].ctx, "history_search", nil), "INV-AAAA-3"); !strings.Contains(got, "INV-AAAA-3") {
		t.Errorf("after more was archived, Search = %q; want the new entry", got)
	}
	if got, _ := h.Search(threads[1].ctx, coretest.ToolCall(threads[1].ctx, "history_search", nil), "INV-AAAA-3"); strings.Contains(got, "AAAA") {
		t.Errorf("the other thread's Search = %q; want none of thread a's entries", got)
	}
}
