package main

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/neobot/neobot/adapters/web"
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/conversation"
	"github.com/neobot/neobot/core/memory"
	"github.com/neobot/neobot/store/postgres"
)

// cluster is this instance among the others that share its PostgreSQL
// database: it claims threads for the hub, and turns the database's
// notifications into work here (a message handed over, a gate decided,
// memory written), and adopts the threads of instances that died.
type cluster struct {
	db     *postgres.DB
	claims *postgres.Claims
	log    zerolog.Logger

	mu sync.Mutex
	// shards ends the gateway sessions held under a shard's claim, by
	// the claim's key, when the claim is lost (holdShard).
	shards map[string]context.CancelCauseFunc
}

var _ conversation.Cluster = (*cluster)(nil)

// newCluster returns the cluster of db, or nil when db is not shared.
func newCluster(db database, log zerolog.Logger) *cluster {
	pg, ok := db.(*postgres.DB)
	if !ok {
		return nil
	}
	return &cluster{db: pg, claims: pg.Claims(), log: log, shards: map[string]context.CancelCauseFunc{}}
}

// Claim takes thread's claim for this instance (conversation.Cluster).
func (c *cluster) Claim(ctx context.Context, thread string) (bool, error) {
	return c.claims.Claim(ctx, thread)
}

// Release gives thread's claim up.
func (c *cluster) Release(ctx context.Context, thread string) error {
	return c.claims.Release(ctx, thread)
}

// Relay tells the other instances' web chats what this one's shows
// (web.Relay).
func (c *cluster) Relay(ctx context.Context, note []byte) error { return c.db.RelayWeb(ctx, note) }

// Hand tells the other instances a message for thread waits in the journal.
func (c *cluster) Hand(ctx context.Context, thread string) error { return c.db.Hand(ctx, thread) }

// Pending returns thread's uncompleted messages, in journal order.
func (c *cluster) Pending(ctx context.Context, thread string) ([]core.Inbound, error) {
	return c.db.PendingIn(ctx, thread)
}

// claimLinger is how long an instance keeps an idle thread's claim: a
// conversation that goes on stays on one instance, without claiming it
// again for every turn.
const claimLinger = 2 * time.Second

// claimWatch is how often the claims connection is checked: a broken
// one stops the turns running under its claims within this and a ping's
// timeout, well before another instance can adopt their threads (the
// server needs about 9 s to drop a vanished session, then orphanScan).
const claimWatch = time.Second

// orphanScan is how often the instance looks for threads with pending
// messages that no instance claims (their instance died): a dead
// instance's messages resume within this, plus the few seconds the server
// takes to notice a vanished connection.
const orphanScan = 2 * time.Second

// run serves the cluster until ctx ends: notifications, and the scan for
// orphaned threads. It returns when every goroutine it started is done.
func (c *cluster) run(ctx context.Context, hub *conversation.Hub, gates *core.Gates, cortex *memory.Cortex, webChat *web.Adapter) {
	var wg sync.WaitGroup
	handle := func(fn func(ctx context.Context) error, what string) {
		wg.Go(func() {
			if err := fn(ctx); err != nil && ctx.Err() == nil {
				c.log.Error().Err(err).Msg(what)
			}
		})
	}
	adoptOrphans := func(ctx context.Context) error {
		threads, err := c.db.Orphans(ctx, 500)
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
	wg.Go(func() {
		_ = c.db.Listen(ctx, time.Second, func(channel, payload string) {
			switch channel {
			case "": // reconnected: notifications may be lost
				handle(adoptOrphans, "cluster: adopt orphaned threads")
				handle(func(ctx context.Context) error { return cortex.Changed(ctx) }, "cluster: reload memory")
			case postgres.ChannelInbound:
				handle(func(ctx context.Context) error { return hub.Handed(ctx, payload) }, "cluster: take a handed-over message")
			case postgres.ChannelWeb:
				_, note, _ := strings.Cut(payload, " ")
				if webChat == nil {
					return // no web here
				}
				// This instance's own notes too: every instance shows a
				// conversation's events in the order the database
				// delivers them, under the same IDs. Here, not on a
				// goroutine of its own, to keep that order.
				if err := webChat.Receive(ctx, []byte(note)); err != nil && ctx.Err() == nil {
					c.log.Warn().Err(err).Msg("cluster: show what another instance's web showed")
				}
			case postgres.ChannelGate:
				handle(func(ctx context.Context) error { return gates.Changed(ctx, payload) }, "cluster: wake a turn on a decision")
			case postgres.ChannelMemory:
				from, ids, _ := strings.Cut(payload, " ")
				if from == c.db.Instance() {
					return // written here: the index has it
				}
				var changed []string
				if ids != "*" {
					changed = strings.Split(ids, ",")
				}
				handle(func(ctx context.Context) error { return cortex.Changed(ctx, changed...) }, "cluster: reload changed memory")
			}
		}, postgres.ChannelInbound, postgres.ChannelGate, postgres.ChannelMemory, postgres.ChannelWeb)
	})
	wg.Go(func() {
		c.claims.Watch(ctx, claimWatch, func(lost []string) {
			c.log.Error().Int("claims", len(lost)).Msg("cluster: the database connection holding this instance's claims broke; what ran under them stops here")
			hub.ClaimsLost(lost)
			c.mu.Lock()
			defer c.mu.Unlock()
			for _, key := range lost {
				if stop := c.shards[key]; stop != nil {
					stop(errShardLost)
					delete(c.shards, key)
				}
			}
		})
	})
	wg.Go(func() {
		t := time.NewTicker(orphanScan)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := adoptOrphans(ctx); err != nil && ctx.Err() == nil {
					c.log.Error().Err(err).Msg("cluster: adopt orphaned threads")
				}
			}
		}
	})
	wg.Wait()
}

// errShardLost ends a gateway session whose shard claim this instance
// lost: another instance may open the shard's session now.
var errShardLost = errors.New("this instance lost the claim of its Discord gateway shard (its database connection broke); it stops, so that one instance holds the gateway session")

// holdShard returns a context of ctx that ends, with errShardLost as its
// cause, when this instance loses the claim of shard n, which it holds.
func (c *cluster) holdShard(ctx context.Context, n int) (context.Context, context.CancelFunc) {
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

// shard waits until this instance holds the claim of a Discord gateway
// shard (one gateway session per shard across every instance), then
// reports true; false when ctx ends first. Another instance's claim is
// retried every orphanScan, so a standby takes over when the holder dies.
func (c *cluster) shard(ctx context.Context, n int) bool {
	key := shardKey(n)
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
		case <-time.After(orphanScan):
		}
	}
}
