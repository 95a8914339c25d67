package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/memory"
	"github.com/neobot/neobot/core/usage"
	bolt "go.etcd.io/bbolt"
)

// The dump: everything a store holds, record by record, for copying it
// to another store (neobot store copy, from this file to PostgreSQL).

// ThreadDump is one conversation, whole.
type ThreadDump struct {
	// Key is the thread's stored key, kept as is even when this version
	// cannot parse it.
	Key    string
	Active time.Time
	// LastSeq is the last entry number handed out; the next append
	// continues after it.
	LastSeq uint64
	// Summary is the consolidated summary's JSON, nil before the first.
	Summary  []byte
	Entries  []core.Entry
	Archived []core.Entry
	// Title is the title its owner gave it (the web's rename), "" for
	// none.
	Title string
}

// InboundDump is one journaled message, pending or completed (a
// completed one is still the event's dedupe key).
type InboundDump struct {
	Inbound   core.Inbound
	Journaled time.Time
	// Completed is zero while the message is pending.
	Completed time.Time
}

// GateNode maps a gate binding (or an old intent/node key) to the token
// of the latest gate opened with it.
type GateNode struct {
	Key   string
	Token string
}

// DelegationDump is one delegation, with when it finished (zero: in
// flight).
type DelegationDump struct {
	Delegation core.Delegation
	Finished   time.Time
}

// Sink receives a dump. Pending messages arrive in journal order.
type Sink interface {
	PutThread(ctx context.Context, t ThreadDump) error
	PutInbound(ctx context.Context, in InboundDump) error
	PutGate(ctx context.Context, g core.Gate) error
	PutGateNode(ctx context.Context, n GateNode) error
	PutDelegation(ctx context.Context, d DelegationDump) error
	WriteMemories(ctx context.Context, put []memory.Record, del []string) error
	AddUsage(ctx context.Context, rows []usage.Row) error
	SaveRating(ctx context.Context, r core.Rating) error
	SaveModelPosture(ctx context.Context, model, endpoint, posture string) error
	// PutMCPToken stores an MCP server's OAuth grant, still sealed: the
	// key that opens it (NEO_SECRET_KEY) goes with the bot, not the copy.
	PutMCPToken(ctx context.Context, key string, sealed []byte) error
	// PutFile stores an upload or a tool's file, with its owner and
	// thread.
	PutFile(ctx context.Context, f core.StoredFile) error
	// PutSlackInstall stores a Slack installation, still sealed, like
	// PutMCPToken.
	PutSlackInstall(ctx context.Context, key string, sealed []byte) error
}

// Counts is how many records of each kind a store holds: what a copy
// checks on both sides.
type Counts struct {
	Threads     int `json:"threads"`
	Entries     int `json:"entries"` // live and archived
	Inbound     int `json:"inbound"`
	Pending     int `json:"pending"`
	Gates       int `json:"gates"`
	GateNodes   int `json:"gate_nodes"`
	Delegations int `json:"delegations"`
	Memories    int `json:"memories"`
	Usage       int `json:"usage"`
	Ratings     int `json:"ratings"`
	Postures    int `json:"postures"`
	MCPTokens   int `json:"mcp_tokens"`
	Files       int `json:"files"`
	// SlackInstalls counts Slack installations and the links of an
	// org-wide one to its workspaces.
	SlackInstalls int `json:"slack_installs"`
}

