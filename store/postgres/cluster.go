package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
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

// claimTimeout bounds one statement on the claims connection.
const claimTimeout = 10 * time.Second

// Claims are this instance's claims on threads, held on one dedicated
// connection. It is safe for concurrent use.
type Claims struct {
	pool *pgxpool.Pool
	name string
	// settle waits for this instance's queued marks of answered messages
	// (CompleteInboundLater): a thread let go must not show the next
	// instance a message answered here as pending.
	settle func(context.Context) error

	// Claims and releases asked for while a batch runs go together in
	// the next one: one round trip and one statement for however many
	// threads (a channel's burst of fresh mentions claims a thread each).
	batches coalesced[*claimOp]

	mu   sync.Mutex
	conn *pgxpool.Conn   // nil until the first claim, and after a failure
	held map[string]bool // claimed threads
	// lost collects the claims a broken connection took, until Watch
	// reports them; broke wakes Watch.
	lost  []string
	broke chan struct{}
}

// Claims returns the instance's claims. Close them before the store.
func (db *DB) Claims() *Claims {
	c := &Claims{pool: db.pool, name: db.name, settle: db.completes.flush, held: map[string]bool{}, broke: make(chan struct{}, 1)}
	c.batches.run, c.batches.idle = c.run, c.dropSnapshot
	return c
}

// claimPing bounds the statement Watch checks the claims connection with.
const claimPing = 2 * time.Second

// Watch checks the claims connection every interval until ctx ends, and
// calls lost with the claims it held whenever it broke: found by Watch
// or by a Claim or Release. The server has released them by then, or
// soon will, and another instance may take them: the caller stops
// whatever it runs under them. An instance that never watches learns of
// a break only at its next claim.
func (c *Claims) Watch(ctx context.Context, interval time.Duration, lost func(claims []string)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.ping(ctx)
		case <-c.broke:
		}
		c.mu.Lock()
		gone := c.lost
		c.lost = nil
		c.mu.Unlock()
		if len(gone) > 0 {
			lost(gone)
		}
	}
}

// ping runs a trivial statement on the claims connection, if one is
// open, to find out whether it still holds the claims.
func (c *Claims) ping(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		return
	}
	// Not cut short by ctx: a cancelled statement costs pgx its
	// connection, and would give up every claim at shutdown.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimPing)
	defer cancel()
	if _, err := c.conn.Exec(ctx, "SELECT 1"); err != nil {
		_ = c.brokenLocked(err)
	}
}

// ErrClaimsLost reports that the connection holding the claims broke:
// the server released every claim, and other instances may run those
// threads now.
var ErrClaimsLost = errors.New("postgres: the connection holding thread claims broke; its claims are gone")

// Claim makes this instance the one that runs thread's turns: true when
// it was free (or already held here), false when another instance holds
// it.
func (c *Claims) Claim(ctx context.Context, thread string) (bool, error) {
	c.mu.Lock()
	held := c.held[thread]
	c.mu.Unlock()
	if held {
		return true, nil
	}
	op := c.do(thread, false)
	return op.ok, op.err
}

// Release gives a claimed thread up, once the marks of the messages
// answered here are committed; releasing one not held is a no-op.
func (c *Claims) Release(ctx context.Context, thread string) error {
	c.settleMarks(ctx)
	return c.do(thread, true).err
}

// claimOp is a claim or a release waiting for its batch.
type claimOp struct {
	thread  string
	release bool
	ok      bool // a claim's result
	err     error
	done    chan struct{}
}

// do queues a claim or release of thread and waits for its batch. A
// caller's context does not cut it short: a cancelled statement can cost
// pgx its connection, and with it every claim this instance holds.
func (c *Claims) do(thread string, release bool) *claimOp {
	op := &claimOp{thread: thread, release: release, done: make(chan struct{})}
	c.batches.add(op)
	<-op.done
	return op
}

