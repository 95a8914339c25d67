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

// WriteMemories stores put and deletes del, and tells the other
// instances, in one statement committed with the writes batched
// meanwhile (see group). Write-backs queued by WriteMemoriesLater commit
// first, so the later write wins.
func (db *DB) WriteMemories(ctx context.Context, put []memory.Record, del []string) error {
	var w memoryWrite
	if err := w.add(put, del); err != nil {
		return err
	}
	if err := db.memories.flush(ctx); err != nil {
		return fmt.Errorf("postgres: write memories: %w", err)
	}
	if err := db.writeMemories(ctx, &w); err != nil {
		return fmt.Errorf("postgres: write memories: %w", err)
	}
	return nil
}

// WriteMemoriesLater is WriteMemories without waiting (memory.LaterStore):
// a turn's write-back. The write-backs queued while one commits are
// merged (in order: the last write of a record wins) and commit together
// next, one statement in a batch of other writes. A crash before the
// commit loses them, as with the bbolt store; a failing commit is logged.
func (db *DB) WriteMemoriesLater(put []memory.Record, del []string) error {
	var w memoryWrite
	if err := w.add(put, del); err != nil {
		return err
	}
	db.memories.queue(func(into *memoryWrite) { into.merge(&w) })
	return nil
}

// writeMemories runs w as one statement, with the notification to the
// other instances; it commits with the batch it joins.
func (db *DB) writeMemories(ctx context.Context, w *memoryWrite) error {
	if len(w.ids) == 0 {
		return nil
	}
	var (
		del  []string
		ids  []string
		grps []int16
		raws [][]byte
	)
	for _, id := range w.ids {
		r := w.last[id]
		if r == nil {
			del = append(del, id)
			continue
		}
		ids, grps, raws = append(ids, id), append(grps, r.grp), append(raws, r.raw)
	}
	return db.batched(ctx, "memory", func(b *pgx.Batch) {
		b.Queue(`
			WITH d AS (
				DELETE FROM neo_memories WHERE id = ANY($1::text[])
			), p AS (
				INSERT INTO neo_memories (id, grp, body) SELECT * FROM unnest($2::text[], $3::int2[], $4::bytea[])
				ON CONFLICT (id) DO UPDATE SET grp = EXCLUDED.grp, body = EXCLUDED.body
			)
			SELECT pg_notify($5, $6)`, del, ids, grps, raws, ChannelMemory, db.memoryNote(w.ids))
	})
}

// memoryWrite is the net effect of memory writes applied in order: each
// ID's last record, or its deletion. An ID appears once, so the one
// statement that writes them touches each row once.
type memoryWrite struct {
	ids  []string                 // every ID written or deleted, in first-seen order
	last map[string]*memoryRecord // by ID: its last record; nil when deleted
}

// memoryRecord is a record as stored: its group and JSON body.
type memoryRecord struct {
	grp int16
	raw []byte
}

// set makes r (nil: deleted) the last write of id.
func (w *memoryWrite) set(id string, r *memoryRecord) {
	if w.last == nil {
		w.last = map[string]*memoryRecord{}
	}
	if _, ok := w.last[id]; !ok {
		w.ids = append(w.ids, id)
	}
	w.last[id] = r
}

// add applies a write of put and del after the ones w holds: del first,
// then put, as one transaction would.
func (w *memoryWrite) add(put []memory.Record, del []string) error {
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
	for _, id := range del {
		w.set(id, nil)
	}
	for i, r := range put {
		w.set(r.ID, &memoryRecord{grp: memoryGroup(r.Kind), raw: raws[i]})
	}
	return nil
}

// merge applies o after w.
func (w *memoryWrite) merge(o *memoryWrite) {
	for _, id := range o.ids {
		w.set(id, o.last[id])
	}
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
