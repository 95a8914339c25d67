package main

import (
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"slices"
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
	// Task is the task the call became at its server, if any.
	Task     string    `json:"task,omitempty"`
	Decided  time.Time `json:"decided,omitzero"`
	Called   time.Time `json:"called,omitzero"`
	Finished time.Time `json:"finished,omitzero"`
	// Receipt, Seq and Hash name the call's last chain entry; Entries
	// (JSON only) are all of its entries, records included, so an
	// auditor can recompute every hash.
	Receipt string             `json:"receipt,omitempty"`
	Seq     uint64             `json:"seq,omitempty"`
	Hash    string             `json:"hash,omitempty"`
	Entries []core.LedgerEntry `json:"entries,omitempty"`
}

func rowOf(s core.Spend) spendRow {
	return spendRow{
		ID: s.ID, Created: s.Created, Thread: s.Thread.Key(), Requester: s.Requester, Intent: s.Intent,
		Tool: s.Server + "/" + s.Name, URI: s.Tool, Args: s.Args, Amount: s.Amount, Currency: s.Currency,
		State: string(s.State), DecidedBy: s.DecidedBy, Reason: s.Reason, Result: s.Result, Task: s.Task,
		Decided: s.Decided, Called: s.Called, Finished: s.Finished,
		Receipt: s.Receipt(), Seq: s.Seq, Hash: s.Hash,
	}
}

// openExport is the set-up every export command shares (`neobot spends`,
// `spends approvals`, `feedback`): --since and --format read, format
// checked against formats (the first is the default), the start day, and
// the admin source it reads from (the running bot, or the store).
func (m *Main) openExport(ctx context.Context, name string, args []string, formats ...string) (src admin, from time.Time, format string, err error) {
	since, format := "7d", formats[0]
	cfg, _, _, err := m.setup("neobot "+name, args, func(fs *flag.FlagSet) {
		fs.StringVar(&since, "since", since, "how far back: 7d, 24h, or a date (2026-11-01); days are UTC")
		fs.StringVar(&format, "format", format, strings.Join(formats, ", "))
	})
	if err != nil {
		return nil, time.Time{}, "", err
	}
	if !slices.Contains(formats, format) {
		return nil, time.Time{}, "", fmt.Errorf("%s: --format %q: use %s", name, format, strings.Join(formats, ", "))
	}
	day, err := sinceDay(since, time.Now())
	if err != nil {
		return nil, time.Time{}, "", fmt.Errorf("%s: %w", name, err)
	}
	from, _ = time.Parse(time.DateOnly, day)
	if src, err = m.openAdmin(ctx, cfg); err != nil {
		return nil, time.Time{}, "", err
	}
	return src, from, format, nil
}

