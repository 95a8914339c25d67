package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Several neobot instances share one database. What they coordinate
// through it:
//
//   - Claims: a thread's turns run in the instance holding its claim, a
//     session-level advisory lock. Locks belong to one connection per
//     instance, so an instance that dies (kill -9, a lost machine) loses
//     its claims the moment the server sees its connection close.
//   - Notifications (LISTEN/NOTIFY), sent in the same transaction as the
//     write they announce, so they arrive only once it is committed:
//     a message journaled for a thread another instance runs, a gate
//     decided, memory written.

// Notification channels.
const (
	// ChannelInbound carries a thread key: a message for it was journaled
	// by an instance that does not run the thread.
	ChannelInbound = "neo_inbound"
	// ChannelGate carries a gate token: the gate changed.
	ChannelGate = "neo_gate"
	// ChannelMemory carries "<instance> <id>,<id>…" or "<instance> *":
	// memory records changed.
	ChannelMemory = "neo_memory"
	// ChannelWeb carries "<instance> <note>": what one instance's web
	// chat shows, for the others (RelayWeb).
	ChannelWeb = "neo_web"
)

// Instance returns this store's instance ID: random per Open, it tells
// an instance's own notifications from the others'.
func (db *DB) Instance() string { return db.instance }

func newInstanceID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Hand tells the instances that a message for thread was journaled here
// while another instance runs it; the one running it picks it up.
func (db *DB) Hand(ctx context.Context, thread string) error {
	if _, err := db.pool.Exec(ctx, "SELECT pg_notify($1, $2)", ChannelInbound, thread); err != nil {
		return fmt.Errorf("postgres: hand %s over: %w", thread, err)
	}
	return nil
}

// RelayWeb tells the other instances' web chats what this one shows:
// note is the web adapter's (web.Relay), and must stay under the 8,000
// bytes PostgreSQL allows a notification.
func (db *DB) RelayWeb(ctx context.Context, note []byte) error {
	if _, err := db.pool.Exec(ctx, "SELECT pg_notify($1, $2)", ChannelWeb, db.instance+" "+string(note)); err != nil {
		return fmt.Errorf("postgres: relay to the other instances' web: %w", err)
	}
	return nil
}

// Orphans returns the threads with pending messages that no instance
// claims: those of an instance that died, or handed over as their owner
// let go. At most limit are returned.
func (db *DB) Orphans(ctx context.Context, limit int) ([]string, error) {
	rows, err := db.pool.Query(ctx, `
		SELECT DISTINCT i.thread FROM neo_inbound i
		WHERE i.pending IS NOT NULL AND NOT EXISTS (
			SELECT 1 FROM pg_locks l
			WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
				AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
				AND ((l.classid::int8 << 32) | l.objid::int8) = hashtextextended(i.thread, 7))
		LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: find unclaimed threads: %w", err)
	}
	threads, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: find unclaimed threads: %w", err)
	}
	return threads, nil
}

// Listening is closed once a Listen has subscribed to channel: from then
// on this instance hears what the others announce on it. Each channel has
// its own: another Listen, on other channels, subscribing first says
// nothing of this one.
func (db *DB) Listening(channel string) <-chan struct{} { return db.subscription(channel).c }

// subscribed is closed once a Listen subscribed to its channel.
type subscribed struct {
	c    chan struct{}
	once sync.Once
}

func (db *DB) subscription(channel string) *subscribed {
	db.listenMu.Lock()
	defer db.listenMu.Unlock()
	s := db.listening[channel]
	if s == nil {
		s = &subscribed{c: make(chan struct{})}
		db.listening[channel] = s
	}
	return s
}

// Listen delivers the notifications of channels to fn, from one
// connection, until ctx ends; it returns ctx's error. When the connection
// breaks it reconnects (waiting at most retry between attempts) and calls
// fn with an empty channel first: notifications may have been missed,
// and fn should look at the store again.
func (db *DB) Listen(ctx context.Context, retry time.Duration, fn func(channel, payload string), channels ...string) error {
	for first := true; ; first = false {
		err := db.listen(ctx, fn, !first, channels)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		db.log.Warn().Err(err).Str("database", db.name).Msg("postgres: notifications lost; listening again")
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(retry):
		}
	}
}

func (db *DB) listen(ctx context.Context, fn func(channel, payload string), resync bool, channels []string) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// The session's LISTENs must not outlive this loop in the pool.
	defer endSession(conn)
	for _, ch := range channels {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return err
		}
	}
	for _, ch := range channels {
		s := db.subscription(ch)
		s.once.Do(func() { close(s.c) })
	}
	if resync {
		fn("", "")
	}
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			return err
		}
		fn(n.Channel, n.Payload)
	}
}

// maxNotify is the longest notification payload sent: PostgreSQL stops
// at 8,000 bytes.
const maxNotify = 7900

// memoryNote is the payload announcing that the memory records ids
// changed here: every record ("*") when they do not fit.
func (db *DB) memoryNote(ids []string) string {
	payload := db.instance + " " + strings.Join(ids, ",")
	if len(payload) > maxNotify {
		payload = db.instance + " *"
	}
	return payload
}
