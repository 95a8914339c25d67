package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/neobot/neobot/core/memory"
)

// memoryGroup orders records as the bbolt store keeps them: general
// memories, then user profiles and preferences, then procedures.
func memoryGroup(k memory.Kind) int16 {
	switch k {
	case memory.KindProfile, memory.KindPreference:
		return 1
	case memory.KindProcedure:
		return 2
	}
	return 0
}

// WriteMemories stores put and deletes del in one transaction.
func (db *DB) WriteMemories(ctx context.Context, put []memory.Record, del []string) error {
	raws := make([][]byte, len(put))
	for i, r := range put {
		if r.ID == "" {
			return fmt.Errorf("postgres: write memory: empty ID")
		}
		raw, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("postgres: write memory %s: %w", r.ID, err)
		}
		raws[i] = raw
	}
	err := db.tx(ctx, func(tx pgx.Tx) error {
		if len(del) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM neo_memories WHERE id = ANY($1)`, del); err != nil {
				return err
			}
		}
		var b pgx.Batch
		for i, r := range put {
			b.Queue(`INSERT INTO neo_memories (id, grp, body) VALUES ($1, $2, $3)
				ON CONFLICT (id) DO UPDATE SET grp = EXCLUDED.grp, body = EXCLUDED.body`, r.ID, memoryGroup(r.Kind), raws[i])
		}
		if err := tx.SendBatch(ctx, &b).Close(); err != nil {
			return err
		}
		ids := append([]string(nil), del...)
		for _, r := range put {
			ids = append(ids, r.ID)
		}
		return db.notifyMemory(ctx, tx, ids)
	})
	if err != nil {
		return fmt.Errorf("postgres: write memories: %w", err)
	}
	return nil
}

// LoadMemories returns the records with ids that exist, for an instance
// told that another one changed them.
func (db *DB) LoadMemories(ctx context.Context, ids []string) ([]memory.Record, error) {
	rows, err := db.pool.Query(ctx, `SELECT body FROM neo_memories WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("postgres: load memories: %w", err)
	}
	raws, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, fmt.Errorf("postgres: load memories: %w", err)
	}
	out := make([]memory.Record, len(raws))
	for i, raw := range raws {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			return nil, fmt.Errorf("postgres: decode memory: %w", err)
		}
	}
	return out, nil
}

// ScanMemories calls fn with every memory record. fn runs while the rows
// are read: it must not use the store.
func (db *DB) ScanMemories(ctx context.Context, fn func(memory.Record) error) error {
	rows, err := db.pool.Query(ctx, `SELECT id, body FROM neo_memories ORDER BY grp, id`)
	if err != nil {
		return fmt.Errorf("postgres: scan memories: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id  string
			raw []byte
			r   memory.Record
		)
		if err := rows.Scan(&id, &raw); err != nil {
			return fmt.Errorf("postgres: scan memories: %w", err)
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return fmt.Errorf("postgres: decode memory %s: %w", id, err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres: scan memories: %w", err)
	}
	return nil
}
