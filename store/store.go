// Package store keeps everything neobot must not lose in one bbolt file,
// the default store of a single instance (store/postgres is the other, for
// several): per-thread transcripts with their summary and archive, the
// inbound journal and event-dedupe keys, approval gates, delegations in
// flight, memory records, the spend ledger, usage and OAuth grants. It
// implements the persistence interfaces the core packages declare; bbolt
// is the source of truth and anything derived from it (the memory index) is
// rebuilt from it.
//
// A durable write is fsynced before the call returns; concurrent writers
// share one commit (group), so the cost of an fsync is shared by everyone
// waiting on it. A few writes are held instead and ride along with the next
// durable commit, within a bound (the user's entry of a turn, the journal's
// completion mark, memory write-backs): docs/architecture.md, "One message",
// says which and why losing them to a crash loses nothing.
package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/neobot/neobot/core"
)

// SchemaVersion is the layout version this build writes. A file stamped
// with a newer version is refused, never rewritten; an older one is
// upgraded when opened, in one transaction.
const SchemaVersion = 3

// Bucket names. Each concern has its own top-level bucket.
var (
	bucketMeta        = []byte("meta")
	bucketThreads     = []byte("threads")
	bucketInbound     = []byte("inbound")
	bucketPending     = []byte("inbound_pending")
	bucketGates       = []byte("gates")
	bucketGateNodes   = []byte("gate_nodes")
	bucketDelegations = []byte("delegations")
	bucketMemories    = []byte("memories")
	bucketProfiles    = []byte("profiles")
	bucketPatterns    = []byte("patterns")
	bucketUsage       = []byte("usage")
	bucketSpends      = []byte("spends")
	bucketSpendDays   = []byte("spend_days")
	bucketCalls       = []byte("calls")
	bucketSpendChain  = []byte("spend_chain")
	bucketSpendHeads  = []byte("spend_heads")
	bucketPostures    = []byte("model_postures")
	bucketRatings     = []byte("ratings")
	bucketMCPTokens   = []byte("mcp_tokens")
	bucketShares      = []byte("shares")
	bucketFiles       = []byte("files")
	// bucketSlackInstalls holds sealed "Add to Slack" installations.
	bucketSlackInstalls = []byte("slack_installs")
	// bucketPlaces holds every version of every place's settings.
	bucketPlaces = []byte("place_settings")
	// bucketAdminSessions holds the admin page's Slack sign-ins.
	bucketAdminSessions = []byte("admin_sessions")

	keySchema = []byte("schema")
)

var allBuckets = [][]byte{
	bucketMeta, bucketThreads, bucketInbound, bucketPending, bucketGates,
	bucketGateNodes, bucketDelegations, bucketMemories, bucketProfiles, bucketPatterns,
	bucketUsage, bucketSpends, bucketSpendDays, bucketCalls, bucketPostures,
	bucketRatings, bucketMCPTokens, bucketSpendChain, bucketSpendHeads, bucketShares, bucketFiles,
	bucketSlackInstalls, bucketPlaces, bucketAdminSessions,
}

// ErrLocked reports that another process holds the database file.
var ErrLocked = errors.New("store: database file is locked by another process")

// SchemaError reports a file written by a newer neobot: it is refused
// rather than rewritten with an older layout.
type SchemaError struct {
	Path  string
	Found uint64
	Want  uint64
}

// Error says which file, which versions, and what to do.
func (e *SchemaError) Error() string {
	return fmt.Sprintf("store: %s has schema version %d but this neobot understands up to %d; upgrade neobot or point NEO_DB_PATH at another file", e.Path, e.Found, e.Want)
}

