package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// claimTimeout bounds one statement on a claims connection.
const claimTimeout = 10 * time.Second

// claimShards is how many connections hold an instance's claims, each
// the claims of its share of the threads. PostgreSQL scans every lock a
// session holds at the end of each of its transactions: on one
// connection, a burst of fresh threads (each claimed, then held for the
// linger) made every claim cost as much as the claims held, and that
// connection's backend the busiest of all. The pool has these
// connections on top of Options.MaxConns.
const claimShards = 4

// Claims are this instance's claims on threads, session-level advisory
// locks held on claimShards dedicated connections. It is safe for
// concurrent use.
type Claims struct {
	shards [claimShards]*claimShard
	seed   maphash.Seed
	// settle waits for this instance's queued marks of answered messages
	// (CompleteInboundLater): a thread let go must not show the next
	// instance a message answered here as pending.
	settle func(context.Context) error

	// lost collects the claims a broken connection took, until Watch
	// reports them; broke wakes Watch.
	lostMu sync.Mutex
	lost   []string
	broke  chan struct{}
}

// claimShard holds the claims of a share of the threads on one
// connection. Claims and releases asked for while a batch runs wait in
// queue and go together in the next one: one round trip for however many
// threads.
type claimShard struct {
	pool  *pgxpool.Pool
	name  string
	owner *Claims

	qmu     sync.Mutex
	queue   []*claimOp
	sending bool // a goroutine sends the queue

	mu   sync.Mutex
	conn *pgxpool.Conn   // nil until the first claim, and after a failure
	held map[string]bool // claimed threads
}

// Claims returns the instance's claims. Close them before the store.
func (db *DB) Claims() *Claims {
	c := &Claims{seed: maphash.MakeSeed(), settle: db.completes.flush, broke: make(chan struct{}, 1)}
	for i := range c.shards {
		c.shards[i] = &claimShard{pool: db.pool, name: db.name, owner: c, held: map[string]bool{}}
	}
	return c
}

func (c *Claims) shard(thread string) *claimShard {
	return c.shards[maphash.String(c.seed, thread)%claimShards]
}

// claimPing bounds the statement Watch checks a claims connection with.
const claimPing = 2 * time.Second

// Watch checks the claims connections every interval until ctx ends, and
// calls lost with the claims one held whenever it broke: found by Watch
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
			for _, s := range c.shards {
				s.ping(ctx)
			}
		case <-c.broke:
		}
		c.lostMu.Lock()
		gone := c.lost
		c.lost = nil
		c.lostMu.Unlock()
		if len(gone) > 0 {
			lost(gone)
		}
	}
}

// ping runs a trivial statement on the shard's connection, if one is
// open, to find out whether it still holds its claims.
func (s *claimShard) ping(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return
	}
	// Not cut short by ctx: a cancelled statement costs pgx its
	// connection, and would give up every claim at shutdown.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimPing)
	defer cancel()
	if _, err := s.conn.Exec(ctx, "SELECT 1"); err != nil {
		_ = s.brokenLocked(err)
	}
}

// ErrClaimsLost reports that a connection holding thread claims broke:
// the server released its claims, and other instances may run those
// threads now.
var ErrClaimsLost = errors.New("postgres: a connection holding thread claims broke; its claims are gone")

// Claim makes this instance the one that runs thread's turns: true when
// it was free (or already held here), false when another instance holds
// it.
func (c *Claims) Claim(ctx context.Context, thread string) (bool, error) {
	s := c.shard(thread)
	s.mu.Lock()
	held := s.held[thread]
	s.mu.Unlock()
	if held {
		return true, nil
	}
	op := s.do(thread, false)
	return op.ok, op.err
}

// Release gives a claimed thread up, once the marks of the messages
// answered here are committed; releasing one not held is a no-op.
func (c *Claims) Release(ctx context.Context, thread string) error {
	c.settleMarks(ctx)
	return c.shard(thread).do(thread, true).err
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
// pgx its connection, and with it every claim the connection holds.
func (s *claimShard) do(thread string, release bool) *claimOp {
	op := &claimOp{thread: thread, release: release, done: make(chan struct{})}
	s.qmu.Lock()
	s.queue = append(s.queue, op)
	start := !s.sending
	s.sending = true
	s.qmu.Unlock()
	if start {
		go s.send()
	}
	<-op.done
	return op
}

// send runs the queued claims and releases in batches until none is left.
func (s *claimShard) send() {
	for {
		s.qmu.Lock()
		ops := s.queue
		s.queue = nil
		if len(ops) == 0 {
			s.sending = false
			s.qmu.Unlock()
			return
		}
		s.qmu.Unlock()
		s.run(ops)
		for _, op := range ops {
			close(op.done)
		}
	}
}

// Batch statements: a thread's advisory lock key is
// hashtextextended(thread, 7), as Orphans reads it back from pg_locks.
const (
	releaseClaims = `SELECT pg_advisory_unlock(hashtextextended(k, 7)) FROM unnest($1::text[]) AS k`
	tryClaims     = `SELECT k, pg_try_advisory_lock(hashtextextended(k, 7)) FROM unnest($1::text[]) AS k`
)

// run sends one batch: the releases first, then the claims, each thread
// once (a session-level advisory lock taken twice would need two
// releases).
func (s *claimShard) run(ops []*claimOp) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var releases, claims []string
	for _, op := range ops {
		switch {
		case op.release && s.held[op.thread]:
			delete(s.held, op.thread)
			releases = append(releases, op.thread)
		case !op.release && !s.held[op.thread] && !slices.Contains(claims, op.thread):
			claims = append(claims, op.thread)
		}
	}
	err := s.sendLocked(releases, claims)
	for _, op := range ops {
		switch {
		case err != nil:
			op.err = err
		case !op.release:
			op.ok = s.held[op.thread]
		}
	}
}

