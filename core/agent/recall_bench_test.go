package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/coretest"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/llm/llmtest"
)

// BenchmarkHistoryRecall runs a 1,000-step conversation (100 turns of 10
// reads) in a 16k window, so compaction archives most of it, then asks
// history_search for 100 archived facts, each two ways: by the header
// phrase of the result that held it ("AUDIT PAGE 412"), wanting its
// identifier and the fact; and by its full identifier
// ("LEDGER-0004f3a1"), wanting the result's header and the fact, which
// lies a dozen lines below the header. Each must be in the first hit,
// verbatim; the benchmark fails otherwise. Noise in every result holds
// the same numbers inside longer tokens, the trap substring matching fell
// into. Run it with -benchtime=1x.
func BenchmarkHistoryRecall(b *testing.B) {
	const (
		window       = 16_000
		turns        = 100
		stepsPerTurn = 10
	)
	fact := func(n int) string {
		return fmt.Sprintf("fact: ledger LEDGER-%08x holds %d.%02d USDC for vendor %d", n*7919, n*13, n%100, n)
	}
	for range b.N {
		b.StopTimer()
		cheap := llmtest.New(b)
		cheap.Handle(func(llmtest.Request) llmtest.Reply {
			return llmtest.Text("GOAL: read every page.\nDECISIONS: none.\nARTIFACTS: see the pages.\nOPEN: more pages.\nLAST_RESULTS: pages read.\nNEXT: keep reading.")
		})
		h := newHarness(b, func(o *Options) {
			o.ContextWindow = window
			o.StepBudget = 2 * stepsPerTurn
		})
		h.agent.opts.Cheap = newClient(b, cheap)
		var (
			mu    sync.Mutex
			steps = map[string]int{}
			n     int
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
				return llmtest.Text("Read these pages.")
			}
			return llmtest.Calls(call(fmt.Sprintf("c%d", len(steps)*100+steps[user]), "fs__read_file", `{"path":"page"}`))
		})
		h.tools.fn = func(context.Context, string, map[string]any) (string, bool, error) {
			mu.Lock()
			defer mu.Unlock()
			n++
			var noise strings.Builder
			for i := range 12 {
				fmt.Fprintf(&noise, "row %d checksum 0x%x%d%x page-%d%d\n", i, n*104729+i, n, i*31, n, i)
			}
			return fmt.Sprintf("AUDIT PAGE %d\n%s%s\nend of page", n, noise.String(), fact(n)), false, nil
		}
		for i := range turns {
			if err := h.run(b, inbound(fmt.Sprintf("E%d", i+1), fmt.Sprintf("read pages, batch %d", i+1))); err != nil {
				b.Fatalf("turn %d: %v", i+1, err)
			}
		}

		entries, _ := h.tr.Archived(context.Background(), testThread)
		var archived strings.Builder
		for _, e := range entries {
			archived.Write(e.Data)
		}
		hist := NewHistory(h.tr)
		ctx := core.WithTurn(context.Background(), &core.Turn{Inbound: inbound("E999", "what was it?")})
		asked, byHeader, byID := 0, 0, 0
		var cold, worst time.Duration
		search := func(q string) string {
			start := time.Now()
			got, err := hist.Search(ctx, coretest.ToolCall(ctx, "history_search", nil), q)
			if took := time.Since(start); cold == 0 {
				cold = took // the first search indexes the archive
			} else {
				worst = max(worst, took)
			}
			if err != nil {
				b.Fatal(err)
			}
			first, _, _ := strings.Cut(got, "\n\n[")
			return first
		}
		b.StartTimer()
		for page := 3; page <= turns*stepsPerTurn && asked < 100; page += 7 {
			id, header := fmt.Sprintf("LEDGER-%08x", page*7919), fmt.Sprintf("AUDIT PAGE %d\n", page)
			if !strings.Contains(archived.String(), id) {
				continue // still live or in the summary: not what this measures
			}
			asked++
			want := fact(page)
			if first := search(strings.TrimSpace(header)); strings.Contains(first, want) && strings.Contains(first, id) {
				byHeader++
			} else {
				b.Errorf("history_search(%q): the first hit lacks %q:\n%s", strings.TrimSpace(header), want, first)
			}
			if first := search(id); strings.Contains(first, want) && strings.Contains(first, "] "+header) {
				byID++
			} else {
				b.Errorf("history_search(%q): the first hit lacks the header %q or %q:\n%s", id, strings.TrimSpace(header), want, first)
			}
		}
		b.StopTimer()
		if asked < 100 {
			b.Fatalf("only %d facts were archived; the conversation did not compact enough", asked)
		}
		b.ReportMetric(float64(byHeader), "by-header-found-id/100")
		b.ReportMetric(float64(byID), "by-id-found-header/100")
		b.ReportMetric(float64(len(entries)), "archived-msgs")
		b.ReportMetric(float64(cold.Microseconds())/1000, "first-search-ms")
		b.ReportMetric(float64(worst.Microseconds())/1000, "slowest-other-ms")
	}
}