// Export writes everything the store holds to sink, from one read
// transaction (one consistent snapshot), and returns what it wrote.
func (db *DB) Export(ctx context.Context, sink Sink) (Counts, error) {
	var n Counts
	err := db.read(ctx, func(tx *bolt.Tx) error {
		steps := []func(*bolt.Tx) error{
			func(tx *bolt.Tx) error { return exportThreads(ctx, tx, sink, &n) },
			func(tx *bolt.Tx) error { return exportInbound(ctx, tx, sink, &n) },
			func(tx *bolt.Tx) error { return exportGates(ctx, tx, sink, &n) },
			func(tx *bolt.Tx) error { return exportDelegations(ctx, tx, sink, &n) },
			func(tx *bolt.Tx) error { return exportMemories(ctx, tx, sink, &n) },
			func(tx *bolt.Tx) error { return exportUsage(ctx, tx, sink, &n) },
			func(tx *bolt.Tx) error { return exportRatings(ctx, tx, sink, &n) },
			func(tx *bolt.Tx) error { return exportPostures(ctx, tx, sink, &n) },
			func(tx *bolt.Tx) error {
				return exportSealed(ctx, tx.Bucket(bucketMCPTokens), sink.PutMCPToken, &n.MCPTokens, "mcp token")
			},
			func(tx *bolt.Tx) error {
				return exportSealed(ctx, tx.Bucket(bucketSlackInstalls), sink.PutSlackInstall, &n.SlackInstalls, "slack install")
			},
			func(tx *bolt.Tx) error { return exportFiles(ctx, tx, sink, &n) },
		}
		for _, step := range steps {
			if err := step(tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("store: export %s: %w", db.path, err)
	}
	return n, nil
}

func exportThreads(ctx context.Context, tx *bolt.Tx, sink Sink, n *Counts) error {
	threads := tx.Bucket(bucketThreads)
	return threads.ForEachBucket(func(k []byte) error {
		tb := threads.Bucket(k)
		d := ThreadDump{Key: string(k), Active: time.Unix(0, getI64(tb.Get(keyActive))).UTC(), Summary: bytes.Clone(tb.Get(keySummary)), Title: string(tb.Get(keyTitle))}
		var err error
		if d.Entries, err = readEntries(tb, keyEntries); err != nil {
			return err
		}
		if d.Archived, err = readEntries(tb, keyArchive); err != nil {
			return err
		}
		d.LastSeq = tb.Sequence()
		n.Threads++
		n.Entries += len(d.Entries) + len(d.Archived)
		if err := sink.PutThread(ctx, d); err != nil {
			return fmt.Errorf("thread %s: %w", d.Key, err)
		}
		return nil
	})
}

// exportInbound writes the pending messages in journal order, then the
// completed ones.
func exportInbound(ctx context.Context, tx *bolt.Tx, sink Sink, n *Counts) error {
	inbound := tx.Bucket(bucketInbound)
	put := func(v []byte) error {
		var rec inboundRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("decode inbound: %w", err)
		}
		n.Inbound++
		if rec.Completed.IsZero() {
			n.Pending++
		}
		if err := sink.PutInbound(ctx, InboundDump{Inbound: rec.Inbound, Journaled: rec.Journaled, Completed: rec.Completed}); err != nil {
			return fmt.Errorf("message %s: %w", rec.Inbound.EventID, err)
		}
		return nil
	}
	err := tx.Bucket(bucketPending).ForEach(func(_, key []byte) error {
		if v := inbound.Get(key); v != nil {
			return put(v)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return inbound.ForEach(func(_, v []byte) error {
		var rec struct {
			Completed time.Time `json:"completed,omitzero"`
		}
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("decode inbound: %w", err)
		}
		if rec.Completed.IsZero() {
			return nil // written above, in journal order
		}
		return put(v)
	})
}

func exportGates(ctx context.Context, tx *bolt.Tx, sink Sink, n *Counts) error {
	err := tx.Bucket(bucketGates).ForEach(func(k, v []byte) error {
		g, err := getGate(tx, string(k))
		if err != nil {
			return err
		}
		n.Gates++
		if err := sink.PutGate(ctx, g); err != nil {
			return fmt.Errorf("gate %s: %w", g.Token, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tx.Bucket(bucketGateNodes).ForEach(func(k, v []byte) error {
		n.GateNodes++
		return sink.PutGateNode(ctx, GateNode{Key: string(k), Token: string(v)})
	})
}

func exportDelegations(ctx context.Context, tx *bolt.Tx, sink Sink, n *Counts) error {
	return tx.Bucket(bucketDelegations).ForEach(func(k, v []byte) error {
		var rec delegationRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("decode delegation: %w", err)
		}
		n.Delegations++
		return sink.PutDelegation(ctx, DelegationDump{Delegation: rec.Delegation, Finished: rec.Finished})
	})
}

// exportBatch is how many memory records or usage rows go in one write.
const exportBatch = 500

func exportMemories(ctx context.Context, tx *bolt.Tx, sink Sink, n *Counts) error {
	var batch []memory.Record
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := sink.WriteMemories(ctx, batch, nil)
		batch = batch[:0]
		return err
	}
	for _, name := range memoryBuckets {
		err := tx.Bucket(name).ForEach(func(k, v []byte) error {
			var r memory.Record
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("decode memory %s: %w", k, err)
			}
			n.Memories++
			batch = append(batch, r)
			if len(batch) == exportBatch {
				return flush()
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return flush()
}

func exportUsage(ctx context.Context, tx *bolt.Tx, sink Sink, n *Counts) error {
	var batch []usage.Row
	err := tx.Bucket(bucketUsage).ForEach(func(k, v []byte) error {
		key, ok := parseUsageKey(k)
		if !ok {
			return nil
		}
		var t usage.Tokens
		if err := json.Unmarshal(v, &t); err != nil {
			return fmt.Errorf("decode usage %q: %w", k, err)
		}
		n.Usage++
		batch = append(batch, usage.Row{Key: key, Tokens: t})
		if len(batch) == exportBatch {
			err := sink.AddUsage(ctx, batch)
			batch = batch[:0]
			return err
		}
		return nil
	})
	if err != nil || len(batch) == 0 {
		return err
	}
	return sink.AddUsage(ctx, batch)
}

func exportRatings(ctx context.Context, tx *bolt.Tx, sink Sink, n *Counts) error {
	return tx.Bucket(bucketRatings).ForEach(func(k, v []byte) error {
		var r core.Rating
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("decode rating %q: %w", k, err)
		}
		n.Ratings++
		return sink.SaveRating(ctx, r)
	})
}

func exportPostures(ctx context.Context, tx *bolt.Tx, sink Sink, n *Counts) error {
	return tx.Bucket(bucketPostures).ForEach(func(k, v []byte) error {
		model, endpoint, ok := strings.Cut(string(k), "\x00")
		if !ok {
			return nil
		}
		n.Postures++
		return sink.SaveModelPosture(ctx, model, endpoint, string(v))
	})
}

// exportSealed copies every sealed value of b to put, as it is, counting
// them in n.
func exportSealed(ctx context.Context, b *bolt.Bucket, put func(ctx context.Context, key string, sealed []byte) error, n *int, what string) error {
	return b.ForEach(func(k, v []byte) error {
		*n++
		if err := put(ctx, string(k), bytes.Clone(v)); err != nil {
			return fmt.Errorf("%s %s: %w", what, k, err)
		}
		return nil
	})
}

func exportFiles(ctx context.Context, tx *bolt.Tx, sink Sink, n *Counts) error {
	b := tx.Bucket(bucketFiles)
	if b == nil { // a file from before files were kept
		return nil
	}
	return b.ForEach(func(k, v []byte) error {
		f, err := decodeFile(v, true)
		if err != nil {
			return fmt.Errorf("file %s: %w", k, err)
		}
		n.Files++
		if err := sink.PutFile(ctx, f); err != nil {
			return fmt.Errorf("file %s: %w", k, err)
		}
		return nil
	})
}

// Count returns how many records of each kind the store holds.
func (db *DB) Count(ctx context.Context) (Counts, error) {
	var n Counts
	err := db.read(ctx, func(tx *bolt.Tx) error {
		threads := tx.Bucket(bucketThreads)
		err := threads.ForEachBucket(func(k []byte) error {
			n.Threads++
			tb := threads.Bucket(k)
			n.Entries += countEntries(tb, keyEntries) + countEntries(tb, keyArchive)
			return nil
		})
		if err != nil {
			return err
		}
		n.Inbound = tx.Bucket(bucketInbound).Stats().KeyN
		n.Pending = tx.Bucket(bucketPending).Stats().KeyN
		n.Gates = tx.Bucket(bucketGates).Stats().KeyN
		n.GateNodes = tx.Bucket(bucketGateNodes).Stats().KeyN
		n.Delegations = tx.Bucket(bucketDelegations).Stats().KeyN
		for _, name := range memoryBuckets {
			n.Memories += tx.Bucket(name).Stats().KeyN
		}
		n.Usage = tx.Bucket(bucketUsage).Stats().KeyN
		n.Ratings = tx.Bucket(bucketRatings).Stats().KeyN
		n.Postures = tx.Bucket(bucketPostures).Stats().KeyN
		n.MCPTokens = tx.Bucket(bucketMCPTokens).Stats().KeyN
		if b := tx.Bucket(bucketFiles); b != nil { // nil in a file from before files were kept
			n.Files = b.Stats().KeyN
		}
		n.SlackInstalls = tx.Bucket(bucketSlackInstalls).Stats().KeyN
		return nil
	})
	if err != nil {
		return Counts{}, fmt.Errorf("store: count %s: %w", db.path, err)
	}
	return n, nil
}

// Target is a store a copy writes to.
type Target interface {
	Sink
	Count(ctx context.Context) (Counts, error)
}

// CopyTo copies everything db holds into target, which must be empty, and
// checks that target then holds as many records of each kind as were
// read. It returns the counts read.
func (db *DB) CopyTo(ctx context.Context, target Target) (Counts, error) {
	before, err := target.Count(ctx)
	if err != nil {
		return Counts{}, err
	}
	if before != (Counts{}) {
		return Counts{}, fmt.Errorf("store: copy: the destination is not empty (%d threads, %d messages, %d memories); copy into a new, empty database", before.Threads, before.Inbound, before.Memories)
	}
	read, err := db.Export(ctx, target)
	if err != nil {
		return read, err
	}
	after, err := target.Count(ctx)
	if err != nil {
		return read, err
	}
	if after != read {
		return read, fmt.Errorf("store: copy: read %+v but the destination holds %+v", read, after)
	}
	return read, nil
}
