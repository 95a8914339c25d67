// Package cluster is one neobot instance among the others that share its
// PostgreSQL database. It claims threads for the hub, turns the
// database's notifications into work here (a message handed over, a gate
// decided, memory written, a web event shown elsewhere), adopts the
// threads of instances that died, stops what ran under claims a broken
// connection lost, and holds the Discord gateway's shard so that one
// instance at a time opens its session.
//
// Instances never call each other: everything goes through the database
// (advisory-lock claims on one connection per instance, LISTEN/NOTIFY).
package cluster

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/store/postgres"
)

// DB is what the cluster needs of the shared database.
type DB interface {
	// Instance names this instance in the notifications it sends.
	Instance() string
	// Listen calls fn for every notification on channels until ctx ends,
	// and with channel "" after reconnecting (notifications may have been
	// lost meanwhile).
	Listen(ctx context.Context, retry time.Duration, fn func(channel, payload string), channels ...string) error
	// Listening is closed once a Listen subscribed to channel.
	Listening(channel string) <-chan struct{}
	// Orphans returns up to limit threads with pending messages that no
	// instance claims.
	Orphans(ctx context.Context, limit int) ([]string, error)
	Hand(ctx context.Context, thread string) error
	RelayWeb(ctx context.Context, note []byte) error
	PendingIn(ctx context.Context, thread string) ([]core.Inbound, error)
}

// Claims are this instance's claims, held on one connection.
type Claims interface {
	Claim(ctx context.Context, key string) (bool, error)
	Release(ctx context.Context, key string) error
	// Watch checks the claims' connection every interval until ctx ends,
	// and calls lost with every claim held when it finds it broken.
	Watch(ctx context.Context, interval time.Duration, lost func(claims []string))
	Close()
}

// Hub is the conversation hub the notifications wake (conversation.Hub).
type Hub interface {
	Adopt(ctx context.Context, thread string) error
	Handed(ctx context.Context, thread string) error
	ClaimsLost(threads []string)
}

// Gates wakes a turn waiting on a gate another instance decided
// (core.Gates).
type Gates interface {
	Changed(ctx context.Context, id string) error
}

// Memory reloads records another instance wrote (memory.Cortex); no IDs
// means any may have changed.
type Memory interface {
	Changed(ctx context.Context, ids ...string) error
}

// Web shows what another instance's web chat showed (web.Adapter).
type Web interface {
	Receive(ctx context.Context, note []byte) error
}

// Targets are what Run wakes; Web is nil without a web chat here.
type Targets struct {
	Hub    Hub
	Gates  Gates
	Memory Memory
	Web    Web
}

// Linger is how long an instance keeps an idle thread's claim
// (conversation.Options.Linger): a conversation that goes on stays on one
// instance, without claiming it again for every turn.
const Linger = 2 * time.Second

// Intervals of the cluster's background work; the zero value of each
// field takes its default.
type Intervals struct {
	// ClaimWatch is how often the claims connection is checked: a broken
	// one stops the turns running under its claims within this and a
	// ping's timeout, well before another instance can adopt their
	// threads (the server needs about 9 s to drop a vanished session,
	// then OrphanScan). Default 1 s.
	ClaimWatch time.Duration
	// OrphanScan is how often the instance looks for threads with pending
	// messages that no instance claims (their instance died), and how
	// often a standby tries the Discord shard's claim. Default 2 s.
	OrphanScan time.Duration
	// ListenRetry is the wait before listening again after the
	// notifications connection broke. Default 1 s.
	ListenRetry time.Duration
}

// Cluster is this instance among the others. It satisfies
// conversation.Cluster and web.Relay.
type Cluster struct {
	db     DB
	claims Claims
	every  Intervals
	log    zerolog.Logger

	mu sync.Mutex
	// shards ends the gateway sessions held under a shard's claim, by
	// the claim's key, when the claim is lost (HoldShard).
	shards map[string]context.CancelCauseFunc

	// streamsMu orders OpenStream and its releases; streams are the
	// live-stream claims held here (OpenStream).
	streamsMu sync.Mutex
	streams   map[string]bool
}