// dropSnapshot ends the claims session's last statement. A statement
// over the extended protocol (prepared once, planned once) leaves its
// portal open until the session's next statement, and the portal keeps
// the statement's snapshot: in the transaction the session keeps open
// (claimSession), that snapshot would hold back vacuum for as long as no
// claim came. A statement over the simple protocol drops it.
func (c *Claims) dropSnapshot() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
	defer cancel()
	if _, err := c.conn.Exec(ctx, "SELECT 1"); err != nil {
		_ = c.brokenLocked(err)
	}
}

// describeClaims names a batch in an error: its threads, or their
// number when there are many.
func describeClaims(releases, claims []string) string {
	var parts []string
	for _, op := range []struct {
		verb    string
		threads []string
	}{{"release", releases}, {"claim", claims}} {
		switch n := len(op.threads); {
		case n == 0:
		case n <= 3:
			parts = append(parts, op.verb+" "+strings.Join(op.threads, ", "))
		default:
			parts = append(parts, fmt.Sprintf("%s %d threads", op.verb, n))
		}
	}
	return strings.Join(parts, " and ")
}

// claimBatch releases the threads it is given with true and tries to
// claim those with false, in that order (releases first). A thread's
// advisory lock key is hashtextextended(thread, 7), as Orphans reads it
// back from pg_locks.
const claimBatch = `
	SELECT k, r, CASE WHEN r THEN pg_advisory_unlock(hashtextextended(k, 7))
		ELSE pg_try_advisory_lock(hashtextextended(k, 7)) END
	FROM unnest($1::text[], $2::bool[]) AS u(k, r)`

// run sends one batch: the releases first, then the claims, each thread
// once (a session-level advisory lock taken twice would need two
// releases).
func (c *Claims) run(ops []*claimOp) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var releases, claims []string
	asked := map[string]bool{}
	for _, op := range ops {
		switch {
		case op.release && c.held[op.thread]:
			delete(c.held, op.thread)
			releases = append(releases, op.thread)
		case !op.release && !c.held[op.thread] && !asked[op.thread]:
			asked[op.thread] = true
			claims = append(claims, op.thread)
		}
	}
	err := c.sendLocked(releases, claims)
	for _, op := range ops {
		switch {
		case err != nil:
			op.err = err
		case !op.release:
			op.ok = c.held[op.thread]
		}
		close(op.done)
	}
}

// sendLocked unlocks releases and tries to lock claims in one round
// trip, marking the claims won as held. Callers hold c.mu.
func (c *Claims) sendLocked(releases, claims []string) error {
	if len(claims) == 0 && (len(releases) == 0 || c.conn == nil) {
		return nil // a release of a claim a broken connection took is done
	}
	ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
	defer cancel()
	conn, err := c.connLocked(ctx)
	if err != nil {
		return err
	}
	keys := append(slices.Clip(releases), claims...)
	release := make([]bool, len(keys))
	for i := range releases {
		release[i] = true
	}
	rows, err := conn.Query(ctx, claimBatch, keys, release)
	if err == nil {
		var (
			thread    string
			isRelease bool
			ok        bool
		)
		_, err = pgx.ForEachRow(rows, []any{&thread, &isRelease, &ok}, func() error {
			if ok && !isRelease {
				c.held[thread] = true
			}
			return nil
		})
	}
	if err != nil {
		return c.brokenLocked(fmt.Errorf("postgres: %s: %w", describeClaims(releases, claims), err))
	}
	return nil
}

// settleMarks waits, at most claimTimeout, for the marks of the messages
// answered here. One that fails is logged by its writer, and its
// message resumes where the thread runs next, finding itself answered.
func (c *Claims) settleMarks(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	defer cancel()
	_ = c.settle(ctx)
}

// endSession ends conn's session and gives it back to the pool, which
// drops it: the server is told within claimTimeout (pgx's Close writes a
// Terminate message, which an unanswering server could hold without a
// deadline), and the connection is closed in any case.
func endSession(conn *pgxpool.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
	defer cancel()
	_ = conn.Conn().Close(ctx)
	conn.Release()
}

// Held returns how many threads are claimed here.
func (c *Claims) Held() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.held)
}

