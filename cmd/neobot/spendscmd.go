package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/neobot/neobot/core"
)

// spendRow is one call of the spend ledger as neobot spends prints it.
type spendRow struct {
	ID        string          `json:"id"`
	Created   time.Time       `json:"created"`
	Thread    string          `json:"thread"`
	Requester string          `json:"requester"`
	Intent    string          `json:"intent"`
	Tool      string          `json:"tool"`
	URI       string          `json:"uri"`
	Args      json.RawMessage `json:"args"`
	Amount    string          `json:"amount,omitempty"`
	Currency  string          `json:"currency,omitempty"`
	State     string          `json:"state"`
	DecidedBy string          `json:"decided_by,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	Result    string          `json:"result,omitempty"`
	Decided   time.Time       `json:"decided,omitzero"`
	Called    time.Time       `json:"called,omitzero"`
	Finished  time.Time       `json:"finished,omitzero"`
}

func rowOf(s core.Spend) spendRow {
	return spendRow{
		ID: s.ID, Created: s.Created, Thread: s.Thread.Key(), Requester: s.Requester, Intent: s.Intent,
		Tool: s.Server + "/" + s.Name, URI: s.Tool, Args: s.Args, Amount: s.Amount, Currency: s.Currency,
		State: string(s.State), DecidedBy: s.DecidedBy, Reason: s.Reason, Result: s.Result,
		Decided: s.Decided, Called: s.Called, Finished: s.Finished,
	}
}

// runSpends is `neobot spends [--since 7d] [--format table|csv|json]`:
// every call the built-in executor planned, who asked, who decided and how
// it ended, the unknown ones included.
func (m *Main) runSpends(ctx context.Context, args []string) error {
	since, format := "7d", "table"
	cfg, _, _, err := m.setup("neobot spends", args, func(fs *flag.FlagSet) {
		fs.StringVar(&since, "since", since, "how far back: 7d, 24h, or a date (2026-11-01); days are UTC")
		fs.StringVar(&format, "format", format, "table, csv or json")
	})
	if err != nil {
		return err
	}
	if format != "table" && format != "csv" && format != "json" {
		return fmt.Errorf("spends: --format %q: use table, csv or json", format)
	}
	day, err := sinceDay(since, time.Now())
	if err != nil {
		return fmt.Errorf("spends: %w", err)
	}
	from, _ := time.Parse(time.DateOnly, day)
	src, err := m.openAdmin(ctx, cfg)
	if err != nil {
		return err
	}
	spends, err := src.Spends(ctx, from)
	if err != nil {
		return err
	}
	rows := make([]spendRow, 0, len(spends))
	for _, s := range spends {
		rows = append(rows, rowOf(s))
	}
	switch format {
	case "json":
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	case "csv":
		w := csv.NewWriter(m.Stdout)
		_ = w.Write([]string{"id", "created", "thread", "requester", "intent", "tool", "args", "amount", "currency", "state", "decided_by", "reason", "result", "finished"})
		for _, r := range rows {
			_ = w.Write([]string{r.ID, stamp(r.Created), r.Thread, r.Requester, r.Intent, r.Tool, string(r.Args), r.Amount, r.Currency,
				r.State, r.DecidedBy, r.Reason, r.Result, stamp(r.Finished)})
		}
		w.Flush()
		return w.Error()
	}
	if len(rows) == 0 {
		fmt.Fprintf(m.Stdout, "no spends since %s\n", day)
		return nil
	}
	tw := tabwriter.NewWriter(m.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CREATED\tID\tREQUESTER\tTOOL\tAMOUNT\tSTATE\tDECIDED BY\tREASON")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", stamp(r.Created), r.ID, r.Requester, r.Tool,
			strings.TrimSpace(r.Amount+" "+r.Currency), r.State, r.DecidedBy, r.Reason)
	}
	return tw.Flush()
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
