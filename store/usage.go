package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/neobot/neobot/core/usage"
)

// Usage lives in usage/<day>\x00<platform>\x00<workspace>\x00<channel>\x00
// <user>\x00<thread>\x00<model> as JSON usage.Tokens: one row per day and
// attribution, so the bucket grows with distinct conversations, not calls.

var _ usage.Store = (*DB)(nil)

func usageKey(k usage.Key) []byte {
	return []byte(strings.Join([]string{k.Day, k.Platform, k.Workspace, k.Channel, k.User, k.Thread, k.Model}, "\x00"))
}

func parseUsageKey(b []byte) (usage.Key, bool) {
	f := strings.Split(string(b), "\x00")
	if len(f) != 7 {
		return usage.Key{}, false
	}
	return usage.Key{Day: f[0], Platform: f[1], Workspace: f[2], Channel: f[3], User: f[4], Thread: f[5], Model: f[6]}, true
}

// AddUsage adds each row's tokens to the stored row with its key, in one
// transaction.
func (db *DB) AddUsage(ctx context.Context, rows []usage.Row) error {
	err := db.write(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketUsage)
		for _, r := range rows {
			k := usageKey(r.Key)
			var t usage.Tokens
			if v := b.Get(k); v != nil {
				if err := json.Unmarshal(v, &t); err != nil {
					return fmt.Errorf("decode %q: %w", k, err)
				}
			}
			// Assigned from the stored value, never accumulated across
			// runs of fn: a batched write may run it twice.
			t = usage.Tokens{Calls: t.Calls + r.Calls, Prompt: t.Prompt + r.Prompt, Completion: t.Completion + r.Completion}
			v, err := json.Marshal(t)
			if err != nil {
				return err
			}
			if err := b.Put(k, v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: add usage: %w", err)
	}
	return nil
}

// Usage returns the rows of day since (2006-01-02) and later, in key
// order.
func (db *DB) Usage(ctx context.Context, since string) ([]usage.Row, error) {
	var rows []usage.Row
	err := db.read(ctx, func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketUsage).Cursor()
		for k, v := c.Seek([]byte(since)); k != nil; k, v = c.Next() {
			key, ok := parseUsageKey(k)
			if !ok || bytes.Compare([]byte(key.Day), []byte(since)) < 0 {
				continue
			}
			var t usage.Tokens
			if err := json.Unmarshal(v, &t); err != nil {
				return fmt.Errorf("decode %q: %w", k, err)
			}
			rows = append(rows, usage.Row{Key: key, Tokens: t})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: read usage since %s: %w", since, err)
	}
	return rows, nil
}

// UsageIn returns the tokens used on day under a place: of platform, and
// of workspace and channel unless they are "". It reads only the place's
// rows (the key starts with day, platform, workspace and channel).
func (db *DB) UsageIn(ctx context.Context, day, platform, workspace, channel string) (int64, error) {
	prefix := day + "\x00" + platform + "\x00"
	if workspace != "" {
		prefix += workspace + "\x00"
		if channel != "" {
			prefix += channel + "\x00"
		}
	}
	var n int64
	err := db.read(ctx, func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketUsage).Cursor()
		for k, v := c.Seek([]byte(prefix)); k != nil && bytes.HasPrefix(k, []byte(prefix)); k, v = c.Next() {
			if _, ok := parseUsageKey(k); !ok {
				continue
			}
			var t usage.Tokens
			if err := json.Unmarshal(v, &t); err != nil {
				return fmt.Errorf("decode %q: %w", k, err)
			}
			n += t.Total()
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: read usage of %s on %s: %w", strings.Join([]string{platform, workspace, channel}, "/"), day, err)
	}
	return n, nil
}
