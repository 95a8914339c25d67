package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/neobot/neobot/core"
	bolt "go.etcd.io/bbolt"
)

// keyTitle is a thread bucket's title, set by its owner (the web's
// rename); absent until then.
var keyTitle = []byte("n")

// MaxTitle bounds a conversation's title, in bytes.
const MaxTitle = 200

// checkTitle refuses a title no page could show in a line.
func checkTitle(title string) error {
	switch {
	case strings.TrimSpace(title) == "":
		return fmt.Errorf("the title is empty; give it a few words")
	case len(title) > MaxTitle:
		return fmt.Errorf("the title is over %d bytes; shorten it", MaxTitle)
	case strings.ContainsAny(title, "\n\r"):
		return fmt.Errorf("the title has a line break; keep it to one line")
	}
	return nil
}

// SetThreadTitle names thread t, which must be stored; Threads reports
// the name. It fails with core.ErrNotFound for a thread not stored.
func (db *DB) SetThreadTitle(ctx context.Context, t core.Thread, title string) error {
	if err := checkTitle(title); err != nil {
		return fmt.Errorf("store: title of %s: %w", t.Key(), err)
	}
	err := db.write(ctx, func(tx *bolt.Tx) error {
		tb := tx.Bucket(bucketThreads).Bucket([]byte(t.Key()))
		if tb == nil {
			return core.ErrNotFound
		}
		return tb.Put(keyTitle, []byte(title))
	})
	if err != nil {
		return fmt.Errorf("store: title of %s: %w", t.Key(), err)
	}
	return nil
}

// DeleteThread removes thread t with everything said in it: its
// transcript, archive, summary and title, and its finished delegations.
// Deleting a thread not stored does nothing.
func (db *DB) DeleteThread(ctx context.Context, t core.Thread) error {
	err := db.write(ctx, func(tx *bolt.Tx) error {
		threads := tx.Bucket(bucketThreads)
		if threads.Bucket([]byte(t.Key())) == nil {
			return nil
		}
		if err := threads.DeleteBucket([]byte(t.Key())); err != nil {
			return err
		}
		if err := deleteThreadFiles(tx, t.Key()); err != nil {
			return err
		}
		return deleteFinished(tx.Bucket(bucketDelegations), delegationPrefix(t), func(delegationRecord) bool { return true })
	})
	if err != nil {
		return fmt.Errorf("store: delete %s: %w", t.Key(), err)
	}
	return nil
}