// New returns the cluster of db, with claims held on their own
// connection.
func New(db DB, claims Claims, every Intervals, log zerolog.Logger) *Cluster {
	if every.ClaimWatch <= 0 {
		every.ClaimWatch = time.Second
	}
	if every.OrphanScan <= 0 {
		every.OrphanScan = 2 * time.Second
	}
	if every.ListenRetry <= 0 {
		every.ListenRetry = time.Second
	}
	return &Cluster{db: db, claims: claims, every: every, log: log, shards: map[string]context.CancelCauseFunc{}, streams: map[string]bool{}}
}

// Claim takes thread's claim for this instance (conversation.Cluster).
func (c *Cluster) Claim(ctx context.Context, thread string) (bool, error) {
	return c.claims.Claim(ctx, thread)
}

// Release gives thread's claim up.
func (c *Cluster) Release(ctx context.Context, thread string) error {
	return c.claims.Release(ctx, thread)
}

// Relay tells the other instances' web chats what this one's shows
// (web.Relay).
func (c *Cluster) Relay(ctx context.Context, note []byte) error { return c.db.RelayWeb(ctx, note) }

// Hand tells the other instances a message for thread waits in the journal.
func (c *Cluster) Hand(ctx context.Context, thread string) error { return c.db.Hand(ctx, thread) }

// Pending returns thread's uncompleted messages, in journal order.
func (c *Cluster) Pending(ctx context.Context, thread string) ([]core.Inbound, error) {
	return c.db.PendingIn(ctx, thread)
}

// Listening is closed once this instance hears the others'
// notifications: a web chat served from then on misses no conversation
// another instance announces. It waits for the cluster's own listener:
// another of the same database (the places') may subscribe first.
func (c *Cluster) Listening() <-chan struct{} { return c.db.Listening(postgres.ChannelWeb) }

// Close gives every claim up (the claims' connection closes); call it
// before the database closes.
func (c *Cluster) Close() { c.claims.Close() }

// Run serves the cluster until ctx ends: notifications, the claims'
// watch, and the scan for orphaned threads. It returns when every
// goroutine it started is done.
func (c *Cluster) Run(ctx context.Context, to Targets) {
	var wg sync.WaitGroup
	handle := func(fn func(ctx context.Context) error, what string) {
		wg.Go(func() {
			if err := fn(ctx); err != nil && ctx.Err() == nil {
				c.log.Error().Err(err).Msg(what)
			}
		})
	}
	adopt := func(ctx context.Context) error { return c.adoptOrphans(ctx, to.Hub) }
	wg.Go(func() {
		_ = c.db.Listen(ctx, c.every.ListenRetry, func(channel, payload string) {
			switch channel {
			case "": // reconnected: notifications may be lost
				handle(adopt, "cluster: adopt orphaned threads")
				handle(func(ctx context.Context) error { return to.Memory.Changed(ctx) }, "cluster: reload memory")
			case postgres.ChannelInbound:
				handle(func(ctx context.Context) error { return to.Hub.Handed(ctx, payload) }, "cluster: take a handed-over message")
			case postgres.ChannelWeb:
				_, note, _ := strings.Cut(payload, " ")
				if to.Web == nil {
					return // no web here
				}
				// This instance's own notes too: every instance shows a
				// conversation's events in the order the database
				// delivers them, under the same IDs. Here, not on a
				// goroutine of its own, to keep that order.
				if err := to.Web.Receive(ctx, []byte(note)); err != nil && ctx.Err() == nil {
					c.log.Warn().Err(err).Msg("cluster: show what another instance's web showed")
				}
			case postgres.ChannelGate:
				handle(func(ctx context.Context) error { return to.Gates.Changed(ctx, payload) }, "cluster: wake a turn on a decision")
			case postgres.ChannelMemory:
				from, ids, _ := strings.Cut(payload, " ")
				if from == c.db.Instance() {
					return // written here: the index has it
				}
				var changed []string
				if ids != "*" {
					changed = strings.Split(ids, ",")
				}
				handle(func(ctx context.Context) error { return to.Memory.Changed(ctx, changed...) }, "cluster: reload changed memory")
			}
		}, postgres.ChannelInbound, postgres.ChannelGate, postgres.ChannelMemory, postgres.ChannelWeb)
	})
	wg.Go(func() {
		c.claims.Watch(ctx, c.every.ClaimWatch, func(lost []string) {
			c.log.Error().Int("claims", len(lost)).Msg("cluster: the database connection holding this instance's claims broke; what ran under them stops here")
			to.Hub.ClaimsLost(lost)
			c.mu.Lock()
			defer c.mu.Unlock()
			for _, key := range lost {
				if stop := c.shards[key]; stop != nil {
					stop(ErrShardLost)
					delete(c.shards, key)
				}
			}
		})
	})
	wg.Go(func() {
		t := time.NewTicker(c.every.OrphanScan)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := adopt(ctx); err != nil && ctx.Err() == nil {
					c.log.Error().Err(err).Msg("cluster: adopt orphaned threads")
				}
			}
		}
	})
	wg.Wait()
}

