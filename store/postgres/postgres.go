// Package postgres is neobot's PostgreSQL store: the same persistence
// interfaces as package store, for teams that run several neobot
// instances against one database. It is the only package that imports
// the driver (pgx v5 and its pool).
//
// Every write commits (and so is durable, with the server's default
// synchronous_commit) before the call returns, but three that nobody
// waits for and whose loss a restart makes good: a turn's memory
// write-back (WriteMemoriesLater) and the mark of an answered message
// (CompleteInboundLater), which commit with the next batch of writes,
// and a turn's user message in its transcript (AppendEntriesLater),
// which commits with the thread's next append or within 50 ms.
// Each write is one statement or one transaction; where exactly-once
// matters (the inbound journal, gate tokens) a unique key decides, never
// a read followed by a write.
//
// The schema is created and upgraded by the versioned SQL files embedded
// from migrations/, under an advisory lock so instances starting together
// do not race; a database at a newer version than this build knows is
// refused.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rs/zerolog"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// SchemaError reports a database migrated by a newer neobot: it is
// refused rather than used with an older idea of its tables.
type SchemaError struct {
	Database string
	Found    int
	Want     int
}

// Error says which database, which versions, and what to do.
func (e *SchemaError) Error() string {
	return fmt.Sprintf("postgres: database %s has schema version %d but this neobot understands up to %d; upgrade neobot or point NEO_DATABASE_URL at another database", e.Database, e.Found, e.Want)
}

// Options configures [Open]. The zero value is usable.
type Options struct {
	// MaxConns caps the connection pool (default 16).
	MaxConns int32
	// Retention says what Sweep drops; the same settings as the bbolt
	// store's.
	Retention store.Retention
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logger receives sweep summaries and deferred-write failures (zero
	// value: silent).
	Logger zerolog.Logger
	// ObserveWrite, when set, is told how long each durable write took and
	// whether it failed (for metrics). It must not block.
	ObserveWrite func(took time.Duration, err error)
}

// DB is neobot's PostgreSQL store. It is safe for concurrent use, by
// several processes too.
type DB struct {
	pool     *pgxpool.Pool
	name     string // the database, for messages: host and name, no secrets
	now      func() time.Time
	ret      store.Retention
	log      zerolog.Logger
	observe  func(time.Duration, error)
	full     atomic.Bool
	instance string // random per Open: tells this instance's notifications apart
	// listening holds, by channel, what Listening returns: closed once a
	// Listen subscribed to the channel.
	listenMu  sync.Mutex
	listening map[string]*subscribed
	group     *group
	journals  pendingReads // PendingIn's
	// Writes committed after their call returns: memory write-backs,
	// and answered messages marked done.
	memories  later[memoryWrite]
	completes later[[]completion]
	// Transcript entries appended lazily (AppendEntriesLater), by
	// thread key, and the last entry numbers LoadTranscript read.
	lazyMu  sync.Mutex
	lazy    map[string]*lazyEntries
	numbers map[string]int64
}

// Open connects to the database at url (postgres://…), creates or
// upgrades its schema, and returns the store. A database at a newer
// schema fails with *SchemaError.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: NEO_DATABASE_URL is not a valid connection URL (postgres://user:password@host:5432/dbname): %w", err)
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = 16
	}
	cfg.MaxConns = opts.MaxConns
	if opts.Now == nil {
		opts.Now = time.Now
	}
	db := &DB{name: Describe(url), now: opts.Now, ret: opts.Retention.WithDefaults(), log: opts.Logger, observe: opts.ObserveWrite, instance: newInstanceID(), listening: map[string]*subscribed{},
		lazy: map[string]*lazyEntries{}, numbers: map[string]int64{}}
	db.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect to %s: %w", db.name, err)
	}
	db.group = newGroup(db.pool, max(int(opts.MaxConns)/4, 1))
	db.journals.pool, db.journals.batches.run = db.pool, db.journals.readBatch
	db.memories = later[memoryWrite]{write: db.writeMemories, failed: func(w *memoryWrite, err error) {
		db.log.Error().Err(err).Int("records", len(w.ids)).Msg("postgres: write back memories; they are lost")
	}}
	db.completes = later[[]completion]{write: db.completeAll, failed: func(w *[]completion, err error) {
		db.log.Error().Err(err).Int("messages", len(*w)).Msg("postgres: mark answered messages done; they resume after a restart and find themselves answered")
	}}
	if err := db.migrate(ctx); err != nil {
		db.pool.Close()
		return nil, err
	}
	if err := db.chainUpgrade(ctx); err != nil {
		db.pool.Close()
		return nil, err
	}
	return db, nil
}

// Describe renders a connection URL for messages and logs: its host and
// database, never its user or password.
func Describe(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	host := u.Host
	if h := u.Query().Get("host"); host == "" && h != "" {
		host = h
	}
	return host + u.Path
}

// migrationLock is the advisory lock key held while migrating.
const migrationLock = 0x6e656f626f74 // "neobot"

// SchemaVersion is the newest schema this build knows: the number of
// embedded migrations.
func SchemaVersion() int {
	names, _ := fs.Glob(migrations, "migrations/*.sql")
	return len(names)
}

