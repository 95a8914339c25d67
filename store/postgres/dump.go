package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/store"
)

var _ store.Sink = (*DB)(nil)

// PutThread writes one whole conversation from a dump: its row, its live
// and archived entries, with their numbers and times.
func (db *DB) PutThread(ctx context.Context, t store.ThreadDump) error {
	return db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO neo_threads (key, active_ns, last_seq, summary, title) VALUES ($1, $2, $3, $4, $5)`,
			t.Key, ns(t.Active), int64(t.LastSeq), t.Summary, nullText(t.Title)); err != nil {
			return err
		}
		rows := make([][]any, 0, len(t.Entries)+len(t.Archived))
		for _, e := range t.Archived {
			rows = append(rows, []any{t.Key, int64(e.Seq), ns(e.At), true, e.Data})
		}
		for _, e := range t.Entries {
			rows = append(rows, []any{t.Key, int64(e.Seq), ns(e.At), false, e.Data})
		}
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"neo_entries"}, []string{"thread", "seq", "at_ns", "archived", "data"}, pgx.CopyFromRows(rows))
		return err
	})
}

// nullText is s, or NULL for "".
func nullText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// PutInbound writes one journaled message from a dump; pending ones take
// their place in the journal's order as they arrive.
func (db *DB) PutInbound(ctx context.Context, in store.InboundDump) error {
	body, err := json.Marshal(in.Inbound)
	if err != nil {
		return err
	}
	var completed *int64
	pending := "nextval('neo_inbound_seq')"
	if !in.Completed.IsZero() {
		c := ns(in.Completed)
		completed, pending = &c, "NULL"
	}
	return db.write(ctx, func(ctx context.Context) error {
		_, err := db.pool.Exec(ctx, `
			INSERT INTO neo_inbound (platform, event_id, thread, body, journaled_ns, pending, completed_ns)
			VALUES ($1, $2, $3, $4, $5, `+pending+`, $6)`,
			in.Inbound.Thread.Platform, in.Inbound.EventID, in.Inbound.Thread.Key(), body, ns(in.Journaled), completed)
		return err
	})
}

// PutGate writes one gate from a dump. Its binding's pointer comes
// separately, with PutGateNode.
func (db *DB) PutGate(ctx context.Context, g core.Gate) error {
	raw, err := json.Marshal(g)
	if err != nil {
		return err
	}
	return db.write(ctx, func(ctx context.Context) error {
		_, err := db.pool.Exec(ctx, `INSERT INTO neo_gates (token, body, state, expires_ns, node_key) VALUES ($1, $2, $3, $4, $5)`,
			g.Token, raw, string(g.State), ns(g.Expires), gateNodeKey(g))
		return err
	})
}

// PutGateNode writes one binding's pointer to its latest gate. The keys
// of gates from before bindings existed held a NUL, which PostgreSQL text
// cannot: it becomes the \x01 gateNodeKey uses.
func (db *DB) PutGateNode(ctx context.Context, n store.GateNode) error {
	return db.write(ctx, func(ctx context.Context) error {
		_, err := db.pool.Exec(ctx, `INSERT INTO neo_gate_nodes (binding, token) VALUES ($1, $2)`, strings.ReplaceAll(n.Key, "\x00", "\x01"), n.Token)
		return err
	})
}

// PutDelegation writes one delegation from a dump, finished or not.
func (db *DB) PutDelegation(ctx context.Context, d store.DelegationDump) error {
	raw, err := json.Marshal(d.Delegation)
	if err != nil {
		return err
	}
	var finished *int64
	if !d.Finished.IsZero() {
		f := ns(d.Finished)
		finished = &f
	}
	return db.write(ctx, func(ctx context.Context) error {
		_, err := db.pool.Exec(ctx, `INSERT INTO neo_delegations (thread, call_id, body, started_ns, finished_ns) VALUES ($1, $2, $3, $4, $5)`,
			d.Delegation.Thread.Key(), d.Delegation.CallID, raw, ns(d.Delegation.Started), finished)
		return err
	})
}

// Count returns how many records of each kind the database holds.
func (db *DB) Count(ctx context.Context) (store.Counts, error) {
	var n store.Counts
	err := db.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM neo_threads),
		(SELECT count(*) FROM neo_entries),
		(SELECT count(*) FROM neo_inbound),
		(SELECT count(*) FROM neo_inbound WHERE pending IS NOT NULL),
		(SELECT count(*) FROM neo_gates),
		(SELECT count(*) FROM neo_gate_nodes),
		(SELECT count(*) FROM neo_delegations),
		(SELECT count(*) FROM neo_memories),
		(SELECT count(*) FROM neo_usage),
		(SELECT count(*) FROM neo_ratings),
		(SELECT count(*) FROM neo_model_postures),
		(SELECT count(*) FROM neo_mcp_tokens),
		(SELECT count(*) FROM neo_files),
		(SELECT count(*) FROM neo_slack_installs)`).Scan(
		&n.Threads, &n.Entries, &n.Inbound, &n.Pending, &n.Gates, &n.GateNodes, &n.Delegations, &n.Memories, &n.Usage,
		&n.Ratings, &n.Postures, &n.MCPTokens, &n.Files, &n.SlackInstalls)
	if err != nil {
		return store.Counts{}, fmt.Errorf("postgres: count %s: %w", db.name, err)
	}
	return n, nil
}
