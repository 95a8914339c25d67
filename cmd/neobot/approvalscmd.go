package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/neobot/neobot/core"
)

// approvalRow is one approval as neobot spends approvals prints it: who
// was asked, and every decision made on it.
type approvalRow struct {
	// ID is "<intent>/<call>": the spend's ID for a spend.
	ID string `json:"id"`
	// Kind is "spend" for a call of the spend ledger, "tool call" for a
	// write or an undeclared tool asked before it ran.
	Kind      string `json:"kind"`
	Thread    string `json:"thread"`
	Requester string `json:"requester"`
	// Asked is who could decide: user IDs, and role IDs as role:<id>;
	// the requester too when SelfApprove.
	Asked       []string  `json:"asked"`
	SelfApprove bool      `json:"self_approve,omitempty"`
	Created     time.Time `json:"created"`
	Expires     time.Time `json:"expires"`
	// State is the approval's: pending, approved, denied or expired.
	State     string             `json:"state"`
	Decisions []approvalDecision `json:"decisions"`
	// SpendState and Receipt are the spend's, when it is one.
	SpendState string `json:"spend_state,omitempty"`
	Receipt    string `json:"receipt,omitempty"`
}

// approvalDecision is one person's answer to an approval.
type approvalDecision struct {
	By       string    `json:"by"`
	At       time.Time `json:"at"`
	Answer   string    `json:"answer"`
	Approves bool      `json:"approves"`
	// Surface is the platform the approval was posted on, and so the
	// one its answer came from: slack, discord, web or terminal.
	Surface string `json:"surface"`
}

// decisionsOf lists the decisions made on g: today at most one, the one
// that closed it.
func decisionsOf(g core.Gate) []approvalDecision {
	if g.DecidedBy == "" || g.State == core.GatePending || g.State == core.GateExpired {
		return []approvalDecision{}
	}
	return []approvalDecision{{By: g.DecidedBy, At: g.DecidedAt, Answer: g.Answer, Approves: g.State == core.GateApproved, Surface: g.Thread.Platform}}
}

// approvalsOf turns gates into rows, the spend ledger's calls (by ID)
// telling spends apart. A question a tool's server asks (a form) is not
// an approval and is left out.
func approvalsOf(gates []core.Gate, spends map[string]core.Spend) []approvalRow {
	rows := make([]approvalRow, 0, len(gates))
	for _, g := range gates {
		if g.Form != nil {
			continue
		}
		r := approvalRow{ID: g.IntentID + "/" + g.NodeID, Kind: "tool call", Thread: g.Thread.Key(), Requester: g.Requester,
			Asked: g.Allowed, SelfApprove: g.SelfApprove, Created: g.Created, Expires: g.Expires, State: string(g.State), Decisions: decisionsOf(g)}
		if r.Asked == nil {
			r.Asked = []string{}
		}
		if s, ok := spends[r.ID]; ok {
			r.Kind, r.SpendState, r.Receipt = "spend", string(s.State), s.Receipt()
		}
		rows = append(rows, r)
	}
	return rows
}

// approvalLookback is how much earlier than its approval a spend may have
// been planned and still be found as the approval's spend.
const approvalLookback = 7 * 24 * time.Hour

func (l local) Approvals(ctx context.Context, since time.Time) ([]approvalRow, error) {
	gates, err := l.db.GatesSince(ctx, since)
	if err != nil {
		return nil, err
	}
	spends, err := l.db.SpendsSince(ctx, since.Add(-approvalLookback))
	if err != nil {
		return nil, err
	}
	byID := make(map[string]core.Spend, len(spends))
	for _, s := range spends {
		byID[s.ID] = s
	}
	return approvalsOf(gates, byID), nil
}

func (r remote) Approvals(ctx context.Context, since time.Time) ([]approvalRow, error) {
	var out []approvalRow
	return out, r.call(ctx, http.MethodGet, "/spends/approvals", url.Values{"since": {since.UTC().Format(time.RFC3339)}}, nil, &out)
}

// registerApprovals adds the approvals export's route to mux.
func (a adminAPI) registerApprovals(mux *http.ServeMux) {
	mux.HandleFunc("GET /admin/v1/spends/approvals", a.serve(func(r *http.Request) (any, error) {
		since, err := time.Parse(time.RFC3339, r.URL.Query().Get("since"))
		if err != nil {
			return nil, badRequest{errors.New("since: want an RFC 3339 time, such as 2026-11-01T00:00:00Z")}
		}
		return a.src.Approvals(r.Context(), since)
	}))
}

// runSpendsApprovals is `neobot spends approvals [--since 7d] [--format
// table|csv|json]`: every approval asked since a day, who could decide,
// and who decided what, when and where.
func (m *Main) runSpendsApprovals(ctx context.Context, args []string) error {
	src, from, format, err := m.openExport(ctx, "spends approvals", args, "table", "csv", "json")
	if err != nil {
		return err
	}
	rows, err := src.Approvals(ctx, from)
	if err != nil {
		return fmt.Errorf("spends approvals: %w", err)
	}
	switch format {
	case "json":
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	case "csv":
		// One line per decision, the approval's columns repeated; an
		// approval nobody decided has one line with the decision empty.
		w := csv.NewWriter(m.Stdout)
		_ = w.Write([]string{"id", "kind", "thread", "requester", "asked", "created", "expires", "state", "decided_by", "decided_at", "answer", "surface", "spend_state", "receipt"})
		for _, r := range rows {
			ds := r.Decisions
			if len(ds) == 0 {
				ds = []approvalDecision{{}}
			}
			for _, d := range ds {
				_ = w.Write([]string{r.ID, r.Kind, r.Thread, r.Requester, strings.Join(r.Asked, " "), stamp(r.Created), stamp(r.Expires), r.State,
					d.By, stamp(d.At), d.Answer, d.Surface, r.SpendState, r.Receipt})
			}
		}
		w.Flush()
		return w.Error()
	}
	if len(rows) == 0 {
		fmt.Fprintf(m.Stdout, "no approvals since %s\n", from.Format(time.DateOnly))
		return nil
	}
	tw := tabwriter.NewWriter(m.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CREATED\tID\tKIND\tREQUESTER\tASKED\tSTATE\tDECIDED BY\tAT\tON\tRECEIPT")
	for _, r := range rows {
		var by, at, on []string
		for _, d := range r.Decisions {
			by, at, on = append(by, d.By), append(at, stamp(d.At)), append(on, d.Surface)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", stamp(r.Created), r.ID, r.Kind, r.Requester, strings.Join(r.Asked, ","), r.State,
			strings.Join(by, ","), strings.Join(at, ","), strings.Join(on, ","), r.Receipt)
	}
	return tw.Flush()
}
