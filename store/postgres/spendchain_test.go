package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/store/postgres"
	"github.com/neobot/neobot/store/postgres/pgtest"
)

// verify checks db's chain and records with core.ChainCheck.
func verify(t *testing.T, db *postgres.DB) (uint64, error) {
	t.Helper()
	ctx := context.Background()
	var c core.ChainCheck
	if err := db.SpendEntries(ctx, func(e core.LedgerEntry) error { c.Entry(e); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := db.SpendRecords(ctx, func(id string, rec []byte) error { c.Record(id, rec); return nil }); err != nil {
		t.Fatal(err)
	}
	return c.Done()
}

// TestUpgradeChainsSpends: the calls a database held before migration
// 0007 are chained once when neobot opens it, oldest first; a call
// inserted later without an entry is not chained by the next start but
// named by the check.
func TestUpgradeChainsSpends(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Database(t)
	db := openURL(t, url, postgres.Options{})
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	th := core.Thread{Platform: "slack", Workspace: "T1", Channel: "C1", ID: "1.1"}
	for i, intent := range []string{"xb", "xa"} {
		s := core.Spend{ID: intent + "/1", IntentID: intent, Thread: th, Day: "2026-03-01", State: core.SpendPlanned, Created: at.Add(time.Duration(1-i) * time.Minute)}
		if _, err := db.PlanSpends(ctx, intent, []core.Spend{s}); err != nil {
			t.Fatal(err)
		}
	}
	// Back to the database as it was before the chain: no entries, and
	// the marker migration 0007 leaves.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, sql := range []string{
		`DELETE FROM neo_spend_chain`,
		`UPDATE neo_spends SET chain_seq = NULL, chain_hash = NULL`,
		`INSERT INTO neo_meta (key, value) VALUES ('spend_chain_upgrade', 'pending')`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}

	again := openURL(t, url, postgres.Options{})
	if n, err := verify(t, again); err != nil || n != 2 {
		t.Fatalf("after the upgrade: %d entries, %v; want 2 that verify", n, err)
	}
	got, err := again.SpendsSince(ctx, at.Add(-time.Hour))
	if err != nil || len(got) != 2 || got[0].ID != "xa/1" || got[0].Seq != 1 || got[1].Seq != 2 {
		t.Errorf("spends after the upgrade = %+v, %v; want xa/1 as entry 1, xb/1 as entry 2", got, err)
	}

	// A row slipped in afterwards is not chained by a restart.
	if _, err := conn.Exec(ctx, `INSERT INTO neo_spends (id, intent_id, seq, ws_day, created_ns, body) VALUES ('xz/1', 'xz', 1, 'slack/T1 2026-03-01', 0, '{"id":"xz/1"}')`); err != nil {
		t.Fatal(err)
	}
	third := openURL(t, url, postgres.Options{})
	_, err = verify(t, third)
	var brk *core.ChainBreak
	if !errors.As(err, &brk) || brk.Spend != "xz/1" || !strings.Contains(brk.Problem, "inserted") {
		t.Errorf("check after a row was inserted = %v; want xz/1 named as inserted", err)
	}
}
