package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/neobot/neobot/store"
)

// Sweep drops what the retention settings no longer keep, as of now, in
// one transaction: the same rules as the bbolt store's Sweep. Instances
// sweeping at once are harmless: each deletes what is left.
func (db *DB) Sweep(ctx context.Context, now time.Time) (store.SweepStats, error) {
	var st store.SweepStats
	err := db.tx(ctx, func(tx pgx.Tx) error {
		st = store.SweepStats{}
		if cut, ok := before(now, db.ret.ThreadIdle); ok {
			rows, err := tx.Query(ctx, `DELETE FROM neo_threads WHERE active_ns <= $1 RETURNING key`, cut)
			if err != nil {
				return err
			}
			keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			st.Threads = len(keys)
			// After the threads' rows, as DeleteThread does.
			if _, err := tx.Exec(ctx, `DELETE FROM neo_entries WHERE thread = ANY($1)`, keys); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM neo_delegations WHERE thread = ANY($1) AND finished_ns IS NOT NULL`, keys); err != nil {
				return err
			}
			// Ratings hold the thread's question and answer: they go with it.
			tag, err := tx.Exec(ctx, `DELETE FROM neo_ratings WHERE thread = ANY($1)`, keys)
			if err != nil {
				return err
			}
			st.Ratings = int(tag.RowsAffected())
		}
		if cut, ok := before(now, db.ret.Dedupe); ok {
			tag, err := tx.Exec(ctx, `DELETE FROM neo_inbound WHERE completed_ns IS NOT NULL AND journaled_ns <= $1`, cut)
			if err != nil {
				return err
			}
			st.EventIDs = int(tag.RowsAffected())
		}
		if cut, ok := before(now, db.ret.Decided); ok {
			err := tx.QueryRow(ctx, `
				WITH g AS (DELETE FROM neo_gates WHERE expires_ns <= $1 RETURNING token, node_key),
				n AS (DELETE FROM neo_gate_nodes n USING g WHERE n.binding = g.node_key AND n.token = g.token)
				SELECT count(*) FROM g`, cut).Scan(&st.Gates)
			if err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, `DELETE FROM neo_delegations WHERE finished_ns IS NOT NULL AND finished_ns <= $1`, cut)
			if err != nil {
				return err
			}
			st.Delegations = int(tag.RowsAffected())
			if tag, err = tx.Exec(ctx, `DELETE FROM neo_calls WHERE ended_ns IS NOT NULL AND ended_ns <= $1`, cut); err != nil {
				return err
			}
			st.Calls = int(tag.RowsAffected())
		}
		// A share holding nothing (its allowance back in full, no bytes
		// today) reads the same as no row.
		day := now.UTC().Truncate(24 * time.Hour)
		if _, err := tx.Exec(ctx, `DELETE FROM neo_shares WHERE tat_ns <= $1 AND day_ns < $2`, now.UnixNano(), day.UnixNano()); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, sweepFilesSQL, now.UnixNano(), int64(store.UploadTTL), int64(store.FileGrace))
		st.Files = int(tag.RowsAffected())
		return err
	})
	if err != nil {
		return store.SweepStats{}, fmt.Errorf("postgres: sweep: %w", err)
	}
	if st != (store.SweepStats{}) {
		db.log.Info().Int("threads", st.Threads).Int("event_ids", st.EventIDs).
			Int("gates", st.Gates).Int("delegations", st.Delegations).Msg("postgres: swept")
	}
	return st, nil
}
