package main

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/neobot/neobot/adapters/web"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/feedback"
	"github.com/neobot/neobot/core/llm"
	"github.com/neobot/neobot/core/memory"
	acct "github.com/neobot/neobot/core/usage"
	"github.com/neobot/neobot/store"
	"github.com/neobot/neobot/store/postgres"
)

// database is where neobot keeps what it must not lose: the bbolt file of
// NEO_DB_PATH (package store) by default, or PostgreSQL when
// NEO_DATABASE_URL is set (package store/postgres), which several
// instances can share.
type database interface {
	AppendEntries(ctx context.Context, t core.Thread, data ...[]byte) (uint64, error)
	LoadTranscript(ctx context.Context, t core.Thread) (core.Summary, []core.Entry, error)
	Compact(ctx context.Context, t core.Thread, s core.Summary) error
	Archived(ctx context.Context, t core.Thread) ([]core.Entry, error)
	ThreadKnown(ctx context.Context, t core.Thread) (bool, error)
	Threads(ctx context.Context) ([]store.ThreadInfo, error)
	SetThreadTitle(ctx context.Context, t core.Thread, title string) error
	DeleteThread(ctx context.Context, t core.Thread) error

	JournalInbound(ctx context.Context, in core.Inbound) (fresh bool, err error)
	CompleteInbound(ctx context.Context, t core.Thread, eventID string) error
	CompleteInboundLater(t core.Thread, eventID string)
	PendingInbound(ctx context.Context) ([]core.Inbound, error)

	core.GateStore
	PendingGates(ctx context.Context) (int, error)
	GatesSince(ctx context.Context, since time.Time) ([]core.Gate, error)

	SaveDelegation(ctx context.Context, d core.Delegation) error
	DelegationFor(ctx context.Context, t core.Thread, callID string) (core.Delegation, error)
	FinishDelegation(ctx context.Context, t core.Thread, callID string) error
	Delegations(ctx context.Context) ([]core.Delegation, error)

	core.SpendLedger
	core.SpendChain
	core.CallLog

	memory.Store
	acct.Store
	llm.Postures
	feedback.Store

	web.Files

	Sweep(ctx context.Context, now time.Time) (store.SweepStats, error)
	Ping(ctx context.Context) error
	DiskFull() bool
	Close() error
}

var (
	_ database = (*store.DB)(nil)
	_ database = (*postgres.DB)(nil)
)

// dbOptions are the settings both stores take.
type dbOptions struct {
	writers      int
	retention    store.Retention
	observeWrite func(time.Duration, error)
	lockTimeout  time.Duration // bbolt only: how long to wait for the file
}

// openDatabase opens the store cfg names: PostgreSQL with
// NEO_DATABASE_URL, else the bbolt file at NEO_DB_PATH. Errors name the
// setting to fix, and never the URL's password.
func openDatabase(ctx context.Context, cfg *Config, log zerolog.Logger, opts dbOptions) (database, error) {
	if url := cfg.DatabaseURL.Reveal(); url != "" {
		db, err := postgres.Open(ctx, url, postgres.Options{
			MaxConns:     int32(min(max(opts.writers/4, 4), 64)),
			Retention:    opts.retention,
			ObserveWrite: opts.observeWrite,
			Logger:       log,
		})
		if err != nil {
			return nil, fmt.Errorf("NEO_DATABASE_URL (%s): %w", postgres.Describe(url), err)
		}
		return db, nil
	}
	db, err := store.Open(cfg.DBPath, store.Options{
		LockTimeout:  opts.lockTimeout,
		Writers:      opts.writers,
		Retention:    opts.retention,
		ObserveWrite: opts.observeWrite,
		Logger:       log,
	})
	if err != nil {
		return nil, fmt.Errorf("NEO_DB_PATH=%s: %w", cfg.DBPath, err)
	}
	return db, nil
}