// runSpends is `neobot spends [--since 7d] [--format table|csv|json]`:
// every call the built-in executor planned, who asked, who decided and how
// it ended, the unknown ones included; JSON carries each call's chain
// entries. `neobot spends verify` checks the chain.
func (m *Main) runSpends(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "verify" {
		return m.runSpendsVerify(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "approvals" {
		return m.runSpendsApprovals(ctx, args[1:])
	}
	src, from, format, err := m.openExport(ctx, "spends", args, "table", "csv", "json")
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
		chain, err := src.SpendChain(ctx)
		if err != nil {
			return err
		}
		byCall := map[string][]core.LedgerEntry{}
		for _, e := range chain {
			byCall[e.Spend] = append(byCall[e.Spend], e)
		}
		for i := range rows {
			rows[i].Entries = byCall[rows[i].ID]
		}
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	case "csv":
		w := csv.NewWriter(m.Stdout)
		_ = w.Write([]string{"id", "created", "thread", "requester", "intent", "tool", "args", "amount", "currency", "state", "decided_by", "reason", "result", "finished", "receipt", "hash"})
		for _, r := range rows {
			_ = w.Write([]string{r.ID, stamp(r.Created), r.Thread, r.Requester, r.Intent, r.Tool, string(r.Args), r.Amount, r.Currency,
				r.State, r.DecidedBy, r.Reason, r.Result, stamp(r.Finished), r.Receipt, r.Hash})
		}
		w.Flush()
		return w.Error()
	}
	if len(rows) == 0 {
		fmt.Fprintf(m.Stdout, "no spends since %s\n", from.Format(time.DateOnly))
		return nil
	}
	tw := tabwriter.NewWriter(m.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CREATED\tID\tREQUESTER\tTOOL\tAMOUNT\tSTATE\tDECIDED BY\tRECEIPT\tREASON")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", stamp(r.Created), r.ID, r.Requester, r.Tool,
			strings.TrimSpace(r.Amount+" "+r.Currency), r.State, r.DecidedBy, r.Receipt, r.Reason)
	}
	return tw.Flush()
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// chainReport is what `neobot spends verify` found.
type chainReport struct {
	// Entries is how many entries were checked before the chain ended or
	// broke; Calls how many calls' current records were checked.
	Entries uint64 `json:"entries"`
	Calls   int    `json:"calls"`
	// Head is the last entry's hash: kept somewhere else, it shows later
	// whether the chain up to it was rewritten.
	Head string `json:"head,omitempty"`
	// Break is the first change found; nil when the chain verifies.
	Break *core.ChainBreak `json:"break,omitempty"`
}

// verifyChain walks src's chain and its calls' current records.
func verifyChain(ctx context.Context, src core.SpendChain) (chainReport, error) {
	var (
		check core.ChainCheck
		r     chainReport
	)
	err := src.SpendEntries(ctx, func(e core.LedgerEntry) error {
		check.Entry(e)
		r.Head = e.Hash
		return nil
	})
	if err != nil {
		return r, err
	}
	err = src.SpendRecords(ctx, func(id string, record []byte) error {
		check.Record(id, record)
		r.Calls++
		return nil
	})
	if err != nil {
		return r, err
	}
	n, err := check.Done()
	r.Entries = n
	if !errors.As(err, &r.Break) && err != nil {
		return r, err
	}
	if r.Break != nil {
		r.Head = ""
	}
	return r, nil
}

// runSpendsVerify is `neobot spends verify [--format text|json]`: it walks
// the spend ledger's chain and names the first entry that was edited,
// removed or inserted, failing (exit 1) when there is one.
func (m *Main) runSpendsVerify(ctx context.Context, args []string) error {
	format, receipt := "text", ""
	cfg, _, _, err := m.setup("neobot spends verify", args, func(fs *flag.FlagSet) {
		fs.StringVar(&format, "format", format, "text or json")
		fs.StringVar(&receipt, "receipt", receipt, "also check that the chain holds the entry of this receipt (8 or more hex digits from a thread's outcome, or a hash)")
	})
	if err != nil {
		return err
	}
	if format != "text" && format != "json" {
		return fmt.Errorf("spends verify: --format %q: use text or json", format)
	}
	receipt = strings.ToLower(strings.TrimSpace(receipt))
	if receipt != "" && (len(receipt) < core.ReceiptLen || strings.Trim(receipt, "0123456789abcdef") != "") {
		return fmt.Errorf("spends verify: --receipt %q: give at least %d hex digits, as the outcome line shows them", receipt, core.ReceiptLen)
	}
	src, err := m.openAdmin(ctx, cfg)
	if err != nil {
		return err
	}
	r, err := src.VerifySpends(ctx)
	if err != nil {
		return fmt.Errorf("spends verify: %w", err)
	}
	if receipt != "" && r.Break == nil {
		if err := m.findReceipt(ctx, src, receipt); err != nil {
			return err
		}
	}
	if format == "json" {
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			return err
		}
	} else if r.Break == nil {
		calls := "calls"
		if r.Calls == 1 {
			calls = "call"
		}
		fmt.Fprintf(m.Stdout, "the spend ledger verifies: %d entries of %d %s; last entry's hash %s\n", r.Entries, r.Calls, calls, cmp.Or(r.Head, "(none: the ledger is empty)"))
	}
	if r.Break != nil {
		return fmt.Errorf("spends verify: the spend ledger was changed after it was written: %w (%s)", r.Break, verifiedBefore(r.Entries))
	}
	return nil
}

// findReceipt says which entry holds receipt, or fails: a receipt from a
// thread that the chain no longer holds means the chain was rewritten
// after it was given.
func (m *Main) findReceipt(ctx context.Context, src admin, receipt string) error {
	chain, err := src.SpendChain(ctx)
	if err != nil {
		return fmt.Errorf("spends verify: %w", err)
	}
	for _, e := range chain {
		if strings.HasPrefix(e.Hash, receipt) {
			fmt.Fprintf(m.Stdout, "receipt %s is entry %d: spend %s, %s\n", receipt, e.Seq, e.Spend, e.State)
			return nil
		}
	}
	return fmt.Errorf("spends verify: no entry of the chain has receipt %s: the ledger was rewritten after that receipt was given, or the receipt is from another ledger", receipt)
}

// verifiedBefore says how much of the chain verified before a break.
func verifiedBefore(n uint64) string {
	switch n {
	case 0:
		return "no entry before it verifies"
	case 1:
		return "entry 1 before it verifies"
	}
	return fmt.Sprintf("entries 1 to %d before it verify", n)
}

func (l local) SpendChain(ctx context.Context) ([]core.LedgerEntry, error) {
	var out []core.LedgerEntry
	err := l.db.SpendEntries(ctx, func(e core.LedgerEntry) error {
		out = append(out, e)
		return nil
	})
	return out, err
}

func (l local) VerifySpends(ctx context.Context) (chainReport, error) {
	return verifyChain(ctx, l.db)
}

func (r remote) SpendChain(ctx context.Context) ([]core.LedgerEntry, error) {
	var out []core.LedgerEntry
	return out, r.call(ctx, http.MethodGet, "/spends/chain", nil, nil, &out)
}

func (r remote) VerifySpends(ctx context.Context) (chainReport, error) {
	var out chainReport
	return out, r.call(ctx, http.MethodGet, "/spends/verify", nil, nil, &out)
}

// registerSpends adds the spend ledger's chain routes to mux.
func (a adminAPI) registerSpends(mux *http.ServeMux) {
	mux.HandleFunc("GET /admin/v1/spends/chain", a.serve(func(r *http.Request) (any, error) {
		return a.src.SpendChain(r.Context())
	}))
	mux.HandleFunc("GET /admin/v1/spends/verify", a.serve(func(r *http.Request) (any, error) {
		return a.src.VerifySpends(r.Context())
	}))
}