// Close releases every claim, once the marks of the messages answered
// here are committed.
func (c *Claims) Close() {
	c.settleMarks(context.Background())
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil {
		// Unlocked first, so another instance may claim the threads as
		// soon as Close returns: the server drops a closed session's
		// locks too, but only once it has noticed the session end.
		// Destroying the connection ends the session in any case.
		ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
		_, _ = c.conn.Exec(ctx, "SELECT pg_advisory_unlock_all()")
		cancel()
		endSession(c.conn)
		c.conn = nil
	}
	clear(c.held)
}

func (c *Claims) connLocked(ctx context.Context) (*pgxpool.Conn, error) {
	if c.conn != nil {
		return c.conn, nil
	}
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect to %s for thread claims: %w", c.name, err)
	}
	if _, err := conn.Exec(ctx, claimSession(conn)); err != nil {
		conn.Release()
		return nil, fmt.Errorf("postgres: set up the thread claims connection: %w", err)
	}
	c.conn = conn
	return conn, nil
}

// claimSession is what the claims connection runs first.
//
// Keepalives: a machine that vanishes without closing its connection
// must lose its claims within seconds, not when TCP gives up hours
// later: the server probes this session's peer after 3 s of silence and
// drops it after about 6 s more. (Over a unix socket these do nothing.)
//
// Then a transaction, left open for as long as the session lasts, so
// that no claim or release ends one. PostgreSQL scans every lock a
// session holds at the end of each of its transactions: with a
// transaction a batch, a burst of fresh threads (each claimed, then held
// for the linger) made each claim cost as much as the claims held, and
// this session's backend the busiest of all. The transaction writes
// nothing, and keeps no snapshot once its claims are made (read
// committed, dropSnapshot): it holds back no vacuum
// (TestClaimsHoldBackNothing). The server's timeouts for an idle
// transaction are turned off for this session alone.
func claimSession(conn *pgxpool.Conn) string {
	setup := `SET tcp_keepalives_idle = 3; SET tcp_keepalives_interval = 2; SET tcp_keepalives_count = 3; SET tcp_user_timeout = 9000;
		SET idle_in_transaction_session_timeout = 0; `
	// "15.8 (Debian 15.8-0+deb12u1)", "17.2"
	major, _, _ := strings.Cut(conn.Conn().PgConn().ParameterStatus("server_version"), ".")
	if n, err := strconv.Atoi(major); err == nil && n >= 17 {
		setup += `SET transaction_timeout = 0; ` // new in PostgreSQL 17
	}
	return setup + claimBegin
}

// claimBegin opens the claims session's transaction.
const claimBegin = `BEGIN ISOLATION LEVEL READ COMMITTED`

// brokenLocked handles a failed statement on the claims connection. A
// cancelled context leaves the connection as it was; anything else may
// have lost the session, and with it every claim.
func (c *Claims) brokenLocked(err error) error {
	if c.conn == nil {
		return err
	}
	if !c.conn.Conn().IsClosed() {
		// A statement failed on a live session: the claims hold, but its
		// transaction is aborted until rolled back (which leaves session
		// locks as they are). A session that cannot be set right is
		// ended, and its claims with it, rather than kept holding claims
		// it can neither release nor extend.
		ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
		_, rerr := c.conn.Exec(ctx, "ROLLBACK; "+claimBegin)
		cancel()
		if rerr == nil {
			return err
		}
		closing, cancel := context.WithTimeout(context.Background(), claimTimeout)
		_ = c.conn.Conn().Close(closing)
		cancel()
		err = errors.Join(err, rerr)
	}
	c.conn.Release()
	c.conn = nil
	lost := len(c.held)
	for key := range c.held {
		c.lost = append(c.lost, key)
	}
	clear(c.held)
	if lost == 0 {
		return err
	}
	select {
	case c.broke <- struct{}{}:
	default: // Watch is woken already
	}
	return fmt.Errorf("%w (%d threads): %w", ErrClaimsLost, lost, err)
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
