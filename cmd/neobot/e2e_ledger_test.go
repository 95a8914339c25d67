package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	bolt "go.etcd.io/bbolt"

	"github.com/neobot/neobot/adapters/slack/slacktest"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/store/postgres/pgtest"
)

// TestSpendLedgerVerify: after one approved transfer, the ledger's chain
// verifies and exports with its hashes, and the outcome the thread got
// carries the call's receipt. Then one byte of one stored entry is
// changed behind neobot's back — in the bbolt file, or with an UPDATE in
// PostgreSQL — and neobot spends verify names that entry and fails.
func TestSpendLedgerVerify(t *testing.T) {
	for _, backend := range []string{"bbolt", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			w, wal := newSpendWorld(t)
			if backend == "postgres" {
				w.env["NEO_DATABASE_URL"] = pgtest.Database(t)
				delete(w.env, "NEO_DB_PATH")
			}
			// While the bot runs, the bbolt file is its own: the command
			// goes through its admin API.
			w.env["NEO_HEALTH_ADDR"], w.env["NEO_ADMIN_TOKEN"] = freeAddr(t), "e2e-admin-token-0123456789abcdef0123456789"
			scriptModel(t, w.model, sendScript("Sent 5 USDC to alice.")...)
			p := w.start(t, 1)
			mention := w.slack.Mention(slacktest.Msg{User: "UALICE", Text: "send 5 USDC to alice"})
			gate := w.waitGate(t, p, mention.TS, "wallet/transfer")
			w.slack.Click("UCAROL", gate, 0)
			w.answerIn(t, "C0GENERAL", mention.TS, "Sent 5 USDC to alice.")
			if n := total(wal.transfers(t)); n != 1 {
				t.Fatalf("transfers = %d, want 1", n)
			}
			calls := mainRequests(w.model)
			last := calls[len(calls)-1].Messages
			told := last[len(last)-1].Content
			out, stderr, err := run(t, w.env, "", "spends", "verify")
			if err != nil || !strings.Contains(out, "the spend ledger verifies: 4 entries of 1 call") {
				t.Fatalf("neobot spends verify while the bot runs = %v\n%s%s", err, out, stderr)
			}
			p.stop(t)

			out, stderr, err = run(t, w.env, "", "spends", "verify")
			if err != nil || !strings.Contains(out, "the spend ledger verifies: 4 entries of 1 call") {
				t.Fatalf("neobot spends verify on an untouched ledger = %v\n%s%s", err, out, stderr)
			}
			out, stderr, err = run(t, w.env, "", "spends", "--format", "json")
			if err != nil {
				t.Fatalf("neobot spends --format json: %v\n%s", err, stderr)
			}
			var rows []struct {
				ID      string             `json:"id"`
				Receipt string             `json:"receipt"`
				Hash    string             `json:"hash"`
				Entries []core.LedgerEntry `json:"entries"`
			}
			if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
				t.Fatalf("neobot spends --format json = %s (%v), want one call", out, err)
			}
			r := rows[0]
			var states []string
			for _, e := range r.Entries {
				states = append(states, string(e.State))
				if e.Sum() != e.Hash {
					t.Errorf("exported entry %d: its hash does not match its content, as exported", e.Seq)
				}
			}
			if fmt.Sprint(states) != "[planned asked calling completed]" || r.Entries[3].Hash != r.Hash || r.Receipt != r.Hash[:8] {
				t.Errorf("exported chain = %v, last hash %q, receipt %q; want the call's four entries, the receipt its last hash's start", states, r.Hash, r.Receipt)
			}
			if !strings.Contains(told, "completed, receipt "+r.Receipt) {
				t.Errorf("the outcome the thread got = %q, want its receipt %s", told, r.Receipt)
			}
			if out, stderr, err := run(t, w.env, "", "spends", "verify", "--receipt", r.Receipt); err != nil || !strings.Contains(out, "is entry 4: spend "+r.ID+", completed") {
				t.Errorf("neobot spends verify --receipt %s = %v\n%s%s; want entry 4", r.Receipt, err, out, stderr)
			}
			if _, stderr, err := run(t, w.env, "", "spends", "verify", "--receipt", "00000000"); err == nil || !strings.Contains(stderr, "no entry of the chain has receipt 00000000") {
				t.Errorf("neobot spends verify with a receipt the chain lacks = %v, %s; want it to fail", err, stderr)
			}

			// The approvals export: who was asked, who decided, when, where.
			out, stderr, err = run(t, w.env, "", "spends", "approvals", "--format", "json")
			var approvals []approvalRow
			if err != nil || json.Unmarshal([]byte(out), &approvals) != nil || len(approvals) != 1 {
				t.Fatalf("neobot spends approvals --format json = %v\n%s%s; want one approval", err, out, stderr)
			}
			a := approvals[0]
			if a.ID != r.ID || a.Kind != "spend" || a.Requester != "UALICE" || fmt.Sprint(a.Asked) != "[UCAROL]" || a.State != "approved" ||
				len(a.Decisions) != 1 || a.Decisions[0].By != "UCAROL" || !a.Decisions[0].Approves || a.Decisions[0].Surface != "slack" ||
				a.Decisions[0].At.IsZero() || a.Receipt != r.Receipt {
				t.Errorf("approval = %+v; want %s asked of UCAROL by UALICE, approved by UCAROL on slack, receipt %s", a, r.ID, r.Receipt)
			}
			out, _, err = run(t, w.env, "", "spends", "approvals", "--format", "csv")
			if lines := strings.Split(strings.TrimSpace(out), "\n"); err != nil || len(lines) != 2 || !strings.Contains(lines[1], ",UCAROL,") {
				t.Errorf("neobot spends approvals --format csv = %v\n%s; want a header and Carol's decision", err, out)
			}

			// One byte of entry 2 ("asked"): alice becomes alicf.
			if backend == "bbolt" {
				editBolt(t, w.env["NEO_DB_PATH"], 2)
			} else {
				editPostgres(t, w.env["NEO_DATABASE_URL"], 2)
			}
			out, stderr, err = run(t, w.env, "", "spends", "verify")
			if err == nil {
				t.Fatalf("neobot spends verify on an edited ledger succeeded:\n%s", out)
			}
			want := "entry 2 (spend " + r.ID + "): edited"
			if !strings.Contains(stderr, want) {
				t.Errorf("neobot spends verify said %q, want it to name %q", stderr, want)
			}
		})
	}
}

// aliceByte changes "alice" to "alicf" in raw, once.
func aliceByte(t *testing.T, raw []byte) []byte {
	t.Helper()
	i := bytes.Index(raw, []byte("alice"))
	if i < 0 {
		t.Fatalf("no alice in the entry: %s", raw)
	}
	out := bytes.Clone(raw)
	out[i+4] = 'f'
	return out
}

// editBolt changes one byte of chain entry seq in the bbolt file.
func editBolt(t *testing.T, path string, seq uint64) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("spend_chain"))
		key := []byte{0, 0, 0, 0, 0, 0, 0, byte(seq)}
		v := b.Get(key)
		if v == nil {
			return fmt.Errorf("no entry %d in spend_chain", seq)
		}
		return b.Put(key, aliceByte(t, v))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// editPostgres changes one byte of chain entry seq's record in
// PostgreSQL.
func editPostgres(t *testing.T, url string, seq int64) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var rec []byte
	if err := conn.QueryRow(ctx, `SELECT record FROM neo_spend_chain WHERE seq = $1`, seq).Scan(&rec); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `UPDATE neo_spend_chain SET record = $2 WHERE seq = $1`, seq, aliceByte(t, rec)); err != nil {
		t.Fatal(err)
	}
}