// Options configures [Open]. The zero value is usable.
type Options struct {
	// LockTimeout is how long Open waits for another process to release the
	// file before failing with ErrLocked (default 2s). It is never infinite.
	LockTimeout time.Duration
	// Writers is the expected number of concurrent writers (for example the
	// conversation hub's MaxConcurrent): at most this many writes share one
	// transaction (default 64). Writes never wait for company: a write
	// commits at once when no commit is running, and the writes that arrive
	// during a commit share the next one.
	Writers int
	// Retention says what Sweep drops.
	Retention Retention
	// NoSync turns fsync off. Unsafe: a crash can lose acknowledged writes.
	// For throwaway benchmarks only; never the default.
	NoSync bool
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logger receives sweep summaries (zero value: silent).
	Logger zerolog.Logger
	// ObserveWrite, when set, is told how long each durable write took,
	// fsync included, and whether it failed (for metrics). It must not
	// block.
	ObserveWrite func(took time.Duration, err error)
}

// DB is neobot's bbolt store. It is safe for concurrent use.
type DB struct {
	bolt    *bolt.DB
	path    string
	now     func() time.Time
	ret     Retention
	log     zerolog.Logger
	observe func(time.Duration, error)
	group   group
	full    atomic.Bool // the last write failed for want of space

	// numbered holds, per thread key, the last entry number given out by
	// AppendEntriesLater and not yet committed.
	numbering sync.Mutex
	numbered  map[string]uint64
	// coming holds the journal keys of messages JournalInboundLater took
	// and has not committed yet: they are duplicates already.
	journaling sync.Mutex
	coming     map[string]bool
}

// Open opens (creating if needed) the store at path. A file held by another
// process fails after Options.LockTimeout with an error naming the path and
// wrapping ErrLocked; a file from a newer neobot fails with *SchemaError.
func Open(path string, opts Options) (*DB, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = 2 * time.Second
	}
	if opts.Writers <= 0 {
		opts.Writers = 64
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	b, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout:      opts.LockTimeout,
		NoSync:       opts.NoSync,
		FreelistType: bolt.FreelistMapType,
	})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("store: open %s: another process holds it (waited %s; is another neobot running?): %w", path, opts.LockTimeout, ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	db := &DB{bolt: b, path: path, numbered: map[string]uint64{}, coming: map[string]bool{}, now: opts.Now, ret: opts.Retention.WithDefaults(), log: opts.Logger, observe: opts.ObserveWrite,
		group: group{bolt: b, max: opts.Writers, lazyDelay: lazyDelay}}
	db.group.lazyFailed = func(err error) { db.log.Error().Err(db.diskFull(err)).Msg("store: a deferred write failed") }
	if err := db.init(); err != nil {
		_ = b.Close()
		return nil, err
	}
	return db, nil
}

// init checks the schema version and creates missing buckets, in one
// transaction: a refused file is left exactly as it was. A file that needs
// nothing is only read, so a full disk does not stop neobot from starting
// (and refusing new messages in words) instead of failing in a loop.
func (db *DB) init() error {
	ready := false
	_ = db.bolt.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil || binary.BigEndian.Uint64(padded(meta.Get(keySchema))) != SchemaVersion {
			return nil
		}
		for _, name := range allBuckets {
			if tx.Bucket(name) == nil {
				return nil
			}
		}
		ready = true
		return nil
	})
	if ready {
		return nil
	}
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		var found uint64
		if meta := tx.Bucket(bucketMeta); meta != nil {
			if v := meta.Get(keySchema); len(v) == 8 {
				if found = binary.BigEndian.Uint64(v); found > SchemaVersion {
					return &SchemaError{Path: db.path, Found: found, Want: SchemaVersion}
				}
			}
		}
		for _, name := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("create bucket %s: %w", name, err)
			}
		}
		if found == 1 {
			if err := flattenThreads(tx); err != nil {
				return fmt.Errorf("upgrade from schema 1: %w", err)
			}
			db.log.Info().Str("path", db.path).Msg("store: upgraded to schema 2 (threads without nested buckets)")
		}
		if found == 1 || found == 2 {
			n, err := chainSpends(tx)
			if err != nil {
				return fmt.Errorf("upgrade to schema 3: %w", err)
			}
			db.log.Info().Str("path", db.path).Int("spends", n).Msg("store: upgraded to schema 3 (the spend ledger's calls chained)")
		}
		return tx.Bucket(bucketMeta).Put(keySchema, u64(SchemaVersion))
	})
	var se *SchemaError
	if errors.As(err, &se) {
		return se
	}
	if err != nil {
		return fmt.Errorf("store: init %s: %w", db.path, err)
	}
	return nil
}