// sendLocked unlocks releases and tries to lock claims in one round
// trip, marking the claims won as held. Callers hold s.mu.
func (s *claimShard) sendLocked(releases, claims []string) error {
	if len(claims) == 0 && (len(releases) == 0 || s.conn == nil) {
		return nil // a release of a claim a broken connection took is done
	}
	ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
	defer cancel()
	conn, err := s.connLocked(ctx)
	if err != nil {
		return err
	}
	var b pgx.Batch
	if len(releases) > 0 {
		b.Queue(releaseClaims, releases)
	}
	if len(claims) > 0 {
		b.Queue(tryClaims, claims).Query(func(rows pgx.Rows) error {
			var (
				thread string
				ok     bool
			)
			_, err := pgx.ForEachRow(rows, []any{&thread, &ok}, func() error {
				if ok {
					s.held[thread] = true
				}
				return nil
			})
			return err
		})
	}
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		return s.brokenLocked(fmt.Errorf("postgres: %s: %w", describeClaims(releases, claims), err))
	}
	return nil
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

// settleMarks waits, at most claimTimeout, for the marks of the messages
// answered here. One that fails is logged by its writer, and its
// message resumes where the thread runs next, finding itself answered.
func (c *Claims) settleMarks(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	defer cancel()
	_ = c.settle(ctx)
}

// Held returns how many threads are claimed here.
func (c *Claims) Held() int {
	n := 0
	for _, s := range c.shards {
		s.mu.Lock()
		n += len(s.held)
		s.mu.Unlock()
	}
	return n
}

// Close releases every claim, once the marks of the messages answered
// here are committed.
func (c *Claims) Close() {
	c.settleMarks(context.Background())
	for _, s := range c.shards {
		s.close()
	}
}

func (s *claimShard) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		// Unlocked first, so another instance may claim the threads as
		// soon as Close returns: the server drops a closed session's
		// locks too, but only once it has noticed the session end.
		// Destroying the connection ends the session in any case.
		ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
		_, _ = s.conn.Exec(ctx, "SELECT pg_advisory_unlock_all()")
		cancel()
		endSession(s.conn)
		s.conn = nil
	}
	clear(s.held)
}

func (s *claimShard) connLocked(ctx context.Context) (*pgxpool.Conn, error) {
	if s.conn != nil {
		return s.conn, nil
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect to %s for thread claims: %w", s.name, err)
	}
	// A machine that vanishes without closing its connection must lose
	// its claims within seconds, not when TCP gives up hours later: the
	// server probes this session's peer after 3 s of silence and drops
	// it after about 6 s more. (Over a unix socket these do nothing.)
	if _, err := conn.Exec(ctx, `SET tcp_keepalives_idle = 3; SET tcp_keepalives_interval = 2; SET tcp_keepalives_count = 3; SET tcp_user_timeout = 9000`); err != nil {
		conn.Release()
		return nil, fmt.Errorf("postgres: set keepalives on a thread claims connection: %w", err)
	}
	s.conn = conn
	return conn, nil
}

// brokenLocked handles a failed statement on the shard's connection. A
// cancelled context leaves the connection as it was; anything else may
// have lost the session, and with it every claim it held.
func (s *claimShard) brokenLocked(err error) error {
	if s.conn == nil || !s.conn.Conn().IsClosed() {
		return err
	}
	s.conn.Release()
	s.conn = nil
	lost := len(s.held)
	if lost == 0 {
		return err
	}
	c := s.owner
	c.lostMu.Lock()
	for key := range s.held {
		c.lost = append(c.lost, key)
	}
	c.lostMu.Unlock()
	clear(s.held)
	select {
	case c.broke <- struct{}{}:
	default: // Watch is woken already
	}
	return fmt.Errorf("%w (%d threads): %w", ErrClaimsLost, lost, err)
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