// orphanBatch is how many orphaned threads one scan adopts at most.
const orphanBatch = 500

// adoptOrphans gives hub the threads no instance claims.
func (c *Cluster) adoptOrphans(ctx context.Context, hub Hub) error {
	threads, err := c.db.Orphans(ctx, orphanBatch)
	if err != nil {
		return err
	}
	for _, t := range threads {
		if err := hub.Adopt(ctx, t); err != nil {
			return err
		}
	}
	if len(threads) > 0 {
		c.log.Info().Int("threads", len(threads)).Msg("cluster: adopted threads no instance held")
	}
	return nil
}

// ErrShardLost ends a gateway session whose shard claim this instance
// lost: another instance may open the shard's session now.
var ErrShardLost = errors.New("this instance lost the claim of its Discord gateway shard (its database connection broke); it stops, so that one instance holds the gateway session")

// HoldShard returns a context of ctx that ends, with ErrShardLost as its
// cause, when this instance loses the claim of shard n, which it holds.
// Call the returned function when the session ends.
func (c *Cluster) HoldShard(ctx context.Context, n int) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	key := shardKey(n)
	c.mu.Lock()
	c.shards[key] = cancel
	c.mu.Unlock()
	return ctx, func() {
		c.mu.Lock()
		delete(c.shards, key)
		c.mu.Unlock()
		cancel(nil)
	}
}

func shardKey(n int) string { return "discord/shard/" + strconv.Itoa(n) }

// Shard waits until this instance holds the claim of a Discord gateway
// shard (one gateway session per shard across every instance), then
// reports true; false when ctx ends first. Another instance's claim is
// tried again every OrphanScan, so a standby takes over when the holder
// dies.
func (c *Cluster) Shard(ctx context.Context, n int) bool {
	key := shardKey(n)
	t := time.NewTicker(c.every.OrphanScan)
	defer t.Stop()
	for {
		ok, err := c.claims.Claim(ctx, key)
		if err != nil && ctx.Err() == nil {
			c.log.Error().Err(err).Msg("cluster: claim the Discord shard")
		}
		if ok {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
}

// OpenStream takes one of user's max live web event streams for this
// instance (quota.Streams): stream k is the claim "streams/<user>/<k>",
// so a person holds at most max across every instance, and the streams
// of an instance that dies end with its claims' session. ok is false
// when all max are held.
func (c *Cluster) OpenStream(ctx context.Context, user string, max int) (release func(), ok bool, err error) {
	c.streamsMu.Lock()
	defer c.streamsMu.Unlock()
	for k := range max {
		key := "streams/" + user + "/" + strconv.Itoa(k)
		if c.streams[key] {
			continue // a stream of this instance's
		}
		ok, err := c.claims.Claim(ctx, key)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			continue // another instance's
		}
		c.streams[key] = true
		var once sync.Once
		return func() {
			once.Do(func() {
				c.streamsMu.Lock()
				defer c.streamsMu.Unlock()
				delete(c.streams, key)
				if err := c.claims.Release(context.Background(), key); err != nil {
					c.log.Warn().Err(err).Msg("cluster: end a live stream's claim")
				}
			})
		}, true, nil
	}
	return nil, false, nil
}