// packedFill is how full bbolt fills the pages it splits in the buckets
// whose keys mostly arrive in order (threads by time, messages, usage by
// day): with bbolt's default of half, every page of an append-mostly
// bucket stays half empty and the file grows twice as fast as its data.
const packedFill = 0.9

// pack sets packedFill on the append-mostly buckets for tx (bbolt keeps
// the setting per transaction).
func pack(tx *bolt.Tx) {
	for _, name := range [][]byte{bucketThreads, bucketInbound, bucketPending, bucketUsage} {
		if b := tx.Bucket(name); b != nil {
			b.FillPercent = packedFill
		}
	}
}

// Path returns the file the store was opened from.
func (db *DB) Path() string { return db.path }

// lazyDelay is the longest a deferred write (CompleteInboundLater) waits
// for another write to commit with.
const lazyDelay = 50 * time.Millisecond

// Close commits the deferred writes and closes the file. Calls after Close
// fail.
func (db *DB) Close() error {
	if err := db.group.flush(); err != nil {
		db.log.Error().Err(err).Msg("store: commit deferred writes at close")
	}
	if err := db.bolt.Close(); err != nil {
		return fmt.Errorf("store: close %s: %w", db.path, err)
	}
	return nil
}

// write runs fn in a read-write transaction that is fsynced before write
// returns: at once when no other commit is running, else together with
// the writes that arrived meanwhile (see group). fn derives everything
// from tx and assigns, never accumulates, its outputs.
func (db *DB) write(ctx context.Context, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	start := time.Now()
	err := db.group.write(fn)
	if db.observe != nil {
		db.observe(time.Since(start), err)
	}
	return db.diskFull(err)
}

// diskFull marks a write that failed for want of space with
// core.ErrDiskFull and logs it once per episode, not once per write; the
// next successful write ends the episode.
func (db *DB) diskFull(err error) error {
	if !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EDQUOT) {
		if err == nil && db.full.CompareAndSwap(true, false) {
			db.log.Info().Str("path", db.path).Msg("store: writes succeed again; the disk has space")
		}
		return err
	}
	if db.full.CompareAndSwap(false, true) {
		db.log.Error().Str("path", db.path).Msg("store: the disk is full; new messages are refused until space is freed (grow the volume or lower NEO_RETENTION_DAYS)")
	}
	return fmt.Errorf("%w (%s): %w", core.ErrDiskFull, db.path, err)
}

// DiskFull reports whether the last write failed for want of space.
func (db *DB) DiskFull() bool { return db.full.Load() }

// read runs fn in a read-only transaction.
func (db *DB) read(ctx context.Context, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return db.bolt.View(fn)
}

func u64(v uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return b[:]
}

func i64(v int64) []byte { return u64(uint64(v)) }

func getI64(b []byte) int64 {
	if len(b) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}

func getU64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// Ping makes one durable write, for readiness: it fails when the file
// cannot be written (a full disk, a read-only volume).
func (db *DB) Ping(ctx context.Context) error {
	err := db.write(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put([]byte("ping"), []byte(db.now().UTC().Format(time.RFC3339)))
	})
	if err != nil {
		return fmt.Errorf("store: write to %s: %w", db.path, err)
	}
	return nil
}

// padded returns v when it is 8 bytes long, else 8 zero bytes.
func padded(v []byte) []byte {
	if len(v) != 8 {
		return make([]byte, 8)
	}
	return v
}