// migrate applies the embedded migrations the database lacks, in order,
// each in its own transaction, under an advisory lock.
func (db *DB) migrate(ctx context.Context) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: connect to %s: %w", db.name, err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(migrationLock)); err != nil {
		return fmt.Errorf("postgres: lock %s for migration: %w", db.name, err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(migrationLock)) //nolint:errcheck // the session ends the lock anyway
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS neo_schema (version int PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("postgres: create the schema table in %s: %w", db.name, err)
	}
	var found int
	if err := conn.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM neo_schema").Scan(&found); err != nil {
		return fmt.Errorf("postgres: read the schema version of %s: %w", db.name, err)
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	if found > len(names) {
		return &SchemaError{Database: db.name, Found: found, Want: len(names)}
	}
	for i, name := range names[found:] {
		version := found + i + 1
		if n, _ := strconv.Atoi(strings.SplitN(path.Base(name), "_", 2)[0]); n != version {
			return fmt.Errorf("postgres: migration %s is numbered %d, want %d", name, n, version)
		}
		sql, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, string(sql)); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO neo_schema (version) VALUES ($1)", version)
			return err
		})
		if err != nil {
			return fmt.Errorf("postgres: migrate %s to version %d (%s): %w", db.name, version, path.Base(name), err)
		}
		db.log.Info().Int("version", version).Str("database", db.name).Msg("postgres: schema migrated")
	}
	return nil
}

// Close commits the writes still queued (memory write-backs, messages
// marked done), then closes the pool. Calls after Close fail.
func (db *DB) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	// A failure is logged by the writer.
	db.flushAllLazy(ctx)
	_ = db.memories.flush(ctx)
	_ = db.completes.flush(ctx)
	db.pool.Close()
	return nil
}

// DiskFull reports whether the last write failed because the server's
// disk is full.
func (db *DB) DiskFull() bool { return db.full.Load() }

// Ping makes one durable write, for readiness.
func (db *DB) Ping(ctx context.Context) error {
	err := db.write(ctx, func(ctx context.Context) error {
		_, err := db.pool.Exec(ctx, `INSERT INTO neo_meta (key, value) VALUES ('ping', $1)
			ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, db.now().UTC().Format(time.RFC3339))
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: write to %s: %w", db.name, err)
	}
	return nil
}

// write runs one durable write, times it, and marks a full disk.
func (db *DB) write(ctx context.Context, fn func(context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	start := time.Now()
	err := fn(ctx)
	if db.observe != nil {
		db.observe(time.Since(start), err)
	}
	return db.diskFull(err)
}

// batched runs one statement as a durable write, committed together with
// the statements other callers batched meanwhile (see group). key is the
// row the statement locks first (its thread, or its gate): a batch runs
// its statements in key order, so batches lock rows in the same order
// and rarely deadlock.
func (db *DB) batched(ctx context.Context, key string, queue func(*pgx.Batch)) error {
	return db.write(ctx, func(ctx context.Context) error { return db.group.write(ctx, key, queue) })
}

// tx runs fn in a transaction as one durable write; a transaction the
// server aborted to break a deadlock runs again (fn derives everything
// from tx).
func (db *DB) tx(ctx context.Context, fn func(pgx.Tx) error) error {
	return db.write(ctx, func(ctx context.Context) error {
		return retried(func() error { return pgx.BeginFunc(ctx, db.pool, fn) })
	})
}

// retried runs fn again, a few times, while the server aborts it to break
// a deadlock or a serialization conflict: the transaction left nothing
// behind, and the other side has gone on.
func retried(fn func() error) error {
	for attempt := 1; ; attempt++ {
		err := fn()
		var pe *pgconn.PgError
		if attempt == 5 || !errors.As(err, &pe) || pe.Code != "40P01" && pe.Code != "40001" {
			return err
		}
	}
}

// diskFull marks an error that is the server running out of space with
// core.ErrDiskFull, and logs it once per episode.
func (db *DB) diskFull(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "53100" {
		if err == nil && db.full.CompareAndSwap(true, false) {
			db.log.Info().Str("database", db.name).Msg("postgres: writes succeed again; the server has space")
		}
		return err
	}
	if db.full.CompareAndSwap(false, true) {
		db.log.Error().Str("database", db.name).Msg("postgres: the server's disk is full; new messages are refused until space is freed")
	}
	return fmt.Errorf("%w (%s): %w", core.ErrDiskFull, db.name, err)
}

// ns is t as unix nanoseconds; the zero time is the smallest value, so it
// counts as long past.
func ns(t time.Time) int64 {
	if t.IsZero() {
		return math.MinInt64
	}
	return t.UnixNano()
}

// fromNS is the inverse of ns, in UTC.
func fromNS(v int64) time.Time {
	if v == math.MinInt64 {
		return time.Time{}
	}
	return time.Unix(0, v).UTC()
}

// before returns the cut-off for keep as of now: records at or before it
// have expired. ok is false when keep is not positive (kept forever).
func before(now time.Time, keep time.Duration) (cut int64, ok bool) {
	if keep <= 0 {
		return 0, false
	}
	return now.Add(-keep).UnixNano(), true
}
